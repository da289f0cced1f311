//! OpenAI Responses (`{base_url}/responses`), stateless: every request carries the whole
//! conversation with `store: false`, and a reasoning model's encrypted reasoning items travel
//! in the transcript (as [`Reasoning::opaque`](agent_core::Reasoning::opaque)) and go back
//! on the next request, so multi-turn reasoning works without server-side state.
//!
//! The wire translation is pure: [`request_body`] builds the JSON body, [`ResponsesDecoder`]
//! turns the SSE events into [`StreamEvent`](agent_core::StreamEvent)s and [`parse_response`]
//! reads a non-streamed body.

use agent_core::{ModelRequest, ProviderError, StreamEvent};
use reqwest::header::{AUTHORIZATION, HeaderMap};

use crate::config::ProviderConfig;
use crate::limits::Limits;
use crate::wire::{FixedUrl, Wire, base_url, secret_header};

mod failure;
mod items;
mod models;
mod replay;
mod request;
mod response;
mod stream;
#[cfg(test)]
mod tests;

pub use models::is_reasoning_model;
pub use request::{request_body, request_bytes};
pub use response::{parse_response, parse_response_with};
pub use stream::ResponsesDecoder;

/// The default base URL (OpenAI itself).
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// Which reasoning summaries a Responses request asks reasoning models for. As data it is
/// `"auto"`, `"concise"`, `"detailed"` or `"off"`; a [`ProviderConfig`] sets it with
/// `reasoning_summary`.
///
/// OpenAI sends summaries only to organizations it has verified, and refuses a request that
/// asks for them from one it has not: `off` asks for none. The encrypted reasoning is kept and
/// replayed either way, so multi-turn reasoning works without summaries.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningSummary {
    /// The most detailed summary the model offers (`"auto"`).
    #[default]
    Auto,
    /// A short summary.
    Concise,
    /// A detailed summary.
    Detailed,
    /// No summary is asked for (no `reasoning` parameter is sent).
    Off,
}

impl ReasoningSummary {
    /// The `reasoning.summary` value, or `None` to send no `reasoning` parameter.
    pub(crate) fn wire_value(self) -> Option<&'static str> {
        match self {
            ReasoningSummary::Auto => Some("auto"),
            ReasoningSummary::Concise => Some("concise"),
            ReasoningSummary::Detailed => Some("detailed"),
            ReasoningSummary::Off => None,
        }
    }
}

mod api {
    use super::*;

    /// The Responses wire: the endpoint under the configured base URL.
    #[derive(Debug, Clone)]
    pub struct Responses {
        url: String,
        summary: ReasoningSummary,
    }

    impl Wire for Responses {
        const ID: &'static str = "openai-responses";
        type Decoder = ResponsesDecoder;

        fn from_config(config: &ProviderConfig) -> Self {
            let base = base_url(config, DEFAULT_BASE_URL);
            let url = if base.ends_with("/responses") {
                base.to_owned()
            } else {
                format!("{base}/responses")
            };
            Responses {
                url,
                summary: config.reasoning_summary,
            }
        }

        fn accepts_images(&self, model: &str) -> Option<bool> {
            crate::vision::openai_compatible(model)
        }

        fn url(&self, _model: &str, _streaming: bool) -> String {
            self.url.clone()
        }

        fn auth_headers(&self, api_key: &str, headers: &mut HeaderMap) -> Result<(), ProviderError> {
            // Local servers that speak Responses take no key: send no header rather than an
            // empty one.
            if !api_key.is_empty() {
                headers.insert(AUTHORIZATION, secret_header(&format!("Bearer {api_key}"))?);
            }
            Ok(())
        }

        fn encode_request(&self, model: &str, request: &ModelRequest, stream: bool) -> Result<Vec<u8>, ProviderError> {
            request::request_bytes_with(model, request, stream, self.summary)
        }

        fn stream_decoder(&self, limits: Limits) -> ResponsesDecoder {
            ResponsesDecoder::with_limits(limits)
        }

        fn parse_response(&self, body: &[u8], limits: Limits) -> Result<Vec<StreamEvent>, ProviderError> {
            parse_response_with(body, limits)
        }
    }

    impl FixedUrl for Responses {}
}
pub(crate) use api::Responses;
