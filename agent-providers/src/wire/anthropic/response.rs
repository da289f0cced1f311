//! A non-streamed Messages body, read into the events a stream would give.

use agent_core::{ProviderError, StreamEvent};
use serde::Deserialize;
use serde_json::Value;

use super::stream::{AnthropicDecoder, Block, WireUsage};
use crate::errors::{ErrorInfo, malformed_json};
use crate::limits::Limits;

/// Reads a non-streamed Messages body into the same events a stream would give.
pub fn parse_response(body: &[u8]) -> Result<Vec<StreamEvent>, ProviderError> {
    parse_response_with(body, Limits::default())
}

/// [`parse_response`] within `limits` (tool-call count and argument size).
pub fn parse_response_with(body: &[u8], limits: Limits) -> Result<Vec<StreamEvent>, ProviderError> {
    let text = String::from_utf8_lossy(body);
    let value: Value = serde_json::from_slice(body).map_err(|e| malformed_json("the response body", &text, &e))?;
    if value.get("type").and_then(Value::as_str) == Some("error") {
        return Err(ErrorInfo::from_value(&value).into_stream_error(500));
    }
    let mut decoder = AnthropicDecoder::with_limits(limits);
    let mut out = Vec::new();
    if let Some(u) = value.get("usage").and_then(|u| WireUsage::deserialize(u).ok()) {
        decoder.usage.update(&u);
    }
    let content = value.get("content").and_then(Value::as_array).ok_or_else(|| {
        ProviderError::Malformed(format!("the response has no content: {}", crate::sse::excerpt(&text)))
    })?;
    for (i, block) in content.iter().enumerate() {
        let index = u32::try_from(i).unwrap_or(u32::MAX);
        decoder.start_block(index, block, &mut out)?;
        if let Some(Block::Thinking) = decoder.blocks.get(&index) {
            // start_block already emitted the whole thinking text and signature.
        }
        if let Some(Block::ToolUse { id, open, .. }) = decoder.blocks.get_mut(&index) {
            *open = false;
            out.push(StreamEvent::ToolCallEnd { id: id.clone() });
        }
    }
    decoder.stop_reason = value.get("stop_reason").and_then(Value::as_str).map(str::to_owned);
    decoder.finalize(&mut out)?;
    Ok(out)
}
