//! Options objects from JavaScript to the Rust options types, by one mechanical path.
//!
//! Every options type of the workspace deserializes with serde in one format (snake_case keys,
//! durations as milliseconds under `_ms` keys, `api/options.json` lists them). A JS options
//! object crosses napi as an object (a `serde_json::Value`) and becomes the Rust type here:
//!
//! 1. integral numbers become JSON integers (napi hands every number over as a double unless it
//!    fits in 32 bits, and a `u64` option such as `maxSizeBytes` refuses a double);
//! 2. keys are renamed camelCase → snake_case, recursively, except inside free-form maps
//!    ([`FREE_FORM`]: their keys are the user's, such as header names);
//! 3. keys whose value is `null` are dropped: in JS, `null` and `undefined` mean "the default"
//!    (napi already leaves out `undefined` ones), except for the keys where `null` is a value of
//!    its own ([`NULL_IS_A_VALUE`]: `maxToolCalls: null` is "no cap", its default is 12);
//! 4. `serde_json::from_value::<T>()`; its error keeps serde's message with the keys it names in
//!    camelCase (`unknown field `callTimeoutSecs`, expected one of `callTimeoutMs`, ...`), thrown
//!    with the code `invalid_argument`.
//!
//! The conversion is in Rust rather than in the JS layer because the error to rewrite comes from
//! serde, the numbers must be fixed after napi's conversion anyway, and one Rust module serves
//! every entry point (the JS layer passes options through untouched).

use std::collections::HashMap;

use napi::bindgen_prelude::*;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::convert::{camel, integral_numbers, snake};
use crate::error::coded;

/// Keys whose values are free-form maps or user data, copied without renaming their keys:
/// the name/value maps of the options table (`headers`, `env`, `shell_env.set`) and tool-call
/// `arguments` (of scripted steps).
pub const FREE_FORM: &[&str] = &["headers", "env", "set", "arguments"];

/// Keys whose values are maps from the user's names to options: the names are kept, the
/// options inside are renamed (`prices: {"my_model": {cachedInput: 0.1}}`).
pub const KEYED_BY_NAME: &[&str] = &["prices"];

/// Top-level keys of an options type whose `null` is a value of its own rather than "the
/// default": the type takes `null` and its default is something else. Kept as `null` for serde;
/// every other `null` is dropped. A test checks this list against the options table.
pub const NULL_IS_A_VALUE: &[(&str, &str)] = &[("AgentConfig", "max_tool_calls")];

/// The keys of [`NULL_IS_A_VALUE`] for the options type `type_name`.
pub fn null_values(type_name: &str) -> Vec<&'static str> {
    NULL_IS_A_VALUE
        .iter()
        .filter(|(t, _)| *t == type_name)
        .map(|(_, key)| *key)
        .collect()
}

/// Renames keys to snake_case and drops `null` ones, except inside [`FREE_FORM`] values.
pub fn snake_options(value: Value) -> Value {
    snake_options_noting(value, &[], &mut HashMap::new(), &mut Vec::new())
}

/// [`snake_options`], keeping the `null` of the top-level keys `keep_null` and noting each
/// renamed key's JS spelling (by its new name) for messages.
fn snake_options_noting(
    value: Value,
    keep_null: &[&str],
    renamed: &mut HashMap<String, String>,
    duplicates: &mut Vec<String>,
) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (js_key, v) in map {
                let key = snake(&js_key);
                if v.is_null() && !keep_null.contains(&key.as_str()) {
                    continue;
                }
                let v = if FREE_FORM.contains(&key.as_str()) {
                    v
                } else if KEYED_BY_NAME.contains(&key.as_str()) {
                    keyed_by_name(v, renamed, duplicates)
                } else {
                    snake_options_noting(v, &[], renamed, duplicates)
                };
                if out.contains_key(&key) {
                    // Both `maxIterations` and `max_iterations`: say so instead of keeping one.
                    duplicates.push(js_key);
                    continue;
                }
                if key != js_key {
                    renamed.insert(key.clone(), js_key);
                }
                out.insert(key, v);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|v| snake_options_noting(v, &[], renamed, duplicates))
                .collect(),
        ),
        other => other,
    }
}

/// A map of [`KEYED_BY_NAME`]: its names kept, the options under them renamed.
fn keyed_by_name(value: Value, renamed: &mut HashMap<String, String>, duplicates: &mut Vec<String>) -> Value {
    match value {
        Value::Object(named) => Value::Object(
            named
                .into_iter()
                .map(|(name, options)| (name, snake_options_noting(options, &[], renamed, duplicates)))
                .collect(),
        ),
        other => snake_options_noting(other, &[], renamed, duplicates),
    }
}

/// A serde (or options-type) error message with the option names it quotes in camelCase.
///
/// serde quotes names in backticks: ``unknown field `call_timeout_s`, expected one of `kind`,
/// `call_timeout_ms` ``, ``missing field `model` ``. Messages about values (``unknown variant
/// `end_turm`, expected `end_turn` or `tell_model` ``) are left alone: enum values keep their
/// snake_case spelling in JS too.
pub fn camel_message(message: &str) -> String {
    camel_message_with(message, &HashMap::new())
}

/// [`camel_message`], quoting a key the user wrote as they wrote it (`renamed`: JS spelling by
/// snake_case name), and any other in camelCase.
fn camel_message_with(message: &str, renamed: &HashMap<String, String>) -> String {
    if message.contains("unknown variant") {
        return message.to_owned();
    }
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..=start]);
        rest = &rest[start + 1..];
        let Some(end) = rest.find('`') else { break };
        let quoted = &rest[..end];
        let is_key = quoted.starts_with(|c: char| c.is_ascii_lowercase())
            && quoted.contains('_')
            && quoted
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if let Some(js) = renamed.get(quoted) {
            out.push_str(js);
        } else if is_key {
            out.push_str(&camel(quoted));
        } else {
            out.push_str(quoted);
        }
        out.push('`');
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The error thrown for an options object that does not fit: code `invalid_argument`, `what`
/// (the JS name of the options) and the message with camelCase keys.
pub fn invalid(what: &str, message: impl std::fmt::Display) -> Error {
    coded(
        "invalid_argument",
        format!("{what}: {}", camel_message(&message.to_string())),
    )
}

/// A JS options object (already a JSON value) as the Rust options type `T`.
pub fn parse<T: DeserializeOwned>(what: &str, value: Value) -> Result<T> {
    parse_with(what, value, |v| serde_json::from_value(v))
}

/// [`parse`] of the options type `type_name` of the options table, whose keys in
/// [`NULL_IS_A_VALUE`] keep their `null` (`AgentConfig`: `maxToolCalls: null` is no cap).
pub fn parse_named<T: DeserializeOwned>(what: &str, type_name: &str, value: Value) -> Result<T> {
    parse_keeping(what, value, &null_values(type_name), |v| serde_json::from_value(v))
}

/// [`parse`] with the reading step given (`read` gets the snake_case value), for types read
/// by a function of their own such as `McpServerConfig::from_json`.
pub fn parse_with<T, E: std::fmt::Display>(
    what: &str,
    value: Value,
    read: impl FnOnce(Value) -> std::result::Result<T, E>,
) -> Result<T> {
    parse_keeping(what, value, &[], read)
}

/// [`parse_with`], keeping the `null` of the top-level keys `keep_null`.
fn parse_keeping<T, E: std::fmt::Display>(
    what: &str,
    mut value: Value,
    keep_null: &[&str],
    read: impl FnOnce(Value) -> std::result::Result<T, E>,
) -> Result<T> {
    integral_numbers(&mut value);
    let (mut renamed, mut duplicates) = (HashMap::new(), Vec::new());
    let value = snake_options_noting(value, keep_null, &mut renamed, &mut duplicates);
    if let Some(key) = duplicates.first() {
        return Err(coded(
            "invalid_argument",
            format!("{what}: `{key}` is given twice (in camelCase and in snake_case); give it once"),
        ));
    }
    read(value).map_err(|e| {
        coded(
            "invalid_argument",
            format!("{what}: {}", camel_message_with(&e.to_string(), &renamed)),
        )
    })
}

/// The JSON value of a JS argument, or an `invalid_argument` error naming `what` (a function,
/// a symbol, `NaN` or an `undefined` array item cannot be JSON).
pub fn value_of(what: &str, value: Unknown<'_>) -> Result<Value> {
    Value::from_unknown(value).map_err(|e| coded("invalid_argument", format!("{what}: {}", e.reason)))
}

/// [`parse`] of a JS argument; an absent one (`undefined`, `null`) is `T`'s defaults.
pub fn from_js<T: DeserializeOwned>(what: &str, value: Option<Unknown<'_>>) -> Result<T> {
    let value = match value {
        Some(v) if !matches!(v.get_type()?, ValueType::Undefined | ValueType::Null) => value_of(what, v)?,
        _ => Value::Object(Map::new()),
    };
    parse(what, value)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::collections::BTreeSet;

    use serde_json::json;

    use super::*;

    /// Model names in `prices` are the user's; the price fields under them are options.
    #[test]
    fn prices_keep_their_model_names() {
        let config = json!({"maxRunCostUsd": 1, "prices": {"my_Model": {"input": 1, "cachedInput": 0.5, "output": 2}}});
        let config: agent_core::AgentConfig = parse("config", config).unwrap();
        let price = config.prices.price("my_Model").unwrap();
        assert_eq!(price.cached_input, Some(0.5));
        assert_eq!(config.max_run_cost_usd, Some(1.0));
    }

    #[test]
    fn a_key_given_in_both_casings_is_refused() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Sample {
            max_iterations: u32,
        }
        let err = parse::<Sample>("config", json!({"maxIterations": 5, "max_iterations": 10})).unwrap_err();
        assert!(err.reason.contains("given twice"), "{}", err.reason);
    }

    #[test]
    fn keys_become_snake_case_except_in_free_form_maps_and_nulls_are_dropped() {
        let js = json!({
            "maxIterations": 3,
            "onDenial": "tell_model",
            "temperature": null,
            "compaction": {"maxInputTokens": 1000, "summaryMaxTokens": null},
            "headers": {"X-Api-Key": "k", "someHeader": "v"},
            "shellEnv": {"inheritAll": true, "set": {"myVar": "1", "EMPTY": ""}},
            "toolCalls": [{"name": "t", "arguments": {"camelArg": null, "nested": {"keepMe": 1}}}],
            "then": {"delayMs": 5, "then": "x"},
        });
        assert_eq!(
            snake_options(js),
            json!({
                "max_iterations": 3,
                "on_denial": "tell_model",
                "compaction": {"max_input_tokens": 1000},
                "headers": {"X-Api-Key": "k", "someHeader": "v"},
                "shell_env": {"inherit_all": true, "set": {"myVar": "1", "EMPTY": ""}},
                "tool_calls": [{"name": "t", "arguments": {"camelArg": null, "nested": {"keepMe": 1}}}],
                "then": {"delay_ms": 5, "then": "x"},
            })
        );
    }

    #[test]
    fn integral_doubles_become_integers() {
        let mut v = json!({"a": 1e10, "b": -5e9, "c": 1.5, "d": [2.0, -0.0], "e": 1e300});
        integral_numbers(&mut v);
        assert_eq!(
            v,
            json!({"a": 10_000_000_000u64, "b": -5_000_000_000i64, "c": 1.5, "d": [2, 0], "e": 1e300})
        );
        assert!(v["a"].is_u64() && v["b"].is_i64() && v["e"].is_f64());
    }

    #[test]
    fn errors_name_keys_in_camel_case_but_not_values() {
        let err = parse::<agent_core::AgentConfig>("config", json!({"toolTimeoutSecs": 5})).unwrap_err();
        assert!(
            err.reason
                .starts_with("[invalid_argument] config: unknown field `toolTimeoutSecs`"),
            "{}",
            err.reason
        );
        assert!(err.reason.contains("`toolTimeoutMs`"), "{}", err.reason);
        assert!(!err.reason.contains("tool_timeout_ms"), "{}", err.reason);
        let err = parse::<agent_core::AgentConfig>("config", json!({"onDenial": "tellModel"})).unwrap_err();
        assert!(err.reason.contains("`tell_model`"), "{}", err.reason);
        let err = parse::<agent_core::AgentConfig>("config", json!({"URL": 1})).unwrap_err();
        assert!(err.reason.contains("unknown field `URL`"), "{}", err.reason);
        let err = parse::<agent_providers::ProviderConfig>("provider", json!({"kind": "gemini"})).unwrap_err();
        assert!(err.reason.contains("missing field `model`"), "{}", err.reason);
        assert_eq!(
            camel_message("a `delay_ms` step needs `then`; `unrestricted: true`, floating point `1.5`"),
            "a `delayMs` step needs `then`; `unrestricted: true`, floating point `1.5`"
        );
    }

    #[test]
    fn options_parse_with_every_unit_and_nesting() {
        let c: agent_core::AgentConfig = parse(
            "config",
            json!({"toolTimeoutMs": 1500.5, "compaction": {"ratio": 0.5}, "maxOutputTokens": 100.0}),
        )
        .unwrap();
        assert_eq!(c.tool_timeout, std::time::Duration::from_micros(1_500_500));
        assert_eq!(c.compaction.ratio, 0.5);
        assert_eq!(c.max_output_tokens, Some(100));
        let s: agent_store::SqliteOptions = parse("options", json!({"maxSizeBytes": 1e10})).unwrap();
        assert_eq!(s.max_size_bytes, Some(10_000_000_000));
    }

    #[test]
    fn max_tool_calls_null_is_no_cap_and_absent_is_the_default() {
        let c: agent_core::AgentConfig = parse_named("config", "AgentConfig", json!({"maxToolCalls": null})).unwrap();
        assert_eq!(c.max_tool_calls, None);
        let c: agent_core::AgentConfig = parse_named("config", "AgentConfig", json!({"temperature": null})).unwrap();
        assert_eq!(c.max_tool_calls, Some(agent_core::DEFAULT_MAX_TOOL_CALLS));
        let c: agent_core::AgentConfig = parse_named("config", "AgentConfig", json!({"maxToolCalls": 3})).unwrap();
        assert_eq!(c.max_tool_calls, Some(3));
        // Only at the top level: a nested key of the same name still takes null as its default.
        let h: agent_providers::HttpConfig = parse("http", json!({"maxToolCalls": null})).unwrap();
        assert_eq!(h, agent_providers::HttpConfig::default());
    }

    /// The keys whose `null` is kept are exactly the table's keys that take null and default to
    /// something else.
    #[test]
    fn null_is_a_value_exactly_where_the_table_says_so() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../api/options.json");
        let table: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut found = BTreeSet::new();
        for (type_name, keys) in table.as_object().unwrap() {
            for (key, spec) in keys.as_object().unwrap() {
                let nullable = spec["type"].as_str().unwrap().split('|').any(|t| t == "null");
                let default = spec.get("default").unwrap_or(&Value::Null);
                if nullable && !default.is_null() {
                    found.insert((type_name.clone(), key.clone()));
                }
            }
        }
        let listed: BTreeSet<(String, String)> = NULL_IS_A_VALUE
            .iter()
            .map(|(t, k)| (t.to_string(), k.to_string()))
            .collect();
        assert_eq!(found, listed);
    }

    /// The free-form and keyed-by-name keys are exactly the table's object-typed keys without
    /// nested options (name/value maps, prices by model), plus tool-call `arguments`.
    #[test]
    fn free_form_keys_are_the_tables_maps_plus_arguments() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../api/options.json");
        let table: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut maps = BTreeSet::new();
        for keys in table.as_object().unwrap().values() {
            for (key, spec) in keys.as_object().unwrap() {
                let ty = spec["type"].as_str().unwrap();
                if ty.split('|').any(|t| t == "object") && spec.get("options").is_none() {
                    maps.insert(key.as_str());
                }
            }
        }
        assert_eq!(maps, BTreeSet::from(["env", "headers", "prices", "set"]));
        maps.insert("arguments");
        let listed = FREE_FORM.iter().chain(KEYED_BY_NAME).copied().collect::<BTreeSet<_>>();
        assert_eq!(maps, listed);
    }
}
