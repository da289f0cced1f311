//! A non-streamed Chat Completions body, read into the events a stream would give.

use agent_core::{ProviderError, StreamEvent};
use serde_json::json;

use super::stream::{Chunk, OpenAiDecoder};
use crate::errors::{ErrorInfo, malformed_json};
use crate::limits::Limits;
use crate::util::Text;

/// Reads a non-streamed Chat Completions body into the same events a stream would give.
pub fn parse_response(body: &[u8]) -> Result<Vec<StreamEvent>, ProviderError> {
    parse_response_with(body, Limits::default())
}

/// [`parse_response`] within `limits` (tool-call count and argument size).
pub fn parse_response_with(body: &[u8], limits: Limits) -> Result<Vec<StreamEvent>, ProviderError> {
    let text = || String::from_utf8_lossy(body);
    let chunk: Chunk = serde_json::from_slice(body).map_err(|e| malformed_json("the response body", &text(), &e))?;
    if let Some(error) = chunk.error {
        return Err(ErrorInfo::from_value(&json!({ "error": error })).into_stream_error(500));
    }
    let choice = chunk.choices.and_then(|c| c.into_iter().next()).ok_or_else(|| {
        ProviderError::Malformed(format!("the response has no choices: {}", crate::sse::excerpt(&text())))
    })?;
    let mut decoder = OpenAiDecoder::with_limits(limits);
    let mut out = Vec::new();
    if let Some(message) = choice.message.or(choice.delta) {
        // Whole tool calls have no index: number them in order.
        let mut message = message;
        if let Some(calls) = message.tool_calls.as_mut() {
            for (i, c) in calls.iter_mut().enumerate() {
                c.index.get_or_insert(u32::try_from(i).unwrap_or(u32::MAX));
            }
        }
        decoder.on_delta(message, &mut out)?;
    }
    decoder.finish = Some(choice.finish_reason.map_or_else(|| "stop".into(), Text::into_owned));
    if let Some(usage) = chunk.usage {
        out.push(StreamEvent::Usage {
            usage: usage.to_usage(),
        });
    }
    decoder.finalize(&mut out)?;
    Ok(out)
}
