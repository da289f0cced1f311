//! The shapes read from the Responses wire: stream events, the response object's head (status,
//! usage, error) and output items, which are read field by field from JSON.

use agent_core::Usage;
use serde::Deserialize;
use serde_json::Value;

use crate::util::Text;

/// One stream event. Only the fields the decoder reads; the rest are skipped.
#[derive(Deserialize)]
pub(super) struct Event<'a> {
    #[serde(rename = "type", borrow)]
    pub(super) kind: Option<Text<'a>>,
    #[serde(borrow)]
    pub(super) delta: Option<Text<'a>>,
    pub(super) output_index: Option<u64>,
    pub(super) summary_index: Option<u64>,
    pub(super) content_index: Option<u64>,
    #[serde(borrow)]
    pub(super) item_id: Option<Text<'a>>,
    #[serde(borrow)]
    pub(super) arguments: Option<Text<'a>>,
    pub(super) item: Option<Value>,
    pub(super) response: Option<Head>,
    /// `error` events: `code` and `message` at the top level, or an `error` object.
    pub(super) code: Option<Value>,
    pub(super) message: Option<Value>,
    pub(super) error: Option<Value>,
}

/// Just the type of an event, for events whose other fields do not have the shapes above.
#[derive(Deserialize)]
pub(super) struct EventKind<'a> {
    #[serde(rename = "type", borrow)]
    pub(super) kind: Option<Text<'a>>,
}

/// What the decoder reads of a response object: how it ended, its usage and its error.
#[derive(Deserialize, Default)]
pub(super) struct Head {
    pub(super) status: Option<String>,
    pub(super) usage: Option<WireUsage>,
    pub(super) error: Option<Value>,
    pub(super) incomplete_details: Option<Incomplete>,
}

#[derive(Deserialize)]
pub(super) struct Incomplete {
    pub(super) reason: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    input_tokens_details: Option<InputDetails>,
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Deserialize)]
struct InputDetails {
    cached_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct OutputDetails {
    reasoning_tokens: Option<u64>,
}

impl WireUsage {
    pub(super) fn to_usage(&self) -> Usage {
        Usage {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cached_input_tokens: self
                .input_tokens_details
                .as_ref()
                .and_then(|d| d.cached_tokens)
                .unwrap_or(0),
            // OpenAI caches on its own and reports no cache writes.
            cache_write_tokens: 0,
            reasoning_tokens: self
                .output_tokens_details
                .as_ref()
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or(0),
        }
    }
}

/// A string field of an output item, when it is a non-empty string.
pub(super) fn str_field<'v>(item: &'v Value, key: &str) -> Option<&'v str> {
    item.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// The `type` of an output item (empty when missing).
pub(super) fn item_type(item: &Value) -> &str {
    item.get("type").and_then(Value::as_str).unwrap_or_default()
}

/// The texts of an item's array field `key` whose parts have type `part` (`output_text` of a
/// message, `summary_text` of a reasoning summary, `refusal`), with the field holding each.
pub(super) fn part_texts<'v>(item: &'v Value, key: &str, part: &'static str, field: &'static str) -> Vec<&'v str> {
    item.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|p| item_type(p) == part)
        .filter_map(|p| p.get(field).and_then(Value::as_str))
        .collect()
}
