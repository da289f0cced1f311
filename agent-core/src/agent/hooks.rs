//! Lifecycle hooks: code the host runs at fixed points of every turn, to edit what the model
//! is sent (redaction), decide or rewrite a tool call, rewrite a tool's result, or see how a
//! turn ended. A hook that fails ends the turn with [`ErrorKind::Hook`](crate::ErrorKind::Hook)
//! naming the hook point and its message.
//!
//! Hooks run in the order they were added ([`AgentBuilder::hooks`](crate::AgentBuilder::hooks)).
//! An agent without hooks pays nothing for them.

use super::Outcome;
use crate::gate::TurnOrigin;
use crate::provider::{ModelRequest, ModelResponse};
use crate::session::SessionId;
use crate::tool::{ToolError, ToolOutput};
use async_trait::async_trait;

/// Why a hook failed: the turn ends with this message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct HookError(pub String);

impl HookError {
    /// A hook failure with this message.
    pub fn new(message: impl Into<String>) -> Self {
        HookError(message.into())
    }
}

/// What [`Hooks::before_tool_call`] decides.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolCallDecision {
    /// Run the call as it is (on to the gate, if the tool is gated).
    Allow,
    /// Do not run it: the model gets a failed result saying so, with `reason`, and the turn
    /// goes on.
    Deny {
        /// What the model is told.
        reason: String,
    },
    /// Run it with these arguments instead. They are checked against the tool's schema again;
    /// arguments that do not match fail the call like the model's own would.
    Rewrite {
        /// The new arguments (a JSON object).
        arguments: serde_json::Value,
    },
}

/// One tool call as hooks see it.
#[derive(Debug, Clone, Copy)]
pub struct ToolCallInfo<'a> {
    /// The session the call belongs to.
    pub session_id: &'a SessionId,
    /// The call's id, as the model gave it.
    pub call_id: &'a str,
    /// The tool's name.
    pub tool: &'a str,
    /// The arguments, checked against the tool's schema.
    pub arguments: &'a serde_json::Value,
    /// Who started the turn.
    pub origin: &'a TurnOrigin,
}

/// Code the host runs at fixed points of every turn. Every method has a default that does
/// nothing; implement the ones you need.
#[async_trait]
pub trait Hooks: Send + Sync {
    /// Before each model call, with the request as it will be sent (after compaction): may
    /// edit it, for example to redact secrets from the messages.
    async fn before_model_call(&self, session: &SessionId, request: &mut ModelRequest) -> Result<(), HookError> {
        let _ = (session, request);
        Ok(())
    }

    /// After each model call, before its message is stored and its tool calls run: may edit
    /// the response.
    async fn after_model_call(&self, session: &SessionId, response: &mut ModelResponse) -> Result<(), HookError> {
        let _ = (session, response);
        Ok(())
    }

    /// Before each tool call whose arguments passed the schema, before the gate: allow, deny
    /// with a reason the model sees, or rewrite the arguments.
    async fn before_tool_call(&self, call: ToolCallInfo<'_>) -> Result<ToolCallDecision, HookError> {
        let _ = call;
        Ok(ToolCallDecision::Allow)
    }

    /// After each tool call that ran, before its result is capped, stored and shown to the
    /// model: may rewrite the result (for example redact a secret a command printed). A
    /// timeout or a crash of the tool comes as an error for the model.
    async fn after_tool_call(
        &self,
        call: ToolCallInfo<'_>,
        result: &mut Result<ToolOutput, ToolError>,
    ) -> Result<(), HookError> {
        let _ = (call, result);
        Ok(())
    }

    /// Once a turn ended, whatever its outcome, before the outcome is returned.
    async fn turn_ended(&self, session: &SessionId, outcome: &Outcome) -> Result<(), HookError> {
        let _ = (session, outcome);
        Ok(())
    }
}
