//! What a durable turn keeps in the agent's store besides the conversation: per run, its
//! invocation id and whether a cancel was asked for. Keys sit under the session's key prefix,
//! so they go with the session when it is deleted.

use agent_core::{SessionId, session_key_prefix};

/// The key of a run's invocation id.
pub(crate) fn invocation_key(session: &SessionId, run_id: &str) -> String {
    format!("{}durable/run/{run_id}/invocation", session_key_prefix(session))
}

/// The key of a run's cancel request.
pub(crate) fn cancel_key(session: &SessionId, run_id: &str) -> String {
    format!("{}durable/run/{run_id}/cancel", session_key_prefix(session))
}
