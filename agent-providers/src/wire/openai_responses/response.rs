//! A non-streamed Responses body, read into the events a stream would give.

use agent_core::{ProviderError, StreamEvent};
use serde::Deserialize;
use serde_json::Value;

use super::items::Head;
use super::stream::ResponsesDecoder;
use crate::errors::malformed_json;
use crate::limits::Limits;

#[derive(Deserialize)]
struct Body {
    #[serde(flatten)]
    head: Head,
    output: Option<Vec<Value>>,
}

/// Reads a non-streamed Responses body into the same events a stream would give.
pub fn parse_response(body: &[u8]) -> Result<Vec<StreamEvent>, ProviderError> {
    parse_response_with(body, Limits::default())
}

/// [`parse_response`] within `limits` (tool-call count and argument size).
pub fn parse_response_with(body: &[u8], limits: Limits) -> Result<Vec<StreamEvent>, ProviderError> {
    let parsed: Body = serde_json::from_slice(body)
        .map_err(|e| malformed_json("the response body", &String::from_utf8_lossy(body), &e))?;
    let mut decoder = ResponsesDecoder::with_limits(limits);
    let mut out = Vec::new();
    let failed = parsed.head.status.as_deref() == Some("failed") || parsed.head.error.is_some();
    if !failed {
        let output = parsed.output.ok_or_else(|| {
            ProviderError::Malformed(format!(
                "the response has no output: {}",
                crate::sse::excerpt(&String::from_utf8_lossy(body))
            ))
        })?;
        for (index, item) in (0u64..).zip(&output) {
            decoder.on_item_done(index, item, &mut out)?;
        }
    }
    decoder.finish(parsed.head, &mut out)?;
    Ok(out)
}
