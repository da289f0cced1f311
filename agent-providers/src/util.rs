//! Small helpers shared by the adapters.

use agent_core::ProviderError;

/// A fresh, unique, non-empty tool-call id for wires that send none (Gemini 2.x, some
/// OpenAI-compatible servers).
pub(crate) fn new_call_id() -> String {
    format!("call_{}", uuid::Uuid::new_v4().simple())
}

/// The error for a response that hit the output-token limit inside a tool call: the call's
/// arguments are incomplete, so it must not run.
pub(crate) fn truncated_call_error(name: &str, id: &str) -> ProviderError {
    ProviderError::Malformed(format!(
        "the model reached its output-token limit in the middle of tool call `{name}` (id {id}); \
         its arguments are incomplete, so it was not run (raise max_output_tokens)"
    ))
}

/// An `f32` setting as JSON without binary noise (`0.2`, not `0.20000000298023224`).
pub(crate) fn json_f32(value: f32) -> serde_json::Value {
    value
        .to_string()
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(serde_json::Value::Null, serde_json::Value::Number)
}
