//! Errors thrown to JavaScript. Every message starts with `[code] `; the JS layer turns it
//! into an `AgentCoreError` subclass with a `code` property and the clean message.

use agent_core::{AgentError, ApprovalError, StoreError, ToolSetError};
use napi::{Error, Status};

/// An error with a stable code, thrown to JavaScript.
pub fn coded(code: &str, message: impl std::fmt::Display) -> Error {
    Error::new(Status::GenericFailure, format!("[{code}] {message}"))
}

/// Maps an [`AgentError`] to a coded error.
pub fn agent_error(e: AgentError) -> Error {
    let code = match &e {
        AgentError::NoProvider | AgentError::Unpriced(_) => "config",
        AgentError::NoRuntime => "runtime",
        AgentError::Tool(ToolSetError::Duplicate(_)) => "tool_duplicate",
        AgentError::Tool(ToolSetError::InvalidSchema { .. }) => "tool_invalid_schema",
        AgentError::SessionNotFound(_) | AgentError::Store(StoreError::SessionNotFound(_)) => "session_not_found",
        AgentError::Store(StoreError::AlreadyExists(_)) => "session_exists",
        AgentError::Store(_) => "store",
        #[allow(unreachable_patterns)]
        _ => "agent",
    };
    coded(code, e)
}

/// The error kept inside a fatal tool error: it points at the original JS error, which the JS
/// layer keeps until the run's outcome is read.
#[derive(Debug)]
pub struct JsErrorRef {
    /// The JS layer's id of the error object.
    pub id: u32,
    /// The error's message.
    pub message: String,
}

impl std::fmt::Display for JsErrorRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for JsErrorRef {}

/// A refused answer to a pending approval, with its code (`approval_*`, or `store`).
pub(crate) fn approval_error(e: ApprovalError) -> Error {
    let code = match &e {
        ApprovalError::NotPending(_) => "approval_not_pending",
        ApprovalError::Expired => "approval_expired",
        ApprovalError::MissingDecision(_) => "approval_missing_decision",
        ApprovalError::UnknownCall(_) => "approval_unknown_call",
        ApprovalError::InvalidArguments { .. } => "approval_invalid_arguments",
        ApprovalError::InvalidRemember { .. } => "approval_invalid_remember",
        ApprovalError::Store(_) => "store",
    };
    coded(code, e)
}
