//! Errors reported inside a 200 response (`response.failed`, `error` events, a failed body),
//! mapped onto the kinds HTTP errors get.

use agent_core::ProviderError;
use serde_json::{Value, json};

use crate::errors::ErrorInfo;

/// The error for an error object `{code, message}` of a failed response or an `error` event.
pub(super) fn error_of(error: Option<&Value>) -> ProviderError {
    let error = match error {
        Some(e @ Value::Object(_)) => e.clone(),
        Some(Value::String(message)) => json!({ "message": message }),
        _ => json!({ "message": "the response failed without an error message" }),
    };
    let info = ErrorInfo::from_value(&json!({ "error": error }));
    let status = status_for(&info.code, &info.kind);
    info.into_stream_error(status)
}

/// The HTTP status an error code stands for: server trouble and codes we do not know are
/// 500 (retryable), rate limits 429, the request's own faults (`invalid_prompt`, image
/// problems, `context_length_exceeded`) 400.
fn status_for(code: &str, kind: &str) -> u16 {
    match code {
        "rate_limit_exceeded" | "insufficient_quota" => 429,
        "" | "server_error" | "internal_error" | "vector_store_timeout" => match kind {
            "invalid_request_error" => 400,
            _ => 500,
        },
        c if c.starts_with("invalid_") || c.contains("image") || c == "context_length_exceeded" => 400,
        _ => 500,
    }
}

/// The error of an `error` event: its `error` object, or its top-level `code` and `message`.
pub(super) fn event_error(error: Option<Value>, code: Option<Value>, message: Option<Value>) -> ProviderError {
    match error {
        Some(e @ Value::Object(_)) => error_of(Some(&e)),
        _ => error_of(Some(&json!({ "code": code, "message": message }))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_map_to_kinds() {
        let kind = |e: Value| error_of(Some(&e)).kind();
        assert_eq!(kind(json!({"code": "server_error", "message": "m"})), "server");
        assert_eq!(
            kind(json!({"code": "rate_limit_exceeded", "message": "m"})),
            "rate_limited"
        );
        assert_eq!(kind(json!({"code": "invalid_prompt", "message": "m"})), "bad_request");
        assert_eq!(kind(json!({"code": "image_too_large", "message": "m"})), "bad_request");
        assert_eq!(
            kind(json!({"code": "context_length_exceeded", "message": "Your input exceeds the context window"})),
            "context_overflow"
        );
        assert_eq!(
            kind(json!({"type": "invalid_request_error", "message": "m"})),
            "bad_request"
        );
        assert_eq!(error_of(None).kind(), "server");
        assert_eq!(
            event_error(None, Some(json!("server_error")), Some(json!("boom"))).kind(),
            "server"
        );
        assert_eq!(event_error(None, None, Some(json!(42))).kind(), "server");
    }
}
