//! What a turn's external tools are, what a turn parked on their calls holds, and how the host
//! answers (the lifecycle is in `external_tools`; these types stand alone so that outcomes can
//! carry them).

use serde::{Deserialize, Serialize};

use crate::gate::TurnOrigin;
use crate::store::StoreError;

/// A tool the host runs itself, offered to the model for one turn (an AG-UI client's
/// frontend tool, say): the model sees its schema like any other, and a call of it parks the
/// turn until the host submits the result ([`Session::submit_tool_results`](crate::Session::submit_tool_results)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExternalTool {
    /// The tool's name; it must not be one of the agent's own tools.
    pub name: String,
    /// What the tool does, written for the model.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

impl ExternalTool {
    /// An external tool.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: serde_json::Value) -> Self {
        ExternalTool {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }
}

/// One call of an external tool, waiting for the host to run it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExternalCall {
    /// The call's id (submit its result with it).
    pub call_id: String,
    /// The tool.
    pub name: String,
    /// The arguments, checked against the tool's schema.
    pub arguments: serde_json::Value,
}

/// A turn parked until the host runs the calls of its external tools: the outcome of a turn
/// whose model called one (`awaiting_tools`), persisted through the store so that the results
/// can be submitted after a restart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingToolCalls {
    /// The parked turn's id (submit the results with it).
    pub id: String,
    /// The calls the host must run, in the model's order.
    pub calls: Vec<ExternalCall>,
    /// Who started the turn.
    #[serde(default)]
    pub origin: TurnOrigin,
    /// When the turn parked (ms since the epoch).
    pub asked_at_ms: i64,
}

/// The host's result of one [`ExternalCall`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExternalToolResult {
    /// The call it answers.
    pub call_id: String,
    /// The result as the model reads it.
    pub content: String,
    /// Whether the call failed (the model reads `content` as the error).
    #[serde(default)]
    pub is_error: bool,
}

impl ExternalToolResult {
    /// A successful result.
    pub fn ok(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        ExternalToolResult {
            call_id: call_id.into(),
            content: content.into(),
            is_error: false,
        }
    }

    /// A failed call: the model reads `message` as the error.
    pub fn error(call_id: impl Into<String>, message: impl Into<String>) -> Self {
        ExternalToolResult {
            call_id: call_id.into(),
            content: message.into(),
            is_error: true,
        }
    }
}

/// Why external tools or their results were refused. Refused results leave the calls pending.
#[derive(Debug, thiserror::Error)]
pub enum ExternalToolError {
    /// An external tool has the name of one of the agent's own tools (or of another external
    /// tool of the turn).
    #[error(
        "external tool {0:?} has the name of a tool the agent already has (or is offered twice); rename it on the host's side"
    )]
    NameClash(String),
    /// An external tool's parameters are not a valid JSON Schema.
    #[error("external tool {name:?} has parameters that are not a valid JSON Schema: {reason}")]
    InvalidSchema {
        /// The tool.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// No turn of the session is parked on external calls with this id.
    #[error("no pending tool calls {0} in this session (they were answered or dismissed)")]
    NotPending(String),
    /// A pending call got no result.
    #[error("no result for call {0}; submit one result per pending call; the calls are still pending")]
    MissingResult(String),
    /// A result names a call that is not pending.
    #[error("call {0} is not one of the pending calls; the calls are still pending")]
    UnknownCall(String),
    /// Two results for the same call.
    #[error("two results for call {0}; the calls are still pending")]
    DuplicateResult(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}
