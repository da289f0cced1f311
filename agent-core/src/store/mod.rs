//! Persistence: the [`Store`] trait the loop writes through, and [`MemoryStore`].
//!
//! The loop appends every message as it is produced and records every tool-call state change,
//! so a crash loses at most the in-flight model stream (and, with a write-behind store such as
//! `agent-store`'s SQLite one, the last few milliseconds of queued writes: the loop calls
//! [`Store::flush`] before a turn's outcome and before a gated tool, so neither a finished turn
//! nor a started side effect can be lost).

mod memory;
mod types;

use async_trait::async_trait;

use crate::message::Message;
use crate::session::SessionId;

pub use memory::MemoryStore;
pub(crate) use types::now_millis;
pub use types::{Compaction, SessionInfo, StoreError, StoredMessage, ToolCallRecord, ToolCallState};

/// The start of every key-value key the agent keeps for one session (its spend, say):
/// [`Store::delete_session`] deletes those entries with the session.
pub fn session_key_prefix(session: &SessionId) -> String {
    format!("agent_core.session/{session}/")
}

/// Where sessions, messages, tool-call records, compactions, parked runs and key-value pairs
/// live. Implementations must be safe to share between tasks and must never block the async
/// executor's threads.
#[async_trait]
pub trait Store: Send + Sync {
    /// Creates a session. Fails with [`StoreError::AlreadyExists`] if the id is taken.
    async fn create_session(&self, info: &SessionInfo) -> Result<(), StoreError>;

    /// Creates a session whose id this process just generated at random
    /// ([`SessionId::new_random`]), so it cannot be taken. A write-behind store may queue the
    /// write instead of waiting for it, like an append; a failure is then reported by
    /// [`Store::flush`] or the session's next write. The default is [`Store::create_session`].
    async fn create_generated_session(&self, info: &SessionInfo) -> Result<(), StoreError> {
        self.create_session(info).await
    }

    /// A session's metadata, `None` if it does not exist.
    async fn session(&self, id: &SessionId) -> Result<Option<SessionInfo>, StoreError>;

    /// Every session, most recently updated first.
    async fn list_sessions(&self) -> Result<Vec<SessionInfo>, StoreError>;

    /// Sets a session's title.
    async fn set_title(&self, id: &SessionId, title: &str) -> Result<(), StoreError>;

    /// Deletes a session and everything stored for it (messages, tool-call records,
    /// compactions, parked run, and the key-value entries whose keys start with
    /// [`session_key_prefix`]). A missing session is [`StoreError::SessionNotFound`]. The
    /// default refuses, for stores that keep everything forever.
    async fn delete_session(&self, id: &SessionId) -> Result<(), StoreError> {
        Err(StoreError::Backend(format!(
            "this store cannot delete sessions (asked to delete {id})"
        )))
    }

    /// Appends messages that get the sequence numbers `first_seq, first_seq + 1, ...`.
    /// `first_seq` must be at most one more than the session's last sequence number (1 for an
    /// empty session). Messages whose numbers are already taken must equal the stored ones
    /// (compared in the form the store keeps); only the messages past the last number are
    /// written, possibly none. So a durable executor that replays a journaled turn after a
    /// crash can repeat the appends the crashed attempt may already have made. A taken number
    /// holding a different message, a gap (`first_seq` beyond the next number) or 0 is
    /// [`StoreError::Conflict`] and writes nothing, so two writers to one session can never
    /// interleave. An empty append succeeds only at exactly the next number.
    ///
    /// A store may queue the write and return before it is durable (write-behind, see
    /// [`Store::flush`]); it must then apply its queued writes in order, so a crash loses only
    /// the newest ones.
    async fn append_messages(
        &self,
        session: &SessionId,
        first_seq: u64,
        messages: &[Message],
    ) -> Result<(), StoreError>;

    /// Messages with a sequence number greater than `after_seq`, in order (0 loads all).
    async fn load_messages(&self, session: &SessionId, after_seq: u64) -> Result<Vec<StoredMessage>, StoreError>;

    /// The session's last sequence number (0 when it has no messages).
    async fn last_seq(&self, session: &SessionId) -> Result<u64, StoreError>;

    /// Inserts or updates a tool-call record. A state change follows
    /// pending → running → succeeded | failed | denied | cancelled (or pending → a final state).
    /// A write of the state the record already has, or of one it has passed (running after
    /// succeeded, say), is accepted and ignored: the stored record stays as it is (the first
    /// writer wins), so a replayed turn can repeat its writes, late ones included. Moving from
    /// one final state to another is [`StoreError::InvalidTransition`]. Like appends, a store
    /// may queue the write; its failure is then reported by [`Store::flush`] or the session's
    /// next write.
    async fn upsert_tool_call(&self, record: &ToolCallRecord) -> Result<(), StoreError>;

    /// [`Store::upsert_tool_call`] of a record the caller has no further use for, which a
    /// store that keeps or queues records can take instead of copying (the loop writes every
    /// tool call's records this way). Same contract; the default writes `&record`.
    async fn upsert_tool_call_owned(&self, record: ToolCallRecord) -> Result<(), StoreError> {
        self.upsert_tool_call(&record).await
    }

    /// Waits until every write accepted so far for `session` is durable. A write-behind store
    /// returns here the first queued write of the session that failed (a full disk, say) and
    /// has not been reported yet. The loop flushes before a turn's outcome is returned and
    /// before a gated tool runs. The default does nothing: for stores whose writes are durable
    /// when they return.
    async fn flush(&self, session: &SessionId) -> Result<(), StoreError> {
        let _ = session;
        Ok(())
    }

    /// The session's tool-call records, oldest first.
    async fn tool_calls(&self, session: &SessionId) -> Result<Vec<ToolCallRecord>, StoreError>;

    /// Records a compaction: messages up to `cursor` are summarised by `summary`.
    async fn add_compaction(&self, compaction: &Compaction) -> Result<(), StoreError>;

    /// The session's latest compaction.
    async fn latest_compaction(&self, session: &SessionId) -> Result<Option<Compaction>, StoreError>;

    /// Stores (or with `None` clears) the state a turn is parked in, such as a pending
    /// clarification, so it survives a restart.
    async fn set_parked_run(&self, session: &SessionId, state: Option<&serde_json::Value>) -> Result<(), StoreError>;

    /// The state a turn of this session is parked in.
    async fn parked_run(&self, session: &SessionId) -> Result<Option<serde_json::Value>, StoreError>;

    /// Reads a value.
    async fn kv_get(&self, key: &str) -> Result<Option<String>, StoreError>;

    /// Writes a value.
    async fn kv_set(&self, key: &str, value: &str) -> Result<(), StoreError>;

    /// Deletes a value; deleting a missing key is not an error.
    async fn kv_delete(&self, key: &str) -> Result<(), StoreError>;
}
