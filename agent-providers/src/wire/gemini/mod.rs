//! Google Gemini `generateContent` / `streamGenerateContent?alt=sse` (`x-goog-api-key`).
//!
//! The system prompt goes to `systemInstruction`, tools to `functionDeclarations` with their
//! JSON Schemas translated to Gemini's OpenAPI subset, tool results to `functionResponse`
//! parts that carry the function name, and every function call gets a unique id (synthesized
//! when the wire has none). Thought signatures are kept and sent back on the same part.
//! Any configured base URL is ignored.

use agent_core::{ModelRequest, ProviderError, StreamEvent};
use reqwest::header::HeaderMap;

use crate::Gemini;
use crate::config::ProviderConfig;
use crate::limits::Limits;
use crate::wire::{Wire, secret_header};

mod request;
mod response;
pub(crate) mod schema;
mod stream;

pub use request::{request_body, request_bytes};
pub use response::{parse_response, parse_response_with};
pub use schema::{MAX_SCHEMA_BYTES, MAX_SCHEMA_NODES, schema};
pub use stream::GeminiDecoder;

/// The Gemini API host. Configuration never changes it.
pub const API_ROOT: &str = "https://generativelanguage.googleapis.com";

/// Options of the Gemini request that the neutral [`ModelRequest`] does not carry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GeminiOptions {
    /// Ask for thought summaries (`thinkingConfig.includeThoughts`).
    pub include_thoughts: bool,
}

impl Gemini {
    /// Points the adapter at another host that serves the Gemini API (a loopback test server
    /// or a recording proxy). Configuration (`base_url`, `LLM_BASE_URL`) never sets this.
    pub fn with_api_root(mut self, root: impl Into<String>) -> Result<Self, ProviderError> {
        self.wire.api_root = root.into().trim_end_matches('/').to_owned();
        self.refresh_url()?;
        Ok(self)
    }

    /// Asks for thought summaries, which arrive as reasoning.
    pub fn with_thoughts(mut self, include: bool) -> Self {
        self.wire.options.include_thoughts = include;
        self
    }

    /// The endpoint this adapter posts to.
    pub fn url(&self) -> String {
        self.wire.url(&self.model, self.streaming)
    }

    /// The same adapter (sharing its connection pool) for another model.
    pub fn with_model(&self, model: impl Into<String>) -> Result<Self, ProviderError> {
        self.retarget(model)
    }
}

mod api {
    use super::*;

    /// The generateContent wire: the API host (the model is part of the endpoint), and the
    /// request options.
    #[derive(Debug, Clone)]
    pub struct GenerateContent {
        pub(super) api_root: String,
        pub(super) options: GeminiOptions,
    }

    impl Wire for GenerateContent {
        const ID: &'static str = "gemini";
        type Decoder = GeminiDecoder;

        fn from_config(config: &ProviderConfig) -> Self {
            if config.base_url.is_some() {
                tracing::debug!("the Gemini adapter ignores the configured base URL");
            }
            GenerateContent {
                api_root: API_ROOT.to_owned(),
                options: GeminiOptions::default(),
            }
        }

        fn model_name(&self, model: &str) -> String {
            model.trim_start_matches("models/").to_owned()
        }

        fn accepts_images(&self, model: &str) -> Option<bool> {
            crate::vision::gemini(model)
        }

        fn url(&self, model: &str, streaming: bool) -> String {
            let method = if streaming {
                "streamGenerateContent?alt=sse"
            } else {
                "generateContent"
            };
            format!("{}/v1beta/models/{model}:{method}", self.api_root)
        }

        fn auth_headers(&self, api_key: &str, headers: &mut HeaderMap) -> Result<(), ProviderError> {
            headers.insert("x-goog-api-key", secret_header(api_key)?);
            Ok(())
        }

        fn encode_request(
            &self,
            _model: &str,
            request: &ModelRequest,
            _stream: bool,
        ) -> Result<Vec<u8>, ProviderError> {
            request_bytes(request, &self.options)
        }

        fn stream_decoder(&self, limits: Limits) -> GeminiDecoder {
            GeminiDecoder::with_limits(limits)
        }

        fn parse_response(&self, body: &[u8], limits: Limits) -> Result<Vec<StreamEvent>, ProviderError> {
            parse_response_with(body, limits)
        }
    }
}
pub(crate) use api::GenerateContent;
