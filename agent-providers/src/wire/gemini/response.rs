//! A non-streamed generateContent body, read into the events a stream would give.

use agent_core::{ProviderError, StreamEvent};

use super::stream::{GeminiDecoder, WireResponse};
use crate::errors::malformed_json;
use crate::limits::Limits;

/// Reads a non-streamed generateContent body into the same events a stream would give.
pub fn parse_response(body: &[u8]) -> Result<Vec<StreamEvent>, ProviderError> {
    parse_response_with(body, Limits::default())
}

/// [`parse_response`] within `limits` (tool-call count and argument size).
pub fn parse_response_with(body: &[u8], limits: Limits) -> Result<Vec<StreamEvent>, ProviderError> {
    let text = String::from_utf8_lossy(body);
    let response: WireResponse =
        serde_json::from_slice(body).map_err(|e| malformed_json("the response body", &text, &e))?;
    let mut decoder = GeminiDecoder::with_limits(limits);
    let mut out = Vec::new();
    decoder.on_response(response, &mut out)?;
    decoder.finalize(&mut out)?;
    Ok(out)
}
