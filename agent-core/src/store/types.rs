use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::message::Message;
use crate::session::SessionId;

/// Milliseconds since the Unix epoch, as stores record times.
pub(crate) fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A session's metadata.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInfo {
    /// The id.
    pub id: SessionId,
    /// A title, if one was set.
    pub title: Option<String>,
    /// Creation time (ms since the epoch).
    pub created_at_ms: i64,
    /// Last change (ms since the epoch).
    pub updated_at_ms: i64,
}

impl SessionInfo {
    /// A new session created now.
    pub fn new(id: SessionId) -> Self {
        let now = now_millis();
        SessionInfo {
            id,
            title: None,
            created_at_ms: now,
            updated_at_ms: now,
        }
    }
}

/// A message as stored, with its sequence number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredMessage {
    /// Position in the session, from 1.
    pub seq: u64,
    /// The message.
    pub message: Message,
    /// When it was written (ms since the epoch).
    pub created_at_ms: i64,
}

/// The state machine of a tool call: pending → running → succeeded | failed | denied |
/// cancelled. A call can also go straight from pending to a final state (denied by the gate,
/// refused by validation, cancelled before it started).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallState {
    /// Requested by the model, not started.
    Pending,
    /// Running.
    Running,
    /// Finished with a result.
    Succeeded,
    /// Finished with an error (including refused arguments and timeouts).
    Failed,
    /// The gate refused it.
    Denied,
    /// Cancelled or interrupted.
    Cancelled,
}

impl ToolCallState {
    /// The lowercase name used in storage.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolCallState::Pending => "pending",
            ToolCallState::Running => "running",
            ToolCallState::Succeeded => "succeeded",
            ToolCallState::Failed => "failed",
            ToolCallState::Denied => "denied",
            ToolCallState::Cancelled => "cancelled",
        }
    }

    /// Parses the storage name.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "pending" => ToolCallState::Pending,
            "running" => ToolCallState::Running,
            "succeeded" => ToolCallState::Succeeded,
            "failed" => ToolCallState::Failed,
            "denied" => ToolCallState::Denied,
            "cancelled" => ToolCallState::Cancelled,
            _ => return None,
        })
    }

    /// Whether the call has finished.
    pub fn is_final(self) -> bool {
        !matches!(self, ToolCallState::Pending | ToolCallState::Running)
    }

    /// Whether moving from `self` to `next` is allowed (staying in the same state is, so
    /// writes can be repeated). Stores ignore a write of a state the record has already
    /// reached or passed, that is one where `next.can_become(self)` (see
    /// [`Store::upsert_tool_call`](super::Store::upsert_tool_call)).
    pub fn can_become(self, next: ToolCallState) -> bool {
        use ToolCallState::*;
        self == next
            || match self {
                Pending => next != Pending,
                Running => next.is_final(),
                _ => false,
            }
    }
}

/// One tool call's record: arguments, state, raw and compressed result, timings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    /// The call id.
    pub call_id: String,
    /// The session.
    pub session_id: SessionId,
    /// The tool's name.
    pub name: String,
    /// The arguments text as the model sent it.
    pub arguments: String,
    /// Where the call is in its state machine.
    pub state: ToolCallState,
    /// The full result text (before the model-facing cap).
    pub raw_result: Option<String>,
    /// The compressed result replayed in later turns, when it differs from the raw one.
    pub compressed_result: Option<String>,
    /// The error text, for failed, denied and cancelled calls.
    pub error: Option<String>,
    /// When the call started running (ms since the epoch).
    pub started_at_ms: Option<i64>,
    /// When the call finished (ms since the epoch).
    pub finished_at_ms: Option<i64>,
}

impl ToolCallRecord {
    /// A new pending record.
    pub fn pending(
        session_id: SessionId,
        call_id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCallRecord {
            call_id: call_id.into(),
            session_id,
            name: name.into(),
            arguments: arguments.into(),
            state: ToolCallState::Pending,
            raw_result: None,
            compressed_result: None,
            error: None,
            started_at_ms: None,
            finished_at_ms: None,
        }
    }
}

/// A compaction: the messages of a session up to `cursor` are summarised by `summary`, and only
/// the summary and the messages after the cursor are sent to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compaction {
    /// The session.
    pub session_id: SessionId,
    /// The last sequence number the summary covers.
    pub cursor: u64,
    /// The summary text.
    pub summary: String,
    /// When it was made (ms since the epoch).
    pub created_at_ms: i64,
}

/// A store failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The session does not exist.
    #[error("session {0} does not exist; create it first")]
    SessionNotFound(SessionId),
    /// The session already exists.
    #[error("session {0} already exists")]
    AlreadyExists(SessionId),
    /// Another writer appended to the session first.
    #[error(
        "sequence conflict in session {session}: expected to write seq {expected}, but the session's next seq is {actual}; another writer appended first; reload the history and retry"
    )]
    Conflict {
        /// The session.
        session: SessionId,
        /// The sequence number the caller tried to write.
        expected: u64,
        /// The sequence number the session actually expects next.
        actual: u64,
    },
    /// A tool-call state change that the state machine forbids.
    #[error("tool call {call_id}: cannot change state from {from} to {to}")]
    InvalidTransition {
        /// The call id.
        call_id: String,
        /// The stored state.
        from: &'static str,
        /// The requested state.
        to: &'static str,
    },
    /// The database file has a newer schema than this code understands.
    #[error(
        "the database schema is version {found}, newer than the {supported} this version of agent-store understands; upgrade agent-store instead of opening it with an older one"
    )]
    SchemaTooNew {
        /// The file's version.
        found: i64,
        /// The newest version this code knows.
        supported: i64,
    },
    /// The backend failed (I/O, disk full, corrupt file, ...).
    #[error("store backend error: {0}")]
    Backend(String),
}
