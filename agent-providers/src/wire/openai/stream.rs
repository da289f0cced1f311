//! The Chat Completions stream: chunk types and the decoder that assembles tool calls,
//! reasoning and usage from them.

use agent_core::{FinishReason, ProviderError, StreamEvent, Usage};
use serde::Deserialize;
use serde_json::{Value, json};

use super::reasoning_details::ReasoningDetails;
use crate::errors::{ErrorInfo, malformed_json};
use crate::limits::Limits;
use crate::sse::SseEvent;
use crate::transport::WireDecoder;
use crate::util::{Text, new_call_id, truncated_call_error};

#[derive(Deserialize)]
pub(super) struct Chunk<'a> {
    #[serde(borrow)]
    pub(super) choices: Option<Vec<Choice<'a>>>,
    pub(super) usage: Option<WireUsage>,
    pub(super) error: Option<Value>,
}

#[derive(Deserialize)]
pub(super) struct Choice<'a> {
    index: Option<u32>,
    #[serde(borrow)]
    pub(super) delta: Option<Delta<'a>>,
    #[serde(borrow)]
    pub(super) message: Option<Delta<'a>>,
    #[serde(borrow)]
    pub(super) finish_reason: Option<Text<'a>>,
}

#[derive(Deserialize)]
pub(super) struct Delta<'a> {
    #[serde(borrow)]
    content: Option<Text<'a>>,
    #[serde(borrow)]
    reasoning_content: Option<Text<'a>>,
    #[serde(borrow)]
    reasoning: Option<Text<'a>>,
    #[serde(borrow)]
    refusal: Option<Text<'a>>,
    #[serde(borrow)]
    pub(super) tool_calls: Option<Vec<ToolCallDelta<'a>>>,
    reasoning_details: Option<Vec<Value>>,
}

#[derive(Deserialize)]
pub(super) struct ToolCallDelta<'a> {
    pub(super) index: Option<u32>,
    #[serde(borrow)]
    id: Option<Text<'a>>,
    #[serde(borrow)]
    function: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
struct FunctionDelta<'a> {
    #[serde(borrow)]
    name: Option<Text<'a>>,
    #[serde(borrow)]
    arguments: Option<Text<'a>>,
}

#[derive(Deserialize)]
pub(super) struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    prompt_tokens_details: Option<PromptDetails>,
    completion_tokens_details: Option<CompletionDetails>,
    /// DeepSeek's cache counter.
    prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct PromptDetails {
    cached_tokens: Option<u64>,
    /// OpenRouter's count of cache writes (for the models that charge for them).
    cache_write_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct CompletionDetails {
    reasoning_tokens: Option<u64>,
}

impl WireUsage {
    pub(super) fn to_usage(&self) -> Usage {
        Usage {
            input_tokens: self.prompt_tokens,
            output_tokens: self.completion_tokens,
            // DeepSeek's own counter first: it is what DeepSeek bills, and its copy in
            // `prompt_tokens_details` can lag it (a recorded stream has a hit of 1 and
            // `cached_tokens` 0).
            cached_input_tokens: self
                .prompt_cache_hit_tokens
                .or_else(|| self.prompt_tokens_details.as_ref().and_then(|d| d.cached_tokens))
                .unwrap_or(0),
            // OpenAI and DeepSeek report no cache writes (they cache on their own, at no extra
            // charge); OpenRouter does, for the models it serves that charge for them.
            cache_write_tokens: self
                .prompt_tokens_details
                .as_ref()
                .and_then(|d| d.cache_write_tokens)
                .unwrap_or(0),
            reasoning_tokens: self
                .completion_tokens_details
                .as_ref()
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or(0),
        }
    }
}

#[derive(Debug, Default)]
struct Slot {
    index: u32,
    id: String,
    name: String,
    started: bool,
    ended: bool,
    args: String,
}

/// Decoder of the Chat Completions stream. Tool calls are assembled by `index` (a missing
/// index takes the next free slot), `reasoning_content`/`reasoning` become reasoning,
/// `reasoning_details` are merged by index and kept as opaque reasoning, and `Done` comes at
/// `[DONE]` (or at the end of a body that had a finish reason).
#[derive(Debug, Default)]
pub struct OpenAiDecoder {
    slots: Vec<Slot>,
    pub(super) finish: Option<String>,
    refusal: bool,
    done: bool,
    details: ReasoningDetails,
    limits: Limits,
}

impl OpenAiDecoder {
    /// A decoder for one response, with the default [`Limits`].
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder for one response within `limits` (tool-call count and argument size).
    pub fn with_limits(limits: Limits) -> Self {
        OpenAiDecoder {
            limits,
            ..Self::default()
        }
    }

    pub(super) fn on_delta(&mut self, delta: Delta<'_>, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        for text in [delta.reasoning_content, delta.reasoning].into_iter().flatten() {
            if !text.is_empty() {
                out.push(StreamEvent::ReasoningDelta {
                    text: text.into_owned(),
                });
            }
        }
        if let Some(details) = delta.reasoning_details {
            for d in details {
                self.details.merge(d);
            }
        }
        if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
            out.push(StreamEvent::TextDelta {
                text: text.into_owned(),
            });
        }
        if let Some(text) = delta.refusal.filter(|t| !t.is_empty()) {
            self.refusal = true;
            out.push(StreamEvent::TextDelta {
                text: text.into_owned(),
            });
        }
        for call in delta.tool_calls.into_iter().flatten() {
            self.on_tool_delta(call, out)?;
        }
        Ok(())
    }

    fn on_tool_delta(&mut self, call: ToolCallDelta<'_>, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let pos = match call.index {
            Some(index) => self.slots.iter().position(|s| s.index == index),
            // No index (older Ollama): a fragment with an id opens the next slot, one without
            // continues the last call.
            None if call.id.is_some() => None,
            None => self.slots.len().checked_sub(1),
        };
        let pos = match pos {
            Some(p) => p,
            None => {
                self.limits.check_tool_calls(self.slots.len() + 1)?;
                let index = call
                    .index
                    .unwrap_or_else(|| self.slots.iter().map(|s| s.index.saturating_add(1)).max().unwrap_or(0));
                self.slots.push(Slot {
                    index,
                    ..Slot::default()
                });
                self.slots.len() - 1
            }
        };
        let slot = &mut self.slots[pos];
        if let Some(id) = call.id.filter(|id| !id.is_empty())
            && slot.id.is_empty()
        {
            slot.id = id.into_owned();
        }
        let (name, args) = match call.function {
            Some(f) => (f.name, f.arguments),
            None => (None, None),
        };
        if let Some(name) = name.filter(|n| !n.is_empty())
            && slot.name.is_empty()
        {
            slot.name = name.into_owned();
        }
        if !slot.started && !slot.name.is_empty() {
            if slot.id.is_empty() {
                slot.id = new_call_id();
            }
            slot.started = true;
            out.push(StreamEvent::ToolCallStart {
                id: slot.id.clone(),
                name: slot.name.clone(),
                signature: None,
            });
            if !slot.args.is_empty() {
                out.push(StreamEvent::ToolArgsDelta {
                    id: slot.id.clone(),
                    json: slot.args.clone(),
                });
            }
        }
        if let Some(args) = args.filter(|a| !a.is_empty()) {
            self.limits
                .check_tool_args(&slot.name, slot.args.len().saturating_add(args.len()))?;
            slot.args.push_str(&args);
            if slot.started {
                out.push(StreamEvent::ToolArgsDelta {
                    id: slot.id.clone(),
                    json: args.into_owned(),
                });
            }
        }
        Ok(())
    }

    fn close_calls(&mut self, out: &mut Vec<StreamEvent>) {
        for slot in &mut self.slots {
            if slot.started && !slot.ended {
                slot.ended = true;
                out.push(StreamEvent::ToolCallEnd { id: slot.id.clone() });
            }
        }
    }

    pub(super) fn finalize(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        self.done = true;
        if let Some(slot) = self.slots.iter().find(|s| !s.started) {
            return Err(ProviderError::Malformed(format!(
                "tool call at index {} never named its function",
                slot.index
            )));
        }
        let reason = map_finish(
            self.finish.as_deref().unwrap_or("stop"),
            !self.slots.is_empty(),
            self.refusal,
        );
        if reason == FinishReason::Length
            && let Some(slot) = self
                .slots
                .iter()
                .find(|s| serde_json::from_str::<Value>(&s.args).is_err())
        {
            return Err(truncated_call_error(&slot.name, &slot.id));
        }
        self.close_calls(out);
        for data in self.details.drain() {
            out.push(StreamEvent::ReasoningOpaque { data });
        }
        out.push(StreamEvent::Done { finish_reason: reason });
        Ok(())
    }
}

impl WireDecoder for OpenAiDecoder {
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if self.done {
            return Ok(());
        }
        let data = event.data.trim();
        if data == "[DONE]" {
            if self.finish.is_none() {
                return Err(ProviderError::Malformed(
                    "the stream ended ([DONE]) before any finish_reason".into(),
                ));
            }
            return self.finalize(out);
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| malformed_json("a stream chunk", data, &e))?;
        if let Some(error) = chunk.error {
            return Err(ErrorInfo::from_value(&json!({ "error": error })).into_stream_error(500));
        }
        for choice in chunk.choices.into_iter().flatten() {
            if choice.index.unwrap_or(0) != 0 {
                continue;
            }
            if let Some(delta) = choice.delta.or(choice.message) {
                self.on_delta(delta, out)?;
            }
            if let Some(reason) = choice.finish_reason
                && self.finish.is_none()
            {
                self.finish = Some(reason.into_owned());
                self.close_calls(out);
            }
        }
        if let Some(usage) = chunk.usage {
            out.push(StreamEvent::Usage {
                usage: usage.to_usage(),
            });
        }
        Ok(())
    }

    fn on_end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if self.done {
            return Ok(());
        }
        if self.finish.is_none() {
            return Err(ProviderError::Malformed(
                "the stream ended before the model finished (no finish_reason, no [DONE])".into(),
            ));
        }
        self.finalize(out)
    }
}

fn map_finish(reason: &str, has_calls: bool, refusal: bool) -> FinishReason {
    match reason {
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        // Some servers (older Ollama) end tool calls with "stop".
        "stop" | "end_turn" | "eos" if has_calls => FinishReason::ToolCalls,
        "stop" | "end_turn" | "eos" if refusal => FinishReason::ContentFilter,
        "stop" | "end_turn" | "eos" => FinishReason::Stop,
        "length" | "max_tokens" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}
