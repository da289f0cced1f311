//! Anthropic Messages (`/v1/messages`, `x-api-key` and `anthropic-version` headers).
//!
//! The wire translation is pure: [`request_body`] builds the JSON body, [`AnthropicDecoder`]
//! turns SSE events into [`StreamEvent`]s and [`parse_response`] reads a non-streamed body.

use agent_core::{ModelRequest, ProviderError, StreamEvent};
use reqwest::header::{HeaderMap, HeaderValue};

use crate::Anthropic;
use crate::config::ProviderConfig;
use crate::limits::Limits;
use crate::wire::{FixedUrl, Wire, base_url, secret_header};

mod request;
mod response;
mod stream;

pub use request::{request_body, request_bytes};
pub use response::{parse_response, parse_response_with};
pub use stream::AnthropicDecoder;

/// The default base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The `anthropic-version` header sent.
pub const API_VERSION: &str = "2023-06-01";
/// `max_tokens` is required by the API: this is sent when the request sets no limit.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// Options of the Anthropic request that the neutral [`ModelRequest`] does not carry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnthropicOptions {
    /// Enables extended thinking with this token budget.
    pub thinking_budget: Option<u32>,
    /// Which prompt-cache breakpoints the request carries (default [`CacheMode::Auto`]).
    pub cache: CacheMode,
}

/// Which `cache_control: {"type": "ephemeral"}` breakpoints an Anthropic request carries.
///
/// Anthropic caches a request's prefix (tools, then system prompt, then messages) up to each
/// breakpoint, at most 4 per request; a later request that starts with the same bytes reads
/// them from the cache. A prefix shorter than the model's minimum (1 024 to 4 096 tokens) is
/// simply not cached. As data it is `"auto"`, `"static"` or `"off"`; a [`ProviderConfig`]
/// sets it with `prompt_cache`.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CacheMode {
    /// The last tool definition, the system prompt, the last block of the newest message
    /// (so the next call of the loop reads everything sent so far from the cache) and the last
    /// block of the message before the newest assistant message (the previous call's
    /// breakpoint, kept in place so that call's cache entry is found however many blocks were
    /// added since). Thinking blocks never carry one.
    #[default]
    Auto,
    /// Only the last tool definition and the system prompt: for hosts whose conversations
    /// change between calls, where a breakpoint on the messages would write cache entries
    /// that are never read (a cache write costs more than plain input).
    Static,
    /// No breakpoint; the system prompt is sent as a plain string.
    Off,
}

impl Anthropic {
    /// Enables extended thinking with a token budget.
    pub fn with_thinking_budget(mut self, budget_tokens: u32) -> Self {
        self.wire.options.thinking_budget = Some(budget_tokens);
        self
    }

    /// Sets which prompt-cache breakpoints requests carry (default [`CacheMode::Auto`]).
    pub fn with_cache(mut self, cache: CacheMode) -> Self {
        self.wire.options.cache = cache;
        self
    }
}

mod api {
    use super::*;

    /// The Messages wire: the endpoint under the configured base URL, and the request options.
    #[derive(Debug, Clone)]
    pub struct Messages {
        url: String,
        pub(super) options: AnthropicOptions,
    }

    impl Wire for Messages {
        const ID: &'static str = "anthropic";
        type Decoder = AnthropicDecoder;

        fn from_config(config: &ProviderConfig) -> Self {
            let base = base_url(config, DEFAULT_BASE_URL);
            let url = if base.ends_with("/v1/messages") {
                base.to_owned()
            } else if base.ends_with("/v1") {
                format!("{base}/messages")
            } else {
                format!("{base}/v1/messages")
            };
            Messages {
                url,
                options: AnthropicOptions {
                    cache: config.prompt_cache,
                    ..AnthropicOptions::default()
                },
            }
        }

        fn accepts_images(&self, model: &str) -> Option<bool> {
            crate::vision::anthropic(model)
        }

        fn url(&self, _model: &str, _streaming: bool) -> String {
            self.url.clone()
        }

        fn auth_headers(&self, api_key: &str, headers: &mut HeaderMap) -> Result<(), ProviderError> {
            headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
            headers.insert("x-api-key", secret_header(api_key)?);
            Ok(())
        }

        fn encode_request(&self, model: &str, request: &ModelRequest, stream: bool) -> Result<Vec<u8>, ProviderError> {
            request_bytes(model, request, stream, &self.options)
        }

        fn stream_decoder(&self, limits: Limits) -> AnthropicDecoder {
            AnthropicDecoder::with_limits(limits)
        }

        fn parse_response(&self, body: &[u8], limits: Limits) -> Result<Vec<StreamEvent>, ProviderError> {
            parse_response_with(body, limits)
        }
    }

    impl FixedUrl for Messages {}
}
pub(crate) use api::Messages;
