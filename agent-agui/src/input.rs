//! AG-UI's `RunAgentInput`: what a client posts to start (or resume) a run. Fields this
//! adapter does not use (`state`, `tools`, `context`, `forwardedProps`) are accepted and
//! ignored; unknown fields too, so newer clients still work.

use serde::Deserialize;
use serde_json::Value;

/// The longest `threadId` or `runId` accepted, in bytes.
pub const MAX_ID_LEN: usize = 256;

/// The body of a run request.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunAgentInput {
    /// The conversation; mapped to a stored session (see [`crate::session_id_for_thread`]).
    pub thread_id: String,
    /// The run's id, echoed on `RUN_STARTED` and `RUN_FINISHED`.
    pub run_id: String,
    /// The messages the client holds; the last one, a user message, is the new turn's input.
    #[serde(default)]
    pub messages: Vec<InputMessage>,
    /// Answers to the interrupts that ended the previous run.
    #[serde(default)]
    pub resume: Option<Vec<ResumeEntry>>,
    /// The protocol version the client speaks.
    #[serde(default)]
    pub protocol_version: Option<String>,
}

/// One message of the client's history.
#[derive(Debug, Clone, Deserialize)]
pub struct InputMessage {
    /// The message's id.
    pub id: String,
    /// `user`, `assistant`, `tool`, `system`, ...
    pub role: String,
    /// A string, or (for user messages) a list of content parts.
    #[serde(default)]
    pub content: Option<Value>,
}

/// An answer to one interrupt.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumeEntry {
    /// The interrupt answered.
    pub interrupt_id: String,
    /// Whether it was answered or abandoned.
    pub status: ResumeStatus,
    /// The answer.
    #[serde(default)]
    pub payload: Option<Value>,
}

/// Whether an interrupt was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResumeStatus {
    /// Answered: the payload is the answer.
    Resolved,
    /// Abandoned.
    Cancelled,
}

/// A request the endpoint refuses with 400, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

impl RunAgentInput {
    /// Parses and checks a request body.
    pub fn parse(body: &[u8]) -> Result<Self, BadInput> {
        let input: RunAgentInput =
            serde_json::from_slice(body).map_err(|e| BadInput(format!("invalid RunAgentInput: {e}")))?;
        check_id("threadId", &input.thread_id)?;
        check_id("runId", &input.run_id)?;
        Ok(input)
    }

    /// The text of the last message, which must be a user message: the new turn's input.
    pub fn new_user_text(&self) -> Result<String, BadInput> {
        let Some(last) = self.messages.last() else {
            return Err(BadInput(
                "messages is empty: the last message must be the user message that starts the run".into(),
            ));
        };
        if last.role != "user" {
            return Err(BadInput(format!(
                "the last message must be a user message (the new turn's input), got role {:?}",
                last.role
            )));
        }
        let text = match &last.content {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Array(parts)) => text_of_parts(parts)?,
            _ => return Err(BadInput("the user message has no content".into())),
        };
        if text.trim().is_empty() {
            return Err(BadInput("the user message is empty".into()));
        }
        Ok(text)
    }
}

fn check_id(field: &str, value: &str) -> Result<(), BadInput> {
    if value.trim().is_empty() {
        return Err(BadInput(format!("{field} is empty")));
    }
    if value.len() > MAX_ID_LEN {
        return Err(BadInput(format!("{field} is longer than {MAX_ID_LEN} bytes")));
    }
    Ok(())
}

/// The text parts of a user message, joined; other parts (images, files) are refused.
fn text_of_parts(parts: &[Value]) -> Result<String, BadInput> {
    let mut texts = Vec::new();
    for part in parts {
        match (
            part.get("type").and_then(Value::as_str),
            part.get("text").and_then(Value::as_str),
        ) {
            (Some("text"), Some(text)) => texts.push(text),
            (kind, _) => {
                return Err(BadInput(format!(
                    "only text content is supported in user messages, got a {} part",
                    kind.unwrap_or("malformed")
                )));
            }
        }
    }
    Ok(texts.join("\n"))
}
