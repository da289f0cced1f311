//! Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`; not a stable API).
//!
//! Each runs untrusted bytes through the same code the adapters run and checks the
//! invariants that must hold for any input: no panic, bounded output, and the SSE parser
//! giving the same events however the body is cut. A broken invariant panics, which is what a
//! fuzzer reports.

use agent_core::{ProviderError, StreamEvent};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use crate::anthropic::{self, AnthropicDecoder};
use crate::body_decoder::BodyDecoder;
use crate::errors::{self, ErrorInfo, MAX_RETRY_HINT};
use crate::gemini::{self, GeminiDecoder};
use crate::limits::Limits;
use crate::openai::{self, OpenAiDecoder};
use crate::openai_responses::{self, ResponsesDecoder};
use crate::sse::{SseEvent, SseParser};
use crate::transport::WireDecoder;

/// Which provider's wire format a body is decoded as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// OpenAI-compatible Chat Completions.
    OpenAi,
    /// OpenAI Responses.
    OpenAiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// Gemini generateContent.
    Gemini,
}

/// Limits small enough for a fuzzer's inputs to reach every cap.
pub fn small_limits() -> Limits {
    Limits {
        max_response_bytes: 2048,
        max_error_body_bytes: 256,
        max_tool_args_bytes: 64,
        max_tool_calls: 3,
    }
}

/// Splits `body` at `cuts` (taken modulo its length, in any order) into chunks.
pub fn chunks<'a>(body: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut at: Vec<usize> = cuts.iter().map(|c| c % (body.len() + 1)).collect();
    at.push(0);
    at.push(body.len());
    at.sort_unstable();
    at.dedup();
    at.windows(2).map(|w| &body[w[0]..w[1]]).collect()
}

/// Decodes `body`, cut at `cuts`, as a streamed response of `wire` (SSE parser, wire decoder,
/// response cap, as the transport does), and as a non-streamed body; then checks the bounds
/// of `limits` on what came out, and that the SSE events do not depend on the cuts.
pub fn sse_stream(wire: Wire, body: &[u8], cuts: &[usize], limits: Limits) {
    let pieces = chunks(body, cuts);
    let (events, _err) = match wire {
        Wire::OpenAi => stream(OpenAiDecoder::with_limits(limits), &pieces, limits),
        Wire::OpenAiResponses => stream(ResponsesDecoder::with_limits(limits), &pieces, limits),
        Wire::Anthropic => stream(AnthropicDecoder::with_limits(limits), &pieces, limits),
        Wire::Gemini => stream(GeminiDecoder::with_limits(limits), &pieces, limits),
    };
    check_bounds(&events, limits);
    let whole = match wire {
        Wire::OpenAi => openai::parse_response_with(body, limits),
        Wire::OpenAiResponses => openai_responses::parse_response_with(body, limits),
        Wire::Anthropic => anthropic::parse_response_with(body, limits),
        Wire::Gemini => gemini::parse_response_with(body, limits),
    };
    if let Ok(events) = whole {
        check_bounds(&events, limits);
    }
    sse_split_invariance(&pieces, body);
}

fn stream<D: WireDecoder>(decoder: D, pieces: &[&[u8]], limits: Limits) -> (Vec<StreamEvent>, Option<ProviderError>) {
    let mut body = BodyDecoder::new(decoder, limits.max_response_bytes);
    let mut out = Vec::new();
    let result = pieces
        .iter()
        .try_for_each(|piece| body.feed(piece, &mut out))
        .and_then(|()| body.end(&mut out));
    (out, result.err())
}

/// What a response may carry under `limits`: so many tool calls, so many argument bytes each.
fn check_bounds(events: &[StreamEvent], limits: Limits) {
    let starts = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::ToolCallStart { .. }))
        .count();
    assert!(starts <= limits.max_tool_calls, "{starts} tool calls");
    let args: usize = events
        .iter()
        .map(|e| match e {
            StreamEvent::ToolArgsDelta { json, .. } => json.len(),
            _ => 0,
        })
        .sum();
    assert!(
        args <= limits.max_tool_args_bytes.saturating_mul(starts),
        "{args} argument bytes in {starts} calls"
    );
}

/// The SSE events of the body in pieces are those of the body whole, when both parse.
fn sse_split_invariance(pieces: &[&[u8]], body: &[u8]) {
    let mut whole = Vec::new();
    let mut parser = SseParser::new();
    let whole_ok = parser.push(body, &mut whole).and_then(|()| parser.finish(&mut whole));
    let mut split: Vec<SseEvent> = Vec::new();
    let mut parser = SseParser::new();
    let split_ok = pieces
        .iter()
        .try_for_each(|piece| {
            parser.push_with(piece, |e| {
                split.push(e.clone());
                Ok(())
            })
        })
        .and_then(|()| {
            parser.finish_with(|e| {
                split.push(e.clone());
                Ok(())
            })
        });
    assert_eq!(whole_ok.is_ok(), split_ok.is_ok(), "{whole_ok:?} vs {split_ok:?}");
    if whole_ok.is_ok() {
        assert_eq!(whole, split);
    }
}

/// Maps an error response (`status`, raw header pairs, `body`) as the transport does, and a
/// stream error payload as the decoders do; checks the retry hints stay within
/// the longest hint kept.
pub fn provider_error(status: u16, headers: &[(Vec<u8>, Vec<u8>)], body: &[u8], cut: bool) {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (HeaderName::from_bytes(name), HeaderValue::from_bytes(value)) {
            map.append(name, value);
        }
    }
    let hint = errors::retry_after(&map);
    assert!(hint.is_none_or(|h| h <= MAX_RETRY_HINT), "{hint:?}");
    let err = errors::from_status(status, &map, body, cut.then_some(small_limits().max_error_body_bytes));
    if let ProviderError::RateLimited {
        retry_after: Some(delay),
        ..
    } = &err
    {
        assert!(*delay <= MAX_RETRY_HINT, "{delay:?}");
    }
    let _ = errors::redact_error(err, "secret").to_string();
    let info = ErrorInfo::from_body(body);
    assert!(info.retry_delay.is_none_or(|d| d <= MAX_RETRY_HINT));
    let _ = info.into_stream_error(status).to_string();
}

/// Translates `json` (when it parses) as a Gemini tool schema; checks the result is a schema
/// node and that its size is bounded by the budget, not by how often `$ref`s repeat.
pub fn gemini_schema(json: &[u8]) {
    let Ok(root) = serde_json::from_slice::<Value>(json) else {
        return;
    };
    let out = gemini::schema(&root, &root, 0);
    assert!(
        out.as_object()
            .is_some_and(|node| node.contains_key("type") || node.contains_key("anyOf")),
        "{out}"
    );
    // Each budgeted node gives at most two values plus what it copies (bytes-budgeted); the
    // options and properties still open when the budget runs out each give a cut node.
    let bound = 4 * gemini::MAX_SCHEMA_NODES + gemini::MAX_SCHEMA_BYTES + 64 * values(&root);
    let size = values(&out);
    assert!(size <= bound, "{size} values from {} input values", values(&root));
}

/// The number of JSON values in `value`.
fn values(value: &Value) -> usize {
    let mut count = 0usize;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        count += 1;
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    count
}
