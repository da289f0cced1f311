//! Provider configuration, in code or from the `LLM_*` environment variables.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use agent_core::{Provider, ProviderError};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::anthropic::CacheMode;
use crate::openai_responses::ReasoningSummary;
use crate::{Anthropic, Gemini, HttpConfig, OpenAiCompatible, OpenAiResponses};

/// Which wire format a provider speaks. As data it is its name (`"openai-compatible"`,
/// `"openai-responses"`, `"anthropic"`, `"gemini"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub enum ProviderKind {
    /// OpenAI Chat Completions and every server that copies it (`openai-compatible`).
    #[serde(rename = "openai-compatible")]
    OpenAiCompatible,
    /// OpenAI Responses (`openai-responses`), stateless (`store: false`) with encrypted
    /// reasoning carried in the transcript.
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    /// Anthropic Messages (`anthropic`).
    #[serde(rename = "anthropic")]
    Anthropic,
    /// Google Gemini generateContent (`gemini`).
    #[serde(rename = "gemini")]
    Gemini,
}

impl ProviderKind {
    /// The name used in `LLM_PROVIDER`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenAiCompatible => "openai-compatible",
            ProviderKind::OpenAiResponses => "openai-responses",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Gemini => "gemini",
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProviderKind {
    type Err = ProviderError;

    /// Parses `openai-compatible`, `openai-responses`, `anthropic` or `gemini`; anything else
    /// fails with exactly `Unknown LLM provider: <name>`.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "openai-compatible" => Ok(ProviderKind::OpenAiCompatible),
            "openai-responses" => Ok(ProviderKind::OpenAiResponses),
            "anthropic" => Ok(ProviderKind::Anthropic),
            "gemini" => Ok(ProviderKind::Gemini),
            other => Err(ProviderError::Config(format!("Unknown LLM provider: {other}"))),
        }
    }
}

/// An API key. Its `Debug` and `Display` never show it; [`ApiKey::expose`] does. As data it is
/// a string; it is never serialized back out.
#[derive(Clone, Default, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// The key itself, for the request header.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the key is empty (servers without authentication).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_empty() {
            "ApiKey(empty)"
        } else {
            "ApiKey([redacted])"
        })
    }
}

impl<T: Into<String>> From<T> for ApiKey {
    fn from(key: T) -> Self {
        ApiKey(key.into())
    }
}

/// Everything needed to build one provider adapter.
///
/// ```
/// use agent_providers::{ProviderConfig, ProviderKind};
/// let config = ProviderConfig::new(ProviderKind::Anthropic, "claude-sonnet-4-5", "sk-ant-...");
/// let provider = config.build().unwrap();
/// assert_eq!(provider.id(), "anthropic");
/// assert!(!format!("{config:?}").contains("sk-ant"));
/// ```
///
/// As data it takes the [options format](agent_core::options); `kind` and `model` are
/// required, and the API key is never serialized back out:
///
/// ```
/// let config: agent_providers::ProviderConfig = serde_json::from_value(serde_json::json!({
///     "kind": "openai-compatible", "model": "m", "base_url": "http://127.0.0.1:8080/v1",
///     "http": {"max_attempts": 1}, "headers": {"HTTP-Referer": "https://example.org"}
/// })).unwrap();
/// assert_eq!(config.http.max_attempts, 1);
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// The wire format.
    pub kind: ProviderKind,
    /// The model name sent to the provider.
    pub model: String,
    /// The API key (an empty key sends no authentication header; for local servers).
    #[serde(default, skip_serializing)]
    #[schemars(extend("default" = ""))]
    pub api_key: ApiKey,
    /// Overrides the provider's default base URL (`https://api.openai.com/v1`,
    /// `https://api.anthropic.com`). Gemini ignores it.
    #[serde(default)]
    pub base_url: Option<String>,
    /// Timeouts and retries.
    #[serde(default)]
    pub http: HttpConfig,
    /// Stream the answer over SSE (default) or make a plain JSON call.
    #[serde(default = "streaming_default")]
    pub streaming: bool,
    /// The model's context window in tokens, when known (used by compaction).
    #[serde(default)]
    pub max_input_tokens: Option<u64>,
    /// Extra request headers (for example OpenRouter's `HTTP-Referer`).
    #[serde(default, with = "agent_core::options::string_pairs")]
    #[schemars(schema_with = "agent_core::options::string_pairs_schema")]
    pub headers: Vec<(String, String)>,
    /// Anthropic prompt caching: `auto` (default) puts `cache_control` breakpoints on the
    /// last tool, the system prompt and the newest messages, `static` on the tools and the
    /// system prompt only, `off` on nothing. The other providers cache on their own and
    /// ignore it.
    #[serde(default)]
    pub prompt_cache: CacheMode,
    /// OpenAI Responses: the reasoning summaries asked of reasoning models: `auto` (default),
    /// `concise`, `detailed`, or `off` (OpenAI sends summaries only to verified
    /// organizations and refuses the request of one it has not verified). The other
    /// providers ignore it.
    #[serde(default)]
    pub reasoning_summary: ReasoningSummary,
}

fn streaming_default() -> bool {
    true
}

impl ProviderConfig {
    /// A configuration with the default HTTP policy, streaming on.
    pub fn new(kind: ProviderKind, model: impl Into<String>, api_key: impl Into<ApiKey>) -> Self {
        ProviderConfig {
            kind,
            model: model.into(),
            api_key: api_key.into(),
            base_url: None,
            http: HttpConfig::default(),
            streaming: true,
            max_input_tokens: None,
            headers: Vec::new(),
            prompt_cache: CacheMode::Auto,
            reasoning_summary: ReasoningSummary::Auto,
        }
    }

    /// Sets the base URL.
    pub fn with_base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// Sets the HTTP policy.
    pub fn with_http(mut self, http: HttpConfig) -> Self {
        self.http = http;
        self
    }

    /// Turns SSE streaming on or off.
    pub fn with_streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }

    /// Sets the reasoning summaries an OpenAI Responses request asks for (default
    /// [`ReasoningSummary::Auto`]).
    pub fn with_reasoning_summary(mut self, summary: ReasoningSummary) -> Self {
        self.reasoning_summary = summary;
        self
    }

    /// Sets Anthropic's prompt-cache breakpoints (default [`CacheMode::Auto`]).
    pub fn with_prompt_cache(mut self, cache: CacheMode) -> Self {
        self.prompt_cache = cache;
        self
    }

    /// Adds a request header.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Reads `LLM_PROVIDER`, `LLM_MODEL`, `LLM_API_KEY` and `LLM_BASE_URL` from the process
    /// environment. This is the only place where the crate reads the environment.
    pub fn from_env() -> Result<Self, ProviderError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// [`ProviderConfig::from_env`] with another source of variables (tests, config files).
    ///
    /// `LLM_PROVIDER`, `LLM_MODEL` and `LLM_API_KEY` are required (`LLM_API_KEY` may be set
    /// to an empty value for local OpenAI-compatible or Responses servers without
    /// authentication); `LLM_BASE_URL` is
    /// optional and ignored for Gemini. A missing variable is a [`ProviderError::Config`]
    /// naming it; an unknown provider fails with `Unknown LLM provider: <name>`.
    ///
    /// ```
    /// use agent_providers::ProviderConfig;
    /// let err = ProviderConfig::from_lookup(|name| match name {
    ///     "LLM_PROVIDER" => Some("unknown-provider".to_owned()),
    ///     _ => None,
    /// })
    /// .unwrap_err();
    /// assert_eq!(err.to_string(), "Unknown LLM provider: unknown-provider");
    /// ```
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ProviderError> {
        let required = |name: &str| {
            lookup(name)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
                .ok_or_else(|| ProviderError::Config(format!("missing configuration: {name} is not set")))
        };
        let kind: ProviderKind = required("LLM_PROVIDER")?.parse()?;
        let model = required("LLM_MODEL")?;
        let api_key = lookup("LLM_API_KEY").map(|v| v.trim().to_owned()).ok_or_else(|| {
            ProviderError::Config(
                "missing configuration: LLM_API_KEY is not set (for a local OpenAI-compatible server \
                     without authentication, set it to an empty value)"
                    .into(),
            )
        })?;
        let keyless = matches!(kind, ProviderKind::OpenAiCompatible | ProviderKind::OpenAiResponses);
        if api_key.is_empty() && !keyless {
            return Err(ProviderError::Config(format!(
                "missing configuration: LLM_API_KEY is empty ({kind} needs a key)"
            )));
        }
        let mut config = ProviderConfig::new(kind, model, api_key);
        config.base_url = lookup("LLM_BASE_URL")
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty());
        Ok(config)
    }

    /// Builds the adapter this configuration describes.
    pub fn build(&self) -> Result<Arc<dyn Provider>, ProviderError> {
        Ok(match self.kind {
            ProviderKind::OpenAiCompatible => Arc::new(OpenAiCompatible::new(self)?),
            ProviderKind::OpenAiResponses => Arc::new(OpenAiResponses::new(self)?),
            ProviderKind::Anthropic => Arc::new(Anthropic::new(self)?),
            ProviderKind::Gemini => Arc::new(Gemini::new(self)?),
        })
    }
}

/// Builds the provider described by the `LLM_*` environment variables.
pub fn from_env() -> Result<Arc<dyn Provider>, ProviderError> {
    ProviderConfig::from_env()?.build()
}

pub(crate) fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, ProviderError> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| ProviderError::Config(format!("invalid header name {name:?}")))?;
        let value = HeaderValue::from_str(value)
            .map_err(|_| ProviderError::Config(format!("invalid value for header {name}")))?;
        map.insert(name, value);
    }
    Ok(map)
}
