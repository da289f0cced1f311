//! Rust values to the plain objects JavaScript sees: serde JSON with camelCase keys.
//!
//! Keys are the Rust field names in camelCase; values (event `type`s, statuses) keep their
//! snake_case wire names. User data (tool arguments, questions) is passed through unchanged.

use agent_core::{AgentEvent, Outcome, RunStatus};
use serde_json::{Map, Value};

use crate::error::JsErrorRef;

/// Keys whose values are user data and keep their own keys.
const OPAQUE: &[&str] = &["arguments", "question", "data", "structured", "parameters", "metadata"];

/// `snake_case` to `camelCase`.
pub fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' && !out.is_empty() {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Renames every object key to camelCase, except inside user data.
pub fn camel_keys(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (k, v) in map {
                let v = if OPAQUE.contains(&k.as_str()) { v } else { camel_keys(v) };
                out.insert(camel(&k), v);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(camel_keys).collect()),
        other => other,
    }
}

/// `camelCase` to `snake_case`.
pub fn snake(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Renames every object key to snake_case, except inside user data.
pub fn snake_keys(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (k, v) in map {
                let key = snake(&k);
                let v = if OPAQUE.contains(&key.as_str()) {
                    v
                } else {
                    snake_keys(v)
                };
                out.insert(key, v);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(snake_keys).collect()),
        other => other,
    }
}

/// An outcome as JS sees it; `errorId` names the original JS error of a fatal tool error.
pub fn outcome(outcome: &Outcome) -> Value {
    let mut value = camel_keys(serde_json::to_value(outcome).unwrap_or(Value::Null));
    if let (Some(source), Value::Object(map)) = (&outcome.error_source, &mut value) {
        let error: &(dyn std::error::Error + Send + Sync + 'static) = &***source;
        let js = error.downcast_ref::<JsErrorRef>().map(|r| r.id).or_else(|| {
            // A fatal error may wrap the JS error one level down.
            error
                .source()
                .and_then(|s| s.downcast_ref::<JsErrorRef>().map(|r| r.id))
        });
        if let Some(id) = js {
            map.insert("errorId".into(), Value::from(id));
        }
    }
    value
}

/// An event as JS sees it.
pub fn event(event: &AgentEvent) -> Value {
    let mut value = camel_keys(serde_json::to_value(event).unwrap_or(Value::Null));
    // The outcome inside final events gets its errorId too.
    let outcome_of = match &event.kind {
        agent_core::EventKind::RunCompleted { outcome: o }
        | agent_core::EventKind::RunFailed { outcome: o }
        | agent_core::EventKind::RunCancelled { outcome: o }
        | agent_core::EventKind::RunCapped { outcome: o } => Some(o),
        _ => None,
    };
    if let (Some(o), Value::Object(map)) = (outcome_of, &mut value) {
        map.insert("outcome".into(), outcome(o));
    }
    value
}

/// A status snapshot as JS sees it.
pub fn status(status: &RunStatus) -> Value {
    camel_keys(serde_json::to_value(status).unwrap_or(Value::Null))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn camel_cases_keys_but_not_user_data() {
        let v = serde_json::json!({"call_id": "c", "arguments": {"snake_key": 1}, "usage": {"input_tokens": 2}});
        let out = camel_keys(v);
        assert_eq!(
            out,
            serde_json::json!({"callId": "c", "arguments": {"snake_key": 1}, "usage": {"inputTokens": 2}})
        );
        assert_eq!(camel("type"), "type");
        assert_eq!(camel("final_text"), "finalText");
    }
}
