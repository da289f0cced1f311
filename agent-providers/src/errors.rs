//! Mapping of HTTP statuses and error bodies to [`ProviderError`] kinds.

use std::time::{Duration, SystemTime};

use agent_core::ProviderError;
use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::sse::excerpt;

/// Phrases that mean "the request does not fit the context window", lowercase.
const OVERFLOW_MARKERS: &[&str] = &[
    "context_length_exceeded",
    "context length",
    "context window",
    "prompt is too long",
    "maximum context",
    "input tokens exceed",
    "too many tokens",
    "exceeds the maximum number of tokens",
    "input token count",
    "reduce the length of the messages",
];

/// What an error body says, whatever the provider's envelope.
#[derive(Debug, Default)]
pub(crate) struct ErrorInfo {
    /// The human message.
    pub message: String,
    /// `error.type` (OpenAI, Anthropic) or `error.status` (Gemini).
    pub kind: String,
    /// `error.code` when it is a string.
    pub code: String,
    /// A retry delay found in the body (Gemini `RetryInfo.retryDelay`).
    pub retry_delay: Option<Duration>,
}

impl ErrorInfo {
    /// Reads an error body: `{"error": {...}}` (OpenAI, Gemini), `{"type":"error","error":{...}}`
    /// (Anthropic), `{"error": "text"}` (llama.cpp and others) or anything else (an excerpt).
    pub fn from_body(body: &[u8]) -> ErrorInfo {
        match serde_json::from_slice::<Value>(body) {
            Ok(value) => ErrorInfo::from_value(&value),
            Err(_) => ErrorInfo {
                message: if body.is_empty() {
                    "(empty body)".into()
                } else {
                    excerpt(&String::from_utf8_lossy(body))
                },
                ..ErrorInfo::default()
            },
        }
    }

    /// Reads an error payload already parsed as JSON.
    pub fn from_value(value: &Value) -> ErrorInfo {
        let err = match value.get("error") {
            Some(Value::String(s)) => {
                return ErrorInfo {
                    message: s.clone(),
                    ..ErrorInfo::default()
                };
            }
            Some(e) => e,
            None => value,
        };
        let str_of = |key: &str| err.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let message = match err.get("message") {
            Some(Value::String(s)) => s.clone(),
            _ => excerpt(&value.to_string()),
        };
        let kind = match str_of("type") {
            t if t.is_empty() => str_of("status"),
            t => t,
        };
        let retry_delay = err
            .get("details")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|d| d.get("retryDelay").and_then(Value::as_str))
            .find_map(parse_duration_seconds);
        ErrorInfo {
            message,
            kind,
            code: str_of("code"),
            retry_delay,
        }
    }

    fn is_overflow(&self) -> bool {
        let haystack = format!("{} {} {}", self.code, self.kind, self.message).to_lowercase();
        OVERFLOW_MARKERS.iter().any(|m| haystack.contains(m))
    }

    /// The error for an error payload that arrived inside a 200 stream. `fallback_status` is
    /// used when the payload names no HTTP-like code.
    pub fn into_stream_error(self, fallback_status: u16) -> ProviderError {
        let status = match self.kind.as_str() {
            "overloaded_error" => 529,
            "rate_limit_error" | "RESOURCE_EXHAUSTED" | "tokens" | "requests" => 429,
            "authentication_error" | "UNAUTHENTICATED" => 401,
            "permission_error" | "PERMISSION_DENIED" => 403,
            "invalid_request_error" | "INVALID_ARGUMENT" | "not_found_error" | "request_too_large" => 400,
            "api_error" | "server_error" | "INTERNAL" | "UNAVAILABLE" => 500,
            _ if self.code == "rate_limit_exceeded" => 429,
            _ => fallback_status,
        };
        self.into_error(status, None)
    }

    /// The error for an HTTP status with this body.
    pub fn into_error(self, status: u16, header_retry: Option<Duration>) -> ProviderError {
        if self.is_overflow() && matches!(status, 400 | 413 | 422 | 500) {
            return ProviderError::ContextOverflow(self.message);
        }
        match status {
            401 | 403 => ProviderError::Auth {
                status,
                message: self.message,
            },
            429 if self.code == "insufficient_quota" => {
                ProviderError::BadRequest(format!("insufficient quota: {}", self.message))
            }
            429 => ProviderError::RateLimited {
                retry_after: header_retry.or(self.retry_delay),
                message: self.message,
            },
            408 => ProviderError::Timeout(format!("the provider timed out the request: {}", self.message)),
            500..=599 => ProviderError::Server {
                status,
                message: self.message,
            },
            400 => ProviderError::BadRequest(self.message),
            _ => ProviderError::BadRequest(format!("HTTP {status}: {}", self.message)),
        }
    }
}

/// The error for a non-success HTTP response. `cut_at` is the cap the body was cut at, if it
/// was: the message says so.
pub(crate) fn from_status(status: u16, headers: &HeaderMap, body: &[u8], cut_at: Option<usize>) -> ProviderError {
    let mut info = ErrorInfo::from_body(body);
    if let Some(max) = cut_at {
        info.message.push_str(&crate::limits::error_body_cut_note(max));
    }
    let should_retry = headers
        .get("x-should-retry")
        .and_then(|v| v.to_str().ok())
        .map(|v| v.eq_ignore_ascii_case("true"));
    let err = info.into_error(status, retry_after(headers));
    match (should_retry, err) {
        // The server says a 4xx such as 409 may be retried: treat it like a server error.
        (Some(true), ProviderError::BadRequest(message)) => ProviderError::Server { status, message },
        (_, err) => err,
    }
}

/// The longest retry hint kept from a server. Longer hints, and those too large for a
/// [`Duration`] (`1e300`, `inf`), become this: far past any sane
/// [`HttpConfig::max_retry_after`](crate::HttpConfig::max_retry_after), so the call fails at
/// once rather than waiting, and callers can still add it to an `Instant` without overflow.
pub(crate) const MAX_RETRY_HINT: Duration = Duration::from_secs(24 * 60 * 60);

/// The server's retry hint: `retry-after-ms`, then `retry-after` in seconds or as an HTTP date.
/// Negative and NaN values are ignored; huge ones become [`MAX_RETRY_HINT`].
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .and_then(|ms| hint_from_secs(ms / 1000.0))
    {
        return Some(ms);
    }
    let value = headers.get("retry-after")?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return hint_from_secs(secs);
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO)
            .min(MAX_RETRY_HINT),
    )
}

/// Parses Google's duration strings such as `"58s"` or `"1.5s"`.
fn parse_duration_seconds(text: &str) -> Option<Duration> {
    hint_from_secs(text.trim().strip_suffix('s')?.parse().ok()?)
}

/// A hint of `secs` seconds, at most [`MAX_RETRY_HINT`]; `None` for negative or NaN values.
/// (`Duration::from_secs_f64` panics on values it cannot hold.)
fn hint_from_secs(secs: f64) -> Option<Duration> {
    if secs.is_nan() || secs < 0.0 {
        return None;
    }
    Some(Duration::try_from_secs_f64(secs).map_or(MAX_RETRY_HINT, |d| d.min(MAX_RETRY_HINT)))
}

/// Replaces every occurrence of `secret` in `text` (no-op for short or empty secrets).
pub(crate) fn redact(text: String, secret: &str) -> String {
    if secret.len() < 4 || !text.contains(secret) {
        return text;
    }
    text.replace(secret, "[redacted]")
}

/// [`redact`] applied to every message an error carries.
pub(crate) fn redact_error(err: ProviderError, secret: &str) -> ProviderError {
    if secret.len() < 4 {
        return err;
    }
    let r = |s: String| redact(s, secret);
    match err {
        ProviderError::RateLimited { retry_after, message } => ProviderError::RateLimited {
            retry_after,
            message: r(message),
        },
        ProviderError::Timeout(m) => ProviderError::Timeout(r(m)),
        ProviderError::Transport(m) => ProviderError::Transport(r(m)),
        ProviderError::Server { status, message } => ProviderError::Server {
            status,
            message: r(message),
        },
        ProviderError::Auth { status, message } => ProviderError::Auth {
            status,
            message: r(message),
        },
        ProviderError::BadRequest(m) => ProviderError::BadRequest(r(m)),
        ProviderError::ContextOverflow(m) => ProviderError::ContextOverflow(r(m)),
        ProviderError::Malformed(m) => ProviderError::Malformed(r(m)),
        ProviderError::Config(m) => ProviderError::Config(r(m)),
        ProviderError::Cancelled => ProviderError::Cancelled,
    }
}

/// A JSON parse failure of one event or body, with a short excerpt of what arrived.
pub(crate) fn malformed_json(what: &str, text: &str, err: &serde_json::Error) -> ProviderError {
    ProviderError::Malformed(format!("{what} is not valid JSON ({err}): {}", excerpt(text)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn statuses_map_to_kinds() {
        let h = HeaderMap::new();
        assert_eq!(from_status(401, &h, b"{}", None).kind(), "auth");
        assert_eq!(from_status(403, &h, b"nope", None).kind(), "auth");
        assert_eq!(from_status(500, &h, b"", None).kind(), "server");
        assert_eq!(from_status(529, &h, b"", None).kind(), "server");
        assert_eq!(from_status(408, &h, b"", None).kind(), "timeout");
        let bad = from_status(
            400,
            &h,
            br#"{"error":{"message":"Penalty is not enabled","code":400,"status":"INVALID_ARGUMENT"}}"#,
            None,
        );
        assert_eq!(bad, ProviderError::BadRequest("Penalty is not enabled".into()));
        let quota = from_status(
            429,
            &h,
            br#"{"error":{"message":"m","code":"insufficient_quota"}}"#,
            None,
        );
        assert!(!quota.is_retryable());
    }

    #[test]
    fn retry_after_forms() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
        let mut h = HeaderMap::new();
        h.insert("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
    }

    fn hint(name: &str, value: &str) -> Option<Duration> {
        let mut h = HeaderMap::new();
        h.insert(
            reqwest::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            value.parse().unwrap(),
        );
        retry_after(&h)
    }

    #[test]
    fn hostile_retry_hints_do_not_panic() {
        for huge in ["1e300", "inf", "infinity", "1e400", "18446744073709551616", "1e20"] {
            assert_eq!(hint("retry-after", huge), Some(MAX_RETRY_HINT), "{huge}");
            assert_eq!(hint("retry-after-ms", huge), Some(MAX_RETRY_HINT), "{huge}");
        }
        for ignored in ["-5", "-inf", "NaN", "-1e300", "nope"] {
            assert_eq!(hint("retry-after", ignored), None, "{ignored}");
            assert_eq!(hint("retry-after-ms", ignored), None, "{ignored}");
        }
        assert_eq!(hint("retry-after", "-0"), Some(Duration::ZERO));
        assert_eq!(hint("retry-after", "90000"), Some(MAX_RETRY_HINT));
        assert_eq!(hint("retry-after-ms", "1e-300"), Some(Duration::ZERO));
        assert_eq!(
            hint("retry-after", "Fri, 31 Dec 9999 23:59:59 GMT"),
            Some(MAX_RETRY_HINT)
        );
    }

    #[test]
    fn hostile_retry_delays_in_bodies_do_not_panic() {
        let body = |delay: &str| {
            format!(
                r#"{{"error":{{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED","details":[{{"retryDelay":"{delay}"}}]}}}}"#
            )
        };
        let delay = |text: &str| ErrorInfo::from_body(body(text).as_bytes()).retry_delay;
        assert_eq!(delay("99999999999999999999s"), Some(MAX_RETRY_HINT));
        assert_eq!(delay("1e300s"), Some(MAX_RETRY_HINT));
        assert_eq!(delay("infs"), Some(MAX_RETRY_HINT));
        assert_eq!(delay("NaNs"), None);
        assert_eq!(delay("-5s"), None);
        assert_eq!(delay("1.5s"), Some(Duration::from_millis(1500)));
        let err = from_status(429, &HeaderMap::new(), body("99999999999999999999s").as_bytes(), None);
        assert!(matches!(err, ProviderError::RateLimited { retry_after: Some(d), .. } if d == MAX_RETRY_HINT));
    }

    #[test]
    fn a_cut_error_body_says_so() {
        let err = from_status(500, &HeaderMap::new(), b"<html>", Some(65536));
        assert_eq!(err.kind(), "server");
        assert!(err.to_string().contains("HttpConfig::max_error_body_bytes"), "{err}");
    }

    #[test]
    fn redaction_covers_messages() {
        let err = ProviderError::Auth {
            status: 401,
            message: "Incorrect API key provided: sk-secret-123".into(),
        };
        let shown = redact_error(err, "sk-secret-123").to_string();
        assert!(!shown.contains("sk-secret-123"), "{shown}");
    }
}
