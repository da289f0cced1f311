//! Caps on what one model server may send. A hostile or broken server must end in a clear,
//! bounded error, never in unbounded memory or CPU; each cap is an [`HttpConfig`] field.
//!
//! [`HttpConfig`]: crate::HttpConfig

use agent_core::ProviderError;

/// Default of [`Limits::max_response_bytes`]: 64 MiB. The longest real answers (128k output
/// tokens) stream as one Chat Completions chunk of about 250 bytes per token, about 32 MB;
/// twice that leaves room for reasoning and padding fields. A streamed response is never held
/// whole, so this bounds time and bandwidth more than memory; a non-streamed one is.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;
/// Default of [`Limits::max_error_body_bytes`]: 64 KiB. Real error bodies are a few hundred
/// bytes (Gemini's with details about 1 KiB), a proxy's HTML error page some tens of KiB, and
/// only a short excerpt of it is ever shown.
pub const DEFAULT_MAX_ERROR_BODY_BYTES: usize = 64 * 1024;
/// Default of [`Limits::max_tool_args_bytes`]: 1 MiB, about 250k tokens of JSON: more than
/// any model writes in one answer (128k output tokens at most).
pub const DEFAULT_MAX_TOOL_ARGS_BYTES: usize = 1024 * 1024;
/// Default of [`Limits::max_tool_calls`]: 128, the most tools OpenAI accepts in one request;
/// real answers call a handful at once.
pub const DEFAULT_MAX_TOOL_CALLS: usize = 128;

/// The caps of one response, taken from [`HttpConfig`](crate::HttpConfig)
/// ([`HttpConfig::limits`](crate::HttpConfig::limits)); each has a documented default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most bytes of one response body, streamed or not (an SSE event included).
    pub max_response_bytes: usize,
    /// The most bytes of an error body read; the rest is not read.
    pub max_error_body_bytes: usize,
    /// The most bytes of one tool call's arguments.
    pub max_tool_args_bytes: usize,
    /// The most tool calls in one response.
    pub max_tool_calls: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            max_error_body_bytes: DEFAULT_MAX_ERROR_BODY_BYTES,
            max_tool_args_bytes: DEFAULT_MAX_TOOL_ARGS_BYTES,
            max_tool_calls: DEFAULT_MAX_TOOL_CALLS,
        }
    }
}

impl Limits {
    /// Fails when the arguments of tool call `name` have grown to `len` bytes past the cap.
    pub(crate) fn check_tool_args(&self, name: &str, len: usize) -> Result<(), ProviderError> {
        if len <= self.max_tool_args_bytes {
            return Ok(());
        }
        Err(ProviderError::Malformed(format!(
            "the arguments of tool call `{name}` exceed {} bytes (raise HttpConfig::max_tool_args_bytes \
             to accept them)",
            self.max_tool_args_bytes
        )))
    }

    /// Fails when a response has started `count` tool calls, past the cap.
    pub(crate) fn check_tool_calls(&self, count: usize) -> Result<(), ProviderError> {
        if count <= self.max_tool_calls {
            return Ok(());
        }
        Err(ProviderError::Malformed(format!(
            "the response has more than {} tool calls (raise HttpConfig::max_tool_calls to accept them)",
            self.max_tool_calls
        )))
    }
}

/// The error for a response body (or one SSE event) longer than `max` bytes.
pub(crate) fn response_too_large(max: usize) -> ProviderError {
    ProviderError::Malformed(format!(
        "the response exceeds {max} bytes (raise HttpConfig::max_response_bytes to accept it)"
    ))
}

/// What is appended to the message of an error whose body was cut at `max` bytes.
pub(crate) fn error_body_cut_note(max: usize) -> String {
    format!(" (error body cut at {max} bytes: HttpConfig::max_error_body_bytes)")
}

/// The error for one SSE event (or unfinished line) longer than `max` bytes.
pub(crate) fn event_too_large(max: usize) -> ProviderError {
    ProviderError::Malformed(format!(
        "an event of the response stream exceeds {max} bytes, the response cap (raise \
         HttpConfig::max_response_bytes to accept it)"
    ))
}
