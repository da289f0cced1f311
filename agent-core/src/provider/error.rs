use std::time::Duration;

/// Why a model call failed.
///
/// Messages never contain API keys. Use [`ProviderError::is_retryable`] to decide whether a
/// retry or a fallback route may help. Serialisable, so that a durable executor can record a
/// failed call (see [`crate::steps`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum ProviderError {
    /// HTTP 429 or an equivalent quota error.
    #[error("rate limited by the provider{}: {message}", retry_after.map(|d| format!(" (retry after {} ms)", d.as_millis())).unwrap_or_default())]
    RateLimited {
        /// The server's `Retry-After`, when it sent one.
        retry_after: Option<Duration>,
        /// The provider's message.
        message: String,
    },
    /// A connect, read, stream-idle or whole-call timeout.
    #[error("model call timed out: {0}")]
    Timeout(String),
    /// The connection failed or broke.
    #[error("transport error talking to the provider: {0}")]
    Transport(String),
    /// HTTP 5xx or an overloaded error.
    #[error("provider server error (HTTP {status}): {message}")]
    Server {
        /// The HTTP status (or 529/500 for errors reported inside a stream).
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// HTTP 401/403: the key is missing, wrong or lacks permission. Never retried.
    #[error("authentication failed (HTTP {status}): {message}; check the API key")]
    Auth {
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// HTTP 400 or another request the provider refused.
    #[error("the provider rejected the request: {0}")]
    BadRequest(String),
    /// The request does not fit the model's context window.
    #[error("the request exceeds the model's context window: {0}")]
    ContextOverflow(String),
    /// The response could not be parsed (broken JSON or SSE); carries a short excerpt.
    #[error("malformed response from the provider: {0}")]
    Malformed(String),
    /// The provider is not configured correctly (missing variable, unknown provider, ...).
    #[error("{0}")]
    Config(String),
    /// The call was cancelled by the caller.
    #[error("the model call was cancelled")]
    Cancelled,
}

impl ProviderError {
    /// Whether retrying the same call (or moving to a fallback route) may succeed:
    /// rate limits, timeouts, transport failures and server errors.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ProviderError::RateLimited { .. }
                | ProviderError::Timeout(_)
                | ProviderError::Transport(_)
                | ProviderError::Server { .. }
        )
    }

    /// A short stable name of the error kind, for events and bindings.
    pub fn kind(&self) -> &'static str {
        self.error_kind().as_str()
    }

    /// The error's kind, without its details.
    pub fn error_kind(&self) -> ProviderErrorKind {
        match self {
            ProviderError::RateLimited { .. } => ProviderErrorKind::RateLimited,
            ProviderError::Timeout(_) => ProviderErrorKind::Timeout,
            ProviderError::Transport(_) => ProviderErrorKind::Transport,
            ProviderError::Server { .. } => ProviderErrorKind::Server,
            ProviderError::Auth { .. } => ProviderErrorKind::Auth,
            ProviderError::BadRequest(_) => ProviderErrorKind::BadRequest,
            ProviderError::ContextOverflow(_) => ProviderErrorKind::ContextOverflow,
            ProviderError::Malformed(_) => ProviderErrorKind::Malformed,
            ProviderError::Config(_) => ProviderErrorKind::Config,
            ProviderError::Cancelled => ProviderErrorKind::Cancelled,
        }
    }
}

/// The kind of a [`ProviderError`]; a turn it ends carries it as
/// [`ErrorKind::Provider`](crate::agent::ErrorKind::Provider).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProviderErrorKind {
    /// [`ProviderError::RateLimited`] (`rate_limited`).
    RateLimited,
    /// [`ProviderError::Timeout`] (`timeout`).
    Timeout,
    /// [`ProviderError::Transport`] (`transport`).
    Transport,
    /// [`ProviderError::Server`] (`server`).
    Server,
    /// [`ProviderError::Auth`] (`auth`).
    Auth,
    /// [`ProviderError::BadRequest`] (`bad_request`).
    BadRequest,
    /// [`ProviderError::ContextOverflow`] (`context_overflow`).
    ContextOverflow,
    /// [`ProviderError::Malformed`] (`malformed`).
    Malformed,
    /// [`ProviderError::Config`] (`config`).
    Config,
    /// [`ProviderError::Cancelled`] (`cancelled`).
    Cancelled,
}

impl ProviderErrorKind {
    /// Every kind.
    pub const ALL: [ProviderErrorKind; 10] = [
        ProviderErrorKind::RateLimited,
        ProviderErrorKind::Timeout,
        ProviderErrorKind::Transport,
        ProviderErrorKind::Server,
        ProviderErrorKind::Auth,
        ProviderErrorKind::BadRequest,
        ProviderErrorKind::ContextOverflow,
        ProviderErrorKind::Malformed,
        ProviderErrorKind::Config,
        ProviderErrorKind::Cancelled,
    ];

    /// The snake_case name (`rate_limited`, `timeout`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderErrorKind::RateLimited => "rate_limited",
            ProviderErrorKind::Timeout => "timeout",
            ProviderErrorKind::Transport => "transport",
            ProviderErrorKind::Server => "server",
            ProviderErrorKind::Auth => "auth",
            ProviderErrorKind::BadRequest => "bad_request",
            ProviderErrorKind::ContextOverflow => "context_overflow",
            ProviderErrorKind::Malformed => "malformed",
            ProviderErrorKind::Config => "config",
            ProviderErrorKind::Cancelled => "cancelled",
        }
    }
}

impl std::fmt::Display for ProviderErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
