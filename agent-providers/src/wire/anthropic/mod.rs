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
}

impl Anthropic {
    /// Enables extended thinking with a token budget.
    pub fn with_thinking_budget(mut self, budget_tokens: u32) -> Self {
        self.wire.options.thinking_budget = Some(budget_tokens);
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
                options: AnthropicOptions::default(),
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
