//! Write-time JSON compression of tool results (AgentSphere 3.2.4).
//!
//! Tool results are stored raw and compressed; later turns replay the compressed form so old
//! results stop costing tokens. The rules:
//! - nesting deeper than `max_depth` becomes `"[deep nested]"`;
//! - arrays longer than `max_array_items` keep the first `keep_array_items` as
//!   `{"_count": N, "_showing": K, "items": [...]}`;
//! - strings longer than `max_value_chars` keep the first `head_chars` and last `tail_chars`
//!   characters around `...[+N chars]...`;
//! - numbers, booleans and null pass through.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The limits [`compress_json`] applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CompressionConfig {
    /// Values nested deeper than this become `"[deep nested]"` (the root is depth 0).
    pub max_depth: usize,
    /// Arrays with more items than this are shortened.
    pub max_array_items: usize,
    /// How many items a shortened array keeps.
    pub keep_array_items: usize,
    /// Strings with more characters than this are shortened.
    pub max_value_chars: usize,
    /// Characters kept at the start of a shortened string.
    pub head_chars: usize,
    /// Characters kept at the end of a shortened string.
    pub tail_chars: usize,
}

impl Default for CompressionConfig {
    fn default() -> Self {
        CompressionConfig {
            max_depth: 5,
            max_array_items: 5,
            keep_array_items: 3,
            max_value_chars: 500,
            head_chars: 100,
            tail_chars: 50,
        }
    }
}

/// Compresses a JSON value. Pure: the input is not changed, and the output is always valid JSON.
pub fn compress_json(value: &Value, config: &CompressionConfig) -> Value {
    compress_at(value, 0, config)
}

fn compress_at(value: &Value, depth: usize, config: &CompressionConfig) -> Value {
    if depth > config.max_depth {
        return Value::String("[deep nested]".to_owned());
    }
    match value {
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (k, v) in map {
                out.insert(k.clone(), compress_at(v, depth + 1, config));
            }
            Value::Object(out)
        }
        Value::Array(items) if items.len() <= config.max_array_items => {
            Value::Array(items.iter().map(|v| compress_at(v, depth + 1, config)).collect())
        }
        Value::Array(items) => {
            let kept: Vec<Value> = items
                .iter()
                .take(config.keep_array_items)
                .map(|v| compress_at(v, depth + 1, config))
                .collect();
            let mut out = Map::with_capacity(3);
            out.insert("_count".into(), Value::from(items.len()));
            out.insert("_showing".into(), Value::from(kept.len()));
            out.insert("items".into(), Value::Array(kept));
            Value::Object(out)
        }
        Value::String(text) => Value::String(shorten(text, config)),
        Value::Number(_) | Value::Bool(_) | Value::Null => value.clone(),
    }
}

fn shorten(text: &str, config: &CompressionConfig) -> String {
    // Byte length bounds the character count, so short strings skip the count.
    if text.len() <= config.max_value_chars {
        return text.to_owned();
    }
    let chars = text.chars().count();
    if chars <= config.max_value_chars || chars <= config.head_chars + config.tail_chars {
        return text.to_owned();
    }
    let head_end = text
        .char_indices()
        .nth(config.head_chars)
        .map_or(text.len(), |(i, _)| i);
    let tail_start = if config.tail_chars == 0 {
        text.len()
    } else {
        text.char_indices()
            .rev()
            .nth(config.tail_chars - 1)
            .map_or(0, |(i, _)| i)
    };
    let omitted = chars - config.head_chars - config.tail_chars;
    format!("{}...[+{omitted} chars]...\n{}", &text[..head_end], &text[tail_start..])
}

/// Compresses a JSON value in place, with the same result as [`compress_json`] but without
/// copying what it keeps. Returns whether anything changed.
pub fn compress_json_in_place(value: &mut Value, config: &CompressionConfig) -> bool {
    compress_in_place_at(value, 0, config)
}

fn compress_in_place_at(value: &mut Value, depth: usize, config: &CompressionConfig) -> bool {
    if depth > config.max_depth {
        *value = Value::String("[deep nested]".to_owned());
        return true;
    }
    match value {
        Value::Object(map) => {
            let mut changed = false;
            for v in map.values_mut() {
                changed |= compress_in_place_at(v, depth + 1, config);
            }
            changed
        }
        Value::Array(items) if items.len() <= config.max_array_items => {
            let mut changed = false;
            for v in items.iter_mut() {
                changed |= compress_in_place_at(v, depth + 1, config);
            }
            changed
        }
        Value::Array(items) => {
            let count = items.len();
            let mut kept = std::mem::take(items);
            kept.truncate(config.keep_array_items);
            for v in kept.iter_mut() {
                compress_in_place_at(v, depth + 1, config);
            }
            let mut out = Map::with_capacity(3);
            out.insert("_count".into(), Value::from(count));
            out.insert("_showing".into(), Value::from(kept.len()));
            out.insert("items".into(), Value::Array(kept));
            *value = Value::Object(out);
            true
        }
        Value::String(text) => {
            if text.len() <= config.max_value_chars {
                return false;
            }
            let short = shorten(text, config);
            let changed = short.len() != text.len();
            *text = short;
            changed
        }
        Value::Number(_) | Value::Bool(_) | Value::Null => false,
    }
}

/// Compresses a tool's result text when it is JSON: returns the compressed JSON text, or
/// `None` when the text is not JSON or compression changes nothing.
pub fn compress_text(text: &str, config: &CompressionConfig) -> Option<String> {
    let trimmed = text.trim_start();
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        return None;
    }
    let value: Value = serde_json::from_str(text).ok()?;
    compress_value_text(value, config)
}

/// Compresses a JSON value (consuming it) and returns its text, or `None` when compression
/// changes nothing.
pub fn compress_value_text(mut value: Value, config: &CompressionConfig) -> Option<String> {
    compress_json_in_place(&mut value, config).then(|| value.to_string())
}
