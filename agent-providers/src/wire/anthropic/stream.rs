//! The Messages event stream: event types and the decoder of text, thinking, tool use, usage
//! and stop reasons.

use std::collections::HashMap;

use agent_core::{FinishReason, ProviderError, StreamEvent, Usage};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::errors::{ErrorInfo, malformed_json};
use crate::limits::Limits;
use crate::sse::SseEvent;
use crate::transport::WireDecoder;
use crate::util::truncated_call_error;

#[derive(Deserialize)]
pub(super) struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
}

#[derive(Debug, Default, Clone, Copy)]
pub(super) struct UsageState {
    input: u64,
    cache_read: u64,
    cache_creation: u64,
    output: u64,
}

impl UsageState {
    /// Later reports are cumulative: each field present replaces the earlier value.
    pub(super) fn update(&mut self, u: &WireUsage) {
        if let Some(v) = u.input_tokens {
            self.input = v;
        }
        if let Some(v) = u.cache_read_input_tokens {
            self.cache_read = v;
        }
        if let Some(v) = u.cache_creation_input_tokens {
            self.cache_creation = v;
        }
        if let Some(v) = u.output_tokens {
            self.output = v;
        }
    }

    fn to_usage(self) -> Usage {
        Usage {
            // Saturating: a hostile server's counts must not overflow.
            input_tokens: self
                .input
                .saturating_add(self.cache_read)
                .saturating_add(self.cache_creation),
            output_tokens: self.output,
            cached_input_tokens: self.cache_read,
            cache_write_tokens: self.cache_creation,
            reasoning_tokens: 0,
        }
    }
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireEvent {
    MessageStart {
        message: StartMessage,
    },
    ContentBlockStart {
        index: u32,
        content_block: Value,
    },
    ContentBlockDelta {
        index: u32,
        delta: WireDelta,
    },
    ContentBlockStop {
        index: u32,
    },
    MessageDelta {
        delta: MessageDeltaBody,
        usage: Option<WireUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: Value,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct StartMessage {
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireDelta {
    TextDelta {
        text: String,
    },
    ThinkingDelta {
        thinking: String,
    },
    SignatureDelta {
        signature: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct MessageDeltaBody {
    stop_reason: Option<String>,
}

#[derive(Debug)]
pub(super) enum Block {
    Text,
    Thinking,
    ToolUse {
        id: String,
        name: String,
        open: bool,
        /// Bytes of arguments received.
        args_len: usize,
    },
    Other,
}

/// Decoder of the Messages event stream: text, thinking (with signature), redacted thinking,
/// `tool_use` with `input_json_delta`, cumulative usage, stop reasons, and `error` events that
/// arrive after HTTP 200.
#[derive(Debug, Default)]
pub struct AnthropicDecoder {
    pub(super) blocks: HashMap<u32, Block>,
    pub(super) usage: UsageState,
    pub(super) stop_reason: Option<String>,
    done: bool,
    /// Tool calls started.
    calls: usize,
    limits: Limits,
}

impl AnthropicDecoder {
    /// A decoder for one response, with the default [`Limits`].
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder for one response within `limits` (tool-call count and argument size).
    pub fn with_limits(limits: Limits) -> Self {
        AnthropicDecoder {
            limits,
            ..Self::default()
        }
    }

    pub(super) fn start_block(
        &mut self,
        index: u32,
        block: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        let str_of = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let kind = match block.get("type").and_then(Value::as_str).unwrap_or_default() {
            "text" => {
                let text = str_of("text");
                if !text.is_empty() {
                    out.push(StreamEvent::TextDelta { text });
                }
                Block::Text
            }
            "thinking" => {
                let text = str_of("thinking");
                if !text.is_empty() {
                    out.push(StreamEvent::ReasoningDelta { text });
                }
                let signature = str_of("signature");
                if !signature.is_empty() {
                    out.push(StreamEvent::ReasoningSignature { signature });
                }
                Block::Thinking
            }
            "redacted_thinking" => {
                out.push(StreamEvent::ReasoningOpaque { data: block.clone() });
                Block::Other
            }
            "tool_use" => {
                let (id, name) = (str_of("id"), str_of("name"));
                self.calls += 1;
                self.limits.check_tool_calls(self.calls)?;
                out.push(StreamEvent::ToolCallStart {
                    id: id.clone(),
                    name: name.clone(),
                    signature: None,
                });
                // A non-streamed body carries the whole input here.
                let mut args_len = 0;
                if let Some(input) = block
                    .get("input")
                    .filter(|i| i.as_object().is_some_and(|o| !o.is_empty()))
                {
                    let json = input.to_string();
                    args_len = json.len();
                    self.limits.check_tool_args(&name, args_len)?;
                    out.push(StreamEvent::ToolArgsDelta { id: id.clone(), json });
                }
                Block::ToolUse {
                    id,
                    name,
                    open: true,
                    args_len,
                }
            }
            _ => Block::Other,
        };
        self.blocks.insert(index, kind);
        Ok(())
    }

    fn on_wire(&mut self, event: WireEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        match event {
            WireEvent::MessageStart { message } => {
                if let Some(u) = message.usage {
                    self.usage.update(&u);
                }
            }
            WireEvent::ContentBlockStart { index, content_block } => self.start_block(index, &content_block, out)?,
            WireEvent::ContentBlockDelta { index, delta } => match (self.blocks.get_mut(&index), delta) {
                (Some(Block::Text), WireDelta::TextDelta { text }) if !text.is_empty() => {
                    out.push(StreamEvent::TextDelta { text })
                }
                (Some(Block::Thinking), WireDelta::ThinkingDelta { thinking }) if !thinking.is_empty() => {
                    out.push(StreamEvent::ReasoningDelta { text: thinking })
                }
                (Some(Block::Thinking), WireDelta::SignatureDelta { signature }) => {
                    out.push(StreamEvent::ReasoningSignature { signature })
                }
                (Some(Block::ToolUse { id, name, args_len, .. }), WireDelta::InputJsonDelta { partial_json })
                    if !partial_json.is_empty() =>
                {
                    *args_len = args_len.saturating_add(partial_json.len());
                    self.limits.check_tool_args(name, *args_len)?;
                    out.push(StreamEvent::ToolArgsDelta {
                        id: id.clone(),
                        json: partial_json,
                    })
                }
                (None, _) => {
                    return Err(ProviderError::Malformed(format!(
                        "content_block_delta for block {index}, which never started"
                    )));
                }
                _ => {}
            },
            WireEvent::ContentBlockStop { index } => {
                if let Some(Block::ToolUse { id, open, .. }) = self.blocks.get_mut(&index) {
                    *open = false;
                    out.push(StreamEvent::ToolCallEnd { id: id.clone() });
                }
            }
            WireEvent::MessageDelta { delta, usage } => {
                if delta.stop_reason.is_some() {
                    self.stop_reason = delta.stop_reason;
                }
                if let Some(u) = usage {
                    self.usage.update(&u);
                }
            }
            WireEvent::MessageStop => return self.finalize(out),
            WireEvent::Error { error } => {
                self.done = true;
                return Err(ErrorInfo::from_value(&json!({ "error": error })).into_stream_error(500));
            }
            WireEvent::Ping | WireEvent::Unknown => {}
        }
        Ok(())
    }

    pub(super) fn finalize(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        self.done = true;
        let mut calls: Vec<(&u32, &Block)> = self.blocks.iter().collect();
        calls.sort_by_key(|(i, _)| **i);
        for (_, block) in calls {
            if let Block::ToolUse {
                id, name, open: true, ..
            } = block
            {
                // max_tokens while the tool_use block was still open: its input is cut short.
                return Err(truncated_call_error(name, id));
            }
        }
        let has_calls = self.blocks.values().any(|b| matches!(b, Block::ToolUse { .. }));
        let reason = match self.stop_reason.as_deref() {
            None | Some("end_turn") | Some("stop_sequence") | Some("pause_turn") if has_calls => {
                FinishReason::ToolCalls
            }
            None | Some("end_turn") | Some("stop_sequence") => FinishReason::Stop,
            Some("tool_use") => FinishReason::ToolCalls,
            Some("max_tokens") | Some("model_context_window_exceeded") => FinishReason::Length,
            Some("refusal") => FinishReason::ContentFilter,
            Some(other) => FinishReason::Other(other.to_owned()),
        };
        out.push(StreamEvent::Usage {
            usage: self.usage.to_usage(),
        });
        out.push(StreamEvent::Done { finish_reason: reason });
        Ok(())
    }
}

impl WireDecoder for AnthropicDecoder {
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if self.done {
            return Ok(());
        }
        // Real data lines are right-padded with spaces; serde_json allows trailing whitespace.
        let wire: WireEvent =
            serde_json::from_str(&event.data).map_err(|e| malformed_json("a stream event", &event.data, &e))?;
        self.on_wire(wire, out)
    }

    fn on_end(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if self.done {
            return Ok(());
        }
        Err(ProviderError::Malformed(
            "the stream ended before message_stop (truncated response)".into(),
        ))
    }
}
