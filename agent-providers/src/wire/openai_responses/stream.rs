//! The Responses event stream: the decoder of text, reasoning summaries, function calls,
//! usage and how the response ended.

use agent_core::{FinishReason, ProviderError, StreamEvent};
use serde_json::Value;

use super::failure::{error_of, event_error};
use super::items::{Event, EventKind, Head, item_type, part_texts, str_field};
use super::replay::{call_marker, message_marker, reasoning_entry};
use crate::errors::malformed_json;
use crate::limits::Limits;
use crate::sse::SseEvent;
use crate::transport::WireDecoder;
use crate::util::{new_call_id, truncated_call_error};

/// One function call of the response.
#[derive(Debug)]
struct Call {
    /// `output_index` of its item.
    index: u64,
    /// The item id (`fc_...`), which argument deltas may name instead of the index.
    item_id: String,
    /// The call id (`call_...`) tool results answer.
    id: String,
    name: String,
    args: String,
    ended: bool,
}

/// Decoder of the Responses stream. Text and reasoning-summary deltas pass through as they
/// come; function calls are opened by `response.output_item.added` and fed by argument deltas
/// (a call whose item only arrives whole is taken whole); reasoning items with encrypted
/// content are kept as opaque reasoning (see `replay`); `Done` comes at `response.completed`
/// or `response.incomplete`, and `response.failed` or an `error` event is the call's error.
#[derive(Debug, Default)]
pub struct ResponsesDecoder {
    calls: Vec<Call>,
    /// The output item whose text or summary last streamed: its `done` event does not repeat
    /// it. Items stream one after another, so one index is enough (events without an index
    /// count as index `u64::MAX`, as in `response.output_item.done`).
    streamed: Option<u64>,
    /// `(output_index, part)` of the last reasoning text, to separate parts.
    reasoning_at: Option<(u64, u64)>,
    /// Whether the last reasoning item can be replayed: then the items after it are recorded.
    replaying: bool,
    refusal: bool,
    done: bool,
    limits: Limits,
}

impl ResponsesDecoder {
    /// A decoder for one response, with the default [`Limits`].
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder for one response within `limits` (tool-call count and argument size).
    pub fn with_limits(limits: Limits) -> Self {
        ResponsesDecoder {
            limits,
            ..Self::default()
        }
    }

    fn reasoning(&mut self, at: (u64, u64), text: &str, out: &mut Vec<StreamEvent>) {
        if text.is_empty() {
            return;
        }
        if self.reasoning_at.is_some_and(|last| last != at) {
            out.push(StreamEvent::ReasoningDelta { text: "\n\n".into() });
        }
        self.reasoning_at = Some(at);
        out.push(StreamEvent::ReasoningDelta { text: text.to_owned() });
    }

    fn find_call(&self, index: Option<u64>, item_id: Option<&str>) -> Option<usize> {
        self.calls.iter().position(|c| match (index, item_id) {
            (Some(i), _) if c.index == i => true,
            (_, Some(id)) => !id.is_empty() && c.item_id == id,
            _ => false,
        })
    }

    /// Opens the call of a `function_call` item.
    fn start_call(&mut self, index: u64, item: &Value, out: &mut Vec<StreamEvent>) -> Result<usize, ProviderError> {
        let name = str_field(item, "name").ok_or_else(|| {
            ProviderError::Malformed(format!("the function call at output index {index} has no name"))
        })?;
        self.limits.check_tool_calls(self.calls.len() + 1)?;
        let item_id = str_field(item, "id").unwrap_or_default().to_owned();
        let id = str_field(item, "call_id")
            .map(str::to_owned)
            .unwrap_or_else(new_call_id);
        if self.calls.iter().any(|c| c.id == id) {
            return Err(ProviderError::Malformed(format!(
                "function call id {id:?} appears twice"
            )));
        }
        out.push(StreamEvent::ToolCallStart {
            id: id.clone(),
            name: name.to_owned(),
            signature: None,
        });
        self.calls.push(Call {
            index,
            item_id,
            id,
            name: name.to_owned(),
            args: String::new(),
            ended: false,
        });
        let at = self.calls.len() - 1;
        if let Some(args) = str_field(item, "arguments") {
            self.add_args(at, args, out)?;
        }
        Ok(at)
    }

    fn add_args(&mut self, at: usize, args: &str, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let Some(call) = self.calls.get_mut(at) else {
            return Ok(());
        };
        if args.is_empty() || call.ended {
            return Ok(());
        }
        self.limits
            .check_tool_args(&call.name, call.args.len().saturating_add(args.len()))?;
        call.args.push_str(args);
        out.push(StreamEvent::ToolArgsDelta {
            id: call.id.clone(),
            json: args.to_owned(),
        });
        Ok(())
    }

    fn end_call(&mut self, at: usize, out: &mut Vec<StreamEvent>) {
        if let Some(call) = self.calls.get_mut(at)
            && !call.ended
        {
            call.ended = true;
            out.push(StreamEvent::ToolCallEnd { id: call.id.clone() });
        }
    }

    /// A finished output item (`response.output_item.done`, or an item of a whole response):
    /// what did not stream is emitted from it, and reasoning is recorded for the next request.
    pub(super) fn on_item_done(
        &mut self,
        index: u64,
        item: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        let streamed = self.streamed == Some(index);
        match item_type(item) {
            "message" => {
                if !streamed {
                    for text in part_texts(item, "content", "output_text", "text") {
                        push_text(text, out);
                    }
                    for text in part_texts(item, "content", "refusal", "refusal") {
                        self.refusal = true;
                        push_text(text, out);
                    }
                }
                if self.replaying
                    && let Some(id) = str_field(item, "id")
                {
                    out.push(StreamEvent::ReasoningOpaque {
                        data: message_marker(id),
                    });
                }
            }
            "reasoning" => {
                if !streamed {
                    let summary = part_texts(item, "summary", "summary_text", "text");
                    for (part, text) in (0u64..).zip(summary) {
                        self.reasoning((index, part), text, out);
                    }
                }
                let entry = reasoning_entry(item);
                self.replaying = entry.is_some();
                if let Some(data) = entry {
                    out.push(StreamEvent::ReasoningOpaque { data });
                }
            }
            "function_call" => {
                let at = match self.find_call(Some(index), str_field(item, "id")) {
                    Some(at) => at,
                    None => self.start_call(index, item, out)?,
                };
                let whole = str_field(item, "arguments");
                if let (Some(args), Some(call)) = (whole, self.calls.get(at))
                    && call.args.is_empty()
                {
                    self.add_args(at, args, out)?;
                }
                self.end_call(at, out);
                if self.replaying
                    && let (Some(id), Some(call)) = (str_field(item, "id"), self.calls.get(at))
                {
                    out.push(StreamEvent::ReasoningOpaque {
                        data: call_marker(id, &call.id),
                    });
                }
            }
            // Built-in tools (web search and the like) are not requested; nothing to show.
            _ => {}
        }
        Ok(())
    }

    /// The end of the response: usage, the finish reason, `Done`.
    pub(super) fn finish(&mut self, head: Head, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        self.done = true;
        if head.status.as_deref() == Some("failed") || head.error.as_ref().is_some_and(|e| !e.is_null()) {
            return Err(error_of(head.error.as_ref()));
        }
        let has_calls = !self.calls.is_empty();
        let reason = match head.status.as_deref() {
            Some("incomplete") => match head.incomplete_details.and_then(|d| d.reason).as_deref() {
                Some("max_output_tokens") => FinishReason::Length,
                Some("content_filter") => FinishReason::ContentFilter,
                Some(other) => FinishReason::Other(other.to_owned()),
                None => FinishReason::Other("incomplete".into()),
            },
            Some("cancelled") => FinishReason::Other("cancelled".into()),
            _ if has_calls => FinishReason::ToolCalls,
            _ if self.refusal => FinishReason::ContentFilter,
            _ => FinishReason::Stop,
        };
        if reason == FinishReason::Length
            && let Some(call) = self
                .calls
                .iter()
                .find(|c| serde_json::from_str::<Value>(&c.args).is_err())
        {
            return Err(truncated_call_error(&call.name, &call.id));
        }
        for at in 0..self.calls.len() {
            self.end_call(at, out);
        }
        if let Some(usage) = head.usage {
            out.push(StreamEvent::Usage {
                usage: usage.to_usage(),
            });
        }
        out.push(StreamEvent::Done { finish_reason: reason });
        Ok(())
    }

    fn on_data(&mut self, event: Event<'_>, kind: &str, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let index = event.output_index;
        match kind {
            "response.output_text.delta" | "response.refusal.delta" => {
                if kind == "response.refusal.delta" {
                    self.refusal = true;
                }
                if let Some(delta) = event.delta {
                    self.streamed = Some(index.unwrap_or(u64::MAX));
                    push_text(&delta, out);
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                if let Some(delta) = event.delta {
                    self.streamed = Some(index.unwrap_or(u64::MAX));
                    let part = event.summary_index.or(event.content_index).unwrap_or(0);
                    self.reasoning((index.unwrap_or(0), part), &delta, out);
                }
            }
            "response.output_item.added" => {
                if let Some(item) = event.item.filter(|i| item_type(i) == "function_call") {
                    let index = index.unwrap_or_else(|| u64::try_from(self.calls.len()).unwrap_or(u64::MAX));
                    if self.find_call(Some(index), str_field(&item, "id")).is_none() {
                        self.start_call(index, &item, out)?;
                    }
                }
            }
            "response.function_call_arguments.delta" | "response.function_call_arguments.done" => {
                let at = self.find_call(index, event.item_id.as_deref()).ok_or_else(|| {
                    ProviderError::Malformed(format!(
                        "function call arguments for an item that was never announced (output index {index:?})"
                    ))
                })?;
                let delta = event.delta.as_deref();
                if kind.ends_with(".delta") {
                    self.add_args(at, delta.unwrap_or_default(), out)?;
                } else if let Some(args) = event.arguments.as_deref()
                    && self.calls.get(at).is_some_and(|c| c.args.is_empty())
                {
                    self.add_args(at, args, out)?;
                }
            }
            "response.output_item.done" => {
                if let Some(item) = event.item {
                    self.on_item_done(index.unwrap_or(u64::MAX), &item, out)?;
                }
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                let mut head = event.response.unwrap_or_default();
                if kind == "response.failed" {
                    head.status = Some("failed".into());
                }
                self.finish(head, out)?;
            }
            "error" => {
                self.done = true;
                return Err(event_error(event.error, event.code, event.message));
            }
            // response.created, in_progress, content_part.*, *.done of text: nothing new.
            _ => {}
        }
        Ok(())
    }
}

fn push_text(text: &str, out: &mut Vec<StreamEvent>) {
    if !text.is_empty() {
        out.push(StreamEvent::TextDelta { text: text.to_owned() });
    }
}

/// The event types whose fields the decoder reads: one of them that does not parse is an error;
/// any other event that does not parse is skipped.
fn is_read(kind: &str) -> bool {
    matches!(
        kind,
        "response.output_text.delta"
            | "response.refusal.delta"
            | "response.reasoning_summary_text.delta"
            | "response.reasoning_text.delta"
            | "response.output_item.added"
            | "response.output_item.done"
            | "response.function_call_arguments.delta"
            | "response.function_call_arguments.done"
            | "response.completed"
            | "response.incomplete"
            | "response.failed"
            | "error"
    )
}

impl WireDecoder for ResponsesDecoder {
    fn on_event(&mut self, sse: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if self.done {
            return Ok(());
        }
        let data = sse.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(());
        }
        match serde_json::from_str::<Event>(data) {
            Ok(mut event) => {
                let kind = event.kind.take();
                self.on_data(event, kind.as_deref().unwrap_or(&sse.event), out)
            }
            Err(e) => {
                let kind = serde_json::from_str::<EventKind>(data)
                    .ok()
                    .and_then(|k| k.kind.map(|k| k.into_owned()))
                    .unwrap_or_else(|| sse.event.clone());
                if is_read(&kind) || kind.is_empty() {
                    return Err(malformed_json("a stream event", data, &e));
                }
                Ok(())
            }
        }
    }

    fn on_end(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if self.done {
            return Ok(());
        }
        Err(ProviderError::Malformed(
            "the stream ended before the response did (no response.completed)".into(),
        ))
    }
}
