//! AG-UI's `RunAgentInput`: what a client posts to start (or resume) a run. `context` and
//! `state` go to the model with the new user message, as data; `tools` (the client's own
//! tools) are offered to the model as external tools of the turn. `forwardedProps` is accepted
//! and ignored; unknown fields too, so newer clients still work.

use agent_core::untrusted::{Provenance, wrap_untrusted};
use agent_core::{ExternalTool, ExternalToolResult};
use serde::Deserialize;
use serde_json::Value;

/// The longest `threadId` or `runId` accepted, in bytes.
pub const MAX_ID_LEN: usize = 256;

/// The most `context` and `state` may add to the user message together, in bytes of text:
/// each run sends them again, so a client cannot fill the model's window with them.
pub const MAX_CONTEXT_BYTES: usize = 32 * 1024;

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
    /// What the client application says the agent should know (the page the person is on,
    /// their settings): sent to the model with the new user message, marked as data.
    #[serde(default)]
    pub context: Vec<ContextEntry>,
    /// The client's shared state: sent to the model with the new user message (as JSON,
    /// marked as data) unless it is `null` or `{}`.
    #[serde(default)]
    pub state: Option<Value>,
    /// The client's own tools (frontend tools): offered to the model with the agent's; a call
    /// of one ends the run for the client to run it, and the client's next run carries the
    /// result as a `tool` message.
    #[serde(default)]
    pub tools: Vec<ClientTool>,
}

/// One of the client's tools.
#[derive(Debug, Clone, Deserialize)]
pub struct ClientTool {
    /// The tool's name.
    pub name: String,
    /// What it does, for the model.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of its arguments (an object with no declared properties when absent).
    #[serde(default)]
    pub parameters: Option<Value>,
}

impl ClientTool {
    /// The tool as agent-core offers it to the model.
    pub fn to_external(&self) -> ExternalTool {
        let parameters = self
            .parameters
            .clone()
            .filter(|p| !p.is_null())
            .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}}));
        ExternalTool::new(self.name.clone(), self.description.clone(), parameters)
    }
}

/// One entry of the client's `context`.
#[derive(Debug, Clone, Deserialize)]
pub struct ContextEntry {
    /// What the value is.
    pub description: String,
    /// The value.
    pub value: String,
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
    /// For a `tool` message: the call it answers.
    #[serde(default, rename = "toolCallId")]
    pub tool_call_id: Option<String>,
    /// For a `tool` message: the error, when the client's tool failed.
    #[serde(default)]
    pub error: Option<String>,
}

impl InputMessage {
    /// A `tool` message as the result of its call: its error when it has one, else its text.
    pub fn tool_result(&self) -> Option<ExternalToolResult> {
        if self.role != "tool" {
            return None;
        }
        let call_id = self.tool_call_id.clone()?;
        let text = match &self.content {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        Some(match self.error.as_deref().filter(|e| !e.is_empty()) {
            Some(error) => ExternalToolResult::error(call_id, error),
            None => ExternalToolResult::ok(call_id, text),
        })
    }
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

    /// The client's tools as the turn's external tools.
    pub fn external_tools(&self) -> Vec<ExternalTool> {
        self.tools.iter().map(ClientTool::to_external).collect()
    }

    /// The results the trailing `tool` messages carry (those after the last message of another
    /// role), in order; empty when the last message is not a `tool` message.
    pub fn trailing_tool_results(&self) -> Vec<ExternalToolResult> {
        let trailing = self.messages.iter().rev().take_while(|m| m.role == "tool").count();
        self.messages[self.messages.len() - trailing..]
            .iter()
            .filter_map(InputMessage::tool_result)
            .collect()
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

    /// The new turn's message: the user's text, then the client's `context` and `state`, if
    /// any, in one block of untrusted data (the client relays them; they may carry page text).
    pub fn turn_text(&self) -> Result<String, BadInput> {
        let mut text = self.new_user_text()?;
        if let Some(data) = self.client_data()? {
            let source = Provenance::new("the client application (AG-UI context and state)");
            text.push_str("\n\n");
            text.push_str(&wrap_untrusted(&source, &data));
        }
        Ok(text)
    }

    /// `context` and `state` rendered for the model, or `None` when there is neither.
    fn client_data(&self) -> Result<Option<String>, BadInput> {
        let mut data = String::new();
        for entry in &self.context {
            data.push_str("Context: ");
            data.push_str(entry.description.trim());
            data.push('\n');
            data.push_str(entry.value.trim());
            data.push_str("\n\n");
        }
        let state = self
            .state
            .as_ref()
            .filter(|s| !s.is_null() && s.as_object().is_none_or(|o| !o.is_empty()));
        if let Some(state) = state {
            let json = serde_json::to_string_pretty(state).map_err(|e| BadInput(format!("invalid state: {e}")))?;
            data.push_str("State:\n");
            data.push_str(&json);
        }
        let data = data.trim_end();
        if data.len() > MAX_CONTEXT_BYTES {
            return Err(BadInput(format!(
                "context and state come to {} bytes; at most {MAX_CONTEXT_BYTES} are sent to the model with each run: send less, or keep large data in a tool the agent can call",
                data.len()
            )));
        }
        Ok((!data.is_empty()).then(|| data.to_owned()))
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
