//! OpenAI-compatible Chat Completions (`{base_url}/chat/completions`): OpenAI, OpenRouter,
//! Ollama, LM Studio, llama.cpp, vLLM, Groq, DeepSeek, LiteLLM.
//!
//! The wire translation is pure: [`request_body`] builds the JSON body, [`OpenAiDecoder`] turns
//! SSE events into [`StreamEvent`](agent_core::StreamEvent)s and [`parse_response`] reads a
//! non-streamed body.

use agent_core::{ModelRequest, ProviderError, StreamEvent};
use reqwest::header::{AUTHORIZATION, HeaderMap};

use crate::config::ProviderConfig;
use crate::limits::Limits;
use crate::wire::{FixedUrl, Wire, base_url, secret_header};

mod reasoning_details;
mod request;
mod response;
mod stream;

pub use request::{request_body, request_bytes};
pub use response::{parse_response, parse_response_with};
pub use stream::OpenAiDecoder;

/// The default base URL (OpenAI itself).
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

mod api {
    use super::*;

    /// The Chat Completions wire: the endpoint under the configured base URL.
    #[derive(Debug, Clone)]
    pub struct ChatCompletions {
        url: String,
    }

    impl Wire for ChatCompletions {
        const ID: &'static str = "openai-compatible";
        type Decoder = OpenAiDecoder;

        fn from_config(config: &ProviderConfig) -> Self {
            let base = base_url(config, DEFAULT_BASE_URL);
            let url = if base.ends_with("/chat/completions") {
                base.to_owned()
            } else {
                format!("{base}/chat/completions")
            };
            ChatCompletions { url }
        }

        fn accepts_images(&self, model: &str) -> Option<bool> {
            crate::vision::openai_compatible(model)
        }

        fn url(&self, _model: &str, _streaming: bool) -> String {
            self.url.clone()
        }

        fn auth_headers(&self, api_key: &str, headers: &mut HeaderMap) -> Result<(), ProviderError> {
            // Local servers take no key: send no Authorization header rather than an empty one.
            if !api_key.is_empty() {
                headers.insert(AUTHORIZATION, secret_header(&format!("Bearer {api_key}"))?);
            }
            Ok(())
        }

        fn encode_request(&self, model: &str, request: &ModelRequest, stream: bool) -> Result<Vec<u8>, ProviderError> {
            request_bytes(model, request, stream)
        }

        fn stream_decoder(&self, limits: Limits) -> OpenAiDecoder {
            OpenAiDecoder::with_limits(limits)
        }

        fn parse_response(&self, body: &[u8], limits: Limits) -> Result<Vec<StreamEvent>, ProviderError> {
            parse_response_with(body, limits)
        }
    }

    impl FixedUrl for ChatCompletions {}
}
pub(crate) use api::ChatCompletions;
