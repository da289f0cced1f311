//! The `alt=sse` stream: response types and the decoder of text, thoughts, function calls,
//! usage and finish reasons.

use agent_core::{FinishReason, ProviderError, StreamEvent, Usage};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::errors::{ErrorInfo, malformed_json};
use crate::limits::Limits;
use crate::sse::SseEvent;
use crate::transport::WireDecoder;
use crate::util::new_call_id;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WireResponse {
    candidates: Option<Vec<Candidate>>,
    usage_metadata: Option<WireUsage>,
    prompt_feedback: Option<PromptFeedback>,
    error: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    content: Option<Content>,
    finish_reason: Option<String>,
    index: Option<u32>,
}

#[derive(Deserialize)]
struct Content {
    parts: Option<Vec<Part>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Part {
    text: Option<String>,
    thought: Option<bool>,
    thought_signature: Option<String>,
    function_call: Option<FunctionCall>,
}

#[derive(Deserialize)]
struct FunctionCall {
    name: String,
    args: Option<Value>,
    id: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback {
    block_reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireUsage {
    prompt_token_count: Option<u64>,
    candidates_token_count: Option<u64>,
    thoughts_token_count: Option<u64>,
    cached_content_token_count: Option<u64>,
}

/// Decoder of the `alt=sse` stream (each event is a whole `GenerateContentResponse`; there is
/// no `[DONE]`: the end of the body ends the answer).
#[derive(Debug, Default)]
pub struct GeminiDecoder {
    finish: Option<FinishReason>,
    calls: usize,
    usage: Option<Usage>,
    limits: Limits,
}

impl GeminiDecoder {
    /// A decoder for one response, with the default [`Limits`].
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder for one response within `limits` (tool-call count and argument size).
    pub fn with_limits(limits: Limits) -> Self {
        GeminiDecoder {
            limits,
            ..Self::default()
        }
    }

    pub(super) fn on_response(&mut self, r: WireResponse, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if let Some(error) = r.error {
            return Err(ErrorInfo::from_value(&json!({ "error": error })).into_stream_error(500));
        }
        if let Some(u) = r.usage_metadata {
            let thoughts = u.thoughts_token_count.unwrap_or(0);
            // Cumulative: the last report wins.
            self.usage = Some(Usage {
                input_tokens: u.prompt_token_count.unwrap_or(0),
                // Saturating: a hostile server's counts must not overflow.
                output_tokens: u.candidates_token_count.unwrap_or(0).saturating_add(thoughts),
                cached_input_tokens: u.cached_content_token_count.unwrap_or(0),
                // Gemini does not report what it writes to its cache.
                cache_write_tokens: 0,
                reasoning_tokens: thoughts,
            });
        }
        let candidate = r
            .candidates
            .and_then(|c| c.into_iter().find(|c| c.index.unwrap_or(0) == 0));
        let Some(candidate) = candidate else {
            if let Some(reason) = r.prompt_feedback.and_then(|f| f.block_reason) {
                tracing::warn!(block_reason = %reason, "Gemini blocked the prompt");
                self.finish = Some(FinishReason::ContentFilter);
            }
            return Ok(());
        };
        for part in candidate.content.and_then(|c| c.parts).into_iter().flatten() {
            if let Some(call) = part.function_call {
                self.calls += 1;
                self.limits.check_tool_calls(self.calls)?;
                let json = call.args.map_or_else(|| "{}".to_owned(), |args| args.to_string());
                self.limits.check_tool_args(&call.name, json.len())?;
                let id = call.id.filter(|id| !id.is_empty()).unwrap_or_else(new_call_id);
                out.push(StreamEvent::ToolCallStart {
                    id: id.clone(),
                    name: call.name,
                    signature: part.thought_signature,
                });
                out.push(StreamEvent::ToolArgsDelta { id: id.clone(), json });
                out.push(StreamEvent::ToolCallEnd { id });
                continue;
            }
            let text = part.text.unwrap_or_default();
            if part.thought == Some(true) {
                if !text.is_empty() {
                    out.push(StreamEvent::ReasoningDelta { text });
                }
            } else if !text.is_empty() {
                out.push(StreamEvent::TextDelta { text });
            }
            if let Some(signature) = part.thought_signature {
                out.push(StreamEvent::ReasoningSignature { signature });
            }
        }
        if let Some(reason) = candidate.finish_reason {
            self.finish = Some(match reason.as_str() {
                "STOP" => FinishReason::Stop,
                "MAX_TOKENS" => FinishReason::Length,
                "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY" => {
                    FinishReason::ContentFilter
                }
                other => FinishReason::Other(other.to_owned()),
            });
        }
        Ok(())
    }

    pub(super) fn finalize(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let Some(mut reason) = self.finish.take() else {
            return Err(ProviderError::Malformed(
                "the stream ended before a finishReason (truncated response)".into(),
            ));
        };
        // Gemini says STOP even when the turn ends in function calls.
        if reason == FinishReason::Stop && self.calls > 0 {
            reason = FinishReason::ToolCalls;
        }
        if let Some(usage) = self.usage.take() {
            out.push(StreamEvent::Usage { usage });
        }
        out.push(StreamEvent::Done { finish_reason: reason });
        Ok(())
    }
}

impl WireDecoder for GeminiDecoder {
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let data = event.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(());
        }
        let response: WireResponse =
            serde_json::from_str(data).map_err(|e| malformed_json("a stream chunk", data, &e))?;
        self.on_response(response, out)
    }

    fn on_end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        self.finalize(out)
    }
}
