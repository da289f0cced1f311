//! The wire formats: one folder of pure functions per provider API (request encoding, stream
//! decoding, whole-response parsing), and the [`Wire`] trait through which the generic HTTP
//! adapter ([`HttpProvider`](crate::wire::adapter::HttpProvider)) drives them.

use std::fmt::Debug;

use agent_core::{ModelRequest, ProviderError, StreamEvent};
use reqwest::header::HeaderMap;

use crate::config::ProviderConfig;
use crate::errors;
use crate::limits::Limits;
use crate::transport::WireDecoder;

pub(crate) mod adapter;
pub mod anthropic;
pub mod gemini;
mod kept;
mod merged;
pub mod openai;
pub mod openai_responses;
#[cfg(test)]
mod test_support;

/// What the generic HTTP adapter needs from one provider API. Nothing here does I/O: the
/// adapter owns transport, retries, timeouts, cancellation and byte caps.
pub trait Wire: Clone + Debug + Send + Sync + 'static {
    /// The provider id (`Provider::id`).
    const ID: &'static str;
    /// The decoder of a streamed response.
    type Decoder: WireDecoder;

    /// The wire's own settings from a configuration (base URL, nothing else is read here).
    fn from_config(config: &ProviderConfig) -> Self;
    /// The model name as this wire spells it.
    fn model_name(&self, model: &str) -> String {
        model.to_owned()
    }
    /// Whether `model` takes images, when its name tells (see `Provider::accepts_images`).
    fn accepts_images(&self, model: &str) -> Option<bool> {
        let _ = model;
        None
    }
    /// The endpoint for `model`, streamed or not.
    fn url(&self, model: &str, streaming: bool) -> String;
    /// Adds the headers that carry `api_key` (and any fixed header of the API).
    fn auth_headers(&self, api_key: &str, headers: &mut HeaderMap) -> Result<(), ProviderError>;
    /// The request body, as posted.
    fn encode_request(&self, model: &str, request: &ModelRequest, stream: bool) -> Result<Vec<u8>, ProviderError>;
    /// A decoder for one streamed response within `limits`.
    fn stream_decoder(&self, limits: Limits) -> Self::Decoder;
    /// Reads a non-streamed body into the events a stream would give.
    fn parse_response(&self, body: &[u8], limits: Limits) -> Result<Vec<StreamEvent>, ProviderError>;
    /// Maps an error response: its status, headers, the body read, and where that body was cut.
    fn map_error(&self, status: u16, headers: &HeaderMap, body: &[u8], cut_at: Option<usize>) -> ProviderError {
        errors::from_status(status, headers, body, cut_at)
    }
}

/// A wire whose endpoint does not depend on the model, so switching models cannot fail.
pub trait FixedUrl: Wire {}

/// The configured base URL (or `default`) without trailing slashes.
pub(crate) fn base_url<'a>(config: &'a ProviderConfig, default: &'a str) -> &'a str {
    config.base_url.as_deref().unwrap_or(default).trim_end_matches('/')
}

/// Appends `value`'s JSON to `out`.
pub(crate) fn write_json<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), ProviderError> {
    serde_json::to_writer(out, value)
        .map_err(|e| ProviderError::BadRequest(format!("could not encode the request: {e}")))
}

/// The sensitive header value carrying a key.
pub(crate) fn secret_header(value: &str) -> Result<reqwest::header::HeaderValue, ProviderError> {
    let mut value = reqwest::header::HeaderValue::from_str(value)
        .map_err(|_| ProviderError::Config("the API key contains characters not allowed in a header".into()))?;
    value.set_sensitive(true);
    Ok(value)
}
