//! The `tool_calls` table: records and their state machine.

use tokio_postgres::Row;

use agent_core::{SessionId, StoreError, ToolCallRecord, ToolCallState};

use crate::error::{backend, utf8, utf8_opt};
use crate::now_millis;
use crate::store::PostgresStore;

/// Inserts the record, or updates it only if the state machine allows a change (see
/// [`ToolCallState::can_become`]): the transition check is the `WHERE` of the upsert, so it
/// holds against concurrent writers too. A record of the stored state, or of one the call
/// has passed, updates nothing (a replayed write; see `write_tool_call`). Selecting the
/// session's key in the same statement makes a missing session insert nothing.
const UPSERT: &str = "INSERT INTO tool_calls (session_key, call_id, name, arguments, state, raw_result,
        compressed_result, error, started_at, finished_at, created_at)
     SELECT key, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 FROM sessions WHERE id = $1
     ON CONFLICT (session_key, call_id) DO UPDATE SET
        name = excluded.name, arguments = excluded.arguments, state = excluded.state,
        raw_result = excluded.raw_result, compressed_result = excluded.compressed_result,
        error = excluded.error, started_at = excluded.started_at, finished_at = excluded.finished_at
     WHERE (tool_calls.state = 'pending' AND excluded.state <> 'pending')
        OR (tool_calls.state = 'running' AND excluded.state NOT IN ('pending', 'running'))";

const COLUMNS: &str = "call_id, name, arguments, state, raw_result, compressed_result, error, started_at, finished_at";

fn bytes(s: &Option<String>) -> Option<&[u8]> {
    s.as_deref().map(str::as_bytes)
}

fn read_tool_call(row: &Row, session: &SessionId) -> Result<ToolCallRecord, StoreError> {
    let state: &str = row.get(3);
    Ok(ToolCallRecord {
        call_id: utf8("tool call id", row.get(0))?,
        session_id: session.clone(),
        name: utf8("tool name", row.get(1))?,
        arguments: utf8("tool arguments", row.get(2))?,
        state: ToolCallState::parse(state)
            .ok_or_else(|| StoreError::Backend(format!("corrupt tool-call state {state:?} in the database")))?,
        raw_result: utf8_opt("tool result", row.get(4))?,
        compressed_result: utf8_opt("compressed tool result", row.get(5))?,
        error: utf8_opt("tool error", row.get(6))?,
        started_at_ms: row.get(7),
        finished_at_ms: row.get(8),
    })
}

impl PostgresStore {
    pub(crate) async fn write_tool_call(&self, record: &ToolCallRecord) -> Result<(), StoreError> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(UPSERT).await.map_err(backend)?;
        let changed = client
            .execute(
                &stmt,
                &[
                    &record.session_id.as_str(),
                    &record.call_id.as_bytes(),
                    &record.name.as_bytes(),
                    &record.arguments.as_bytes(),
                    &record.state.as_str(),
                    &bytes(&record.raw_result),
                    &bytes(&record.compressed_result),
                    &bytes(&record.error),
                    &record.started_at_ms,
                    &record.finished_at_ms,
                    &now_millis(),
                ],
            )
            .await
            .map_err(backend)?;
        if changed > 0 {
            return Ok(());
        }
        // Nothing written: the session is missing, the call has reached or passed this state
        // already (a repeated or late write, accepted and ignored: the first writer wins), or
        // the state machine refuses the change.
        let key = Self::session_key(&client, &record.session_id).await?;
        let stmt = client
            .prepare_cached("SELECT state FROM tool_calls WHERE session_key = $1 AND call_id = $2")
            .await
            .map_err(backend)?;
        let stored = client
            .query_opt(&stmt, &[&key, &record.call_id.as_bytes()])
            .await
            .map_err(backend)?;
        match stored.as_ref().map(|row| row.get::<_, &str>(0)) {
            Some(stored) => match ToolCallState::parse(stored) {
                Some(from) if record.state.can_become(from) => Ok(()),
                Some(from) => Err(StoreError::InvalidTransition {
                    call_id: record.call_id.clone(),
                    from: from.as_str(),
                    to: record.state.as_str(),
                }),
                None => Err(StoreError::Backend(format!(
                    "corrupt tool-call state {stored:?} in the database"
                ))),
            },
            // The session was deleted and created again between the two statements.
            None => Err(StoreError::SessionNotFound(record.session_id.clone())),
        }
    }

    pub(crate) async fn select_tool_calls(&self, session: &SessionId) -> Result<Vec<ToolCallRecord>, StoreError> {
        let client = self.client().await?;
        let key = Self::session_key(&client, session).await?;
        let stmt = client
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM tool_calls WHERE session_key = $1 ORDER BY ord"
            ))
            .await
            .map_err(backend)?;
        let rows = client.query(&stmt, &[&key]).await.map_err(backend)?;
        rows.iter().map(|row| read_tool_call(row, session)).collect()
    }
}
