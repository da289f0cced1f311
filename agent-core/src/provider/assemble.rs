use futures::StreamExt;

use super::{EventStream, FinishReason, ModelResponse, ProviderError, StreamEvent, Usage};
use crate::message::{ContentPart, Message, Reasoning, ToolCall};

/// Builds a [`ModelResponse`] from [`StreamEvent`]s, in the order they arrive.
///
/// Tool-call argument pieces are joined per call id; calls keep the order in which they started.
#[derive(Debug, Default)]
pub struct ResponseAssembler {
    text: String,
    reasoning: Option<Box<Reasoning>>,
    calls: Vec<ToolCall>,
    usage: Option<Usage>,
    finish_reason: Option<FinishReason>,
    served_by: Option<(String, String)>,
}

impl ResponseAssembler {
    /// An empty assembler.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether any answer text or tool call has arrived (used to decide whether a fallback
    /// route may still take over).
    pub fn has_content(&self) -> bool {
        !self.text.is_empty() || !self.calls.is_empty() || self.reasoning.is_some()
    }

    /// Adds one event.
    pub fn push(&mut self, event: StreamEvent) -> Result<(), ProviderError> {
        match event {
            StreamEvent::Served { provider, model } => self.served_by = Some((provider, model)),
            StreamEvent::TextDelta { text } => self.text.push_str(&text),
            StreamEvent::ReasoningDelta { text } => {
                self.reasoning.get_or_insert_with(Box::default).text.push_str(&text)
            }
            StreamEvent::ReasoningSignature { signature } => {
                self.reasoning.get_or_insert_with(Box::default).signature = Some(signature)
            }
            StreamEvent::ReasoningOpaque { data } => self.reasoning.get_or_insert_with(Box::default).opaque.push(data),
            StreamEvent::ToolCallStart { id, name, signature } => {
                if self.calls.iter().any(|c| c.id == id) {
                    return Err(ProviderError::Malformed(format!("tool call id {id:?} started twice")));
                }
                // Room for one: most responses call one tool, and the message keeps this
                // vector for the session's lifetime (a vector's first growth makes room for 4).
                if self.calls.capacity() == 0 {
                    self.calls.reserve_exact(1);
                }
                self.calls.push(ToolCall {
                    id,
                    name,
                    arguments: String::new(),
                    signature,
                });
            }
            StreamEvent::ToolArgsDelta { id, json } => {
                let call =
                    self.calls.iter_mut().rev().find(|c| c.id == id).ok_or_else(|| {
                        ProviderError::Malformed(format!("arguments for unknown tool call id {id:?}"))
                    })?;
                call.arguments.push_str(&json);
            }
            StreamEvent::ToolCallEnd { .. } => {}
            StreamEvent::Usage { usage } => self.usage = Some(usage),
            StreamEvent::Done { finish_reason } => self.finish_reason = Some(finish_reason),
        }
        Ok(())
    }

    /// Whether a `Done` event has arrived.
    pub fn is_done(&self) -> bool {
        self.finish_reason.is_some()
    }

    /// The response so far. A stream that ended without `Done` is reported by the caller; here
    /// a missing finish reason is inferred from the content.
    pub fn finish(self) -> ModelResponse {
        let finish_reason = self.finish_reason.unwrap_or(if self.calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        });
        let content = if self.text.is_empty() {
            Vec::new()
        } else {
            let mut text = self.text;
            text.shrink_to_fit();
            vec![ContentPart::text(text)]
        };
        // The buffers grew by doubling while the stream came in; the message may stay in the
        // history for the session's lifetime, so it keeps only what it holds.
        let mut calls = self.calls;
        for call in &mut calls {
            call.arguments.shrink_to_fit();
        }
        let mut message = Message::assistant_with_tools(String::new(), calls);
        message.content = content;
        message.reasoning = self.reasoning;
        ModelResponse {
            message,
            usage: self.usage,
            finish_reason,
            served_by: self.served_by,
        }
    }
}

/// Collects a whole event stream into a [`ModelResponse`]. A stream that ends without a `Done`
/// event is reported as [`ProviderError::Malformed`] (the response was cut off).
pub async fn collect_stream(mut stream: EventStream) -> Result<ModelResponse, ProviderError> {
    let mut assembler = ResponseAssembler::new();
    while let Some(event) = stream.next().await {
        assembler.push(event?)?;
    }
    if !assembler.is_done() {
        return Err(ProviderError::Malformed(
            "the response stream ended before the model finished".into(),
        ));
    }
    Ok(assembler.finish())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn start(id: &str) -> StreamEvent {
        StreamEvent::ToolCallStart {
            id: id.to_owned(),
            name: "step".to_owned(),
            signature: None,
        }
    }

    fn args(id: &str, json: &str) -> StreamEvent {
        StreamEvent::ToolArgsDelta {
            id: id.to_owned(),
            json: json.to_owned(),
        }
    }

    /// The assistant message stays in the history for the session's lifetime: it holds its
    /// calls and their arguments without the room the stream's growth left.
    #[test]
    fn the_message_keeps_no_spare_room_from_the_stream() {
        let mut one = ResponseAssembler::new();
        one.push(start("a")).unwrap();
        for piece in ["{\"query\":", " \"rust", " agents\"", "}"] {
            one.push(args("a", piece)).unwrap();
        }
        let message = one.finish().message;
        assert_eq!(message.tool_calls.len(), 1);
        assert_eq!(message.tool_calls.capacity(), 1);
        let call = &message.tool_calls[0];
        assert_eq!(call.arguments, "{\"query\": \"rust agents\"}");
        assert_eq!(call.arguments.capacity(), call.arguments.len());

        let mut three = ResponseAssembler::new();
        for id in ["a", "b", "c"] {
            three.push(start(id)).unwrap();
            three.push(args(id, "{}")).unwrap();
        }
        let calls = three.finish().message.tool_calls;
        assert_eq!(calls.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["a", "b", "c"]);
    }
}
