//! The loop's hot writes, each as few statements as the schema allows: the unique index on
//! `(session_id, seq)` catches a lost race, the foreign keys catch a missing session, and the
//! tool-call state machine is the `WHERE` of the upsert.

use rusqlite::{Connection, ErrorCode, OptionalExtension, params};

use agent_core::store::now_millis;
use agent_core::{SessionId, StoreError, ToolCallRecord, ToolCallState};

use crate::rows::MessageRow;
use crate::sqlite::backend;

pub(crate) fn seq_to_sql(seq: u64) -> i64 {
    i64::try_from(seq).unwrap_or(i64::MAX)
}

/// The sequence number the session expects next, read from the file.
pub(crate) fn next_seq(conn: &Connection, session: &SessionId) -> Result<u64, StoreError> {
    let last: i64 = conn
        .prepare_cached("SELECT COALESCE(MAX(seq), 0) FROM messages WHERE session_id = ?1")
        .and_then(|mut stmt| stmt.query_row([session.as_str()], |r| r.get(0)))
        .map_err(backend)?;
    Ok(last.max(0) as u64 + 1)
}

pub(crate) fn session_exists(conn: &Connection, session: &SessionId) -> Result<bool, StoreError> {
    conn.prepare_cached("SELECT 1 FROM sessions WHERE id = ?1")
        .and_then(|mut stmt| stmt.exists([session.as_str()]))
        .map_err(backend)
}

/// What a failed insert means: the session is gone (foreign key), another writer took the
/// sequence number (unique index), or something else.
fn explain(conn: &Connection, session: &SessionId, first_seq: u64, e: rusqlite::Error) -> StoreError {
    let constraint = matches!(&e, rusqlite::Error::SqliteFailure(f, _) if f.code == ErrorCode::ConstraintViolation);
    if !constraint {
        return backend(e);
    }
    match session_exists(conn, session) {
        Ok(false) => StoreError::SessionNotFound(session.clone()),
        _ => match next_seq(conn, session) {
            Ok(actual) => StoreError::Conflict {
                session: session.clone(),
                expected: first_seq,
                actual,
            },
            Err(other) => other,
        },
    }
}

/// Inserts message rows as `first_seq, first_seq + 1, ...`. With `check` it first makes sure
/// `first_seq` is the session's next number (no gap, no lost race); without, the unique index
/// still refuses a number that is taken.
pub(crate) fn insert_messages(
    conn: &Connection,
    session: &SessionId,
    first_seq: u64,
    rows: &[MessageRow],
    check: bool,
) -> Result<(), StoreError> {
    if check {
        let actual = next_seq(conn, session)?;
        if first_seq != actual {
            if !session_exists(conn, session)? {
                return Err(StoreError::SessionNotFound(session.clone()));
            }
            return Err(StoreError::Conflict {
                session: session.clone(),
                expected: first_seq,
                actual,
            });
        }
    }
    let now = now_millis();
    let mut insert = conn
        .prepare_cached(
            "INSERT INTO messages (session_id, seq, role, content, tool_calls, tool_call_id,
               tool_name, is_error, compressed, reasoning, model_visible, user_visible, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        )
        .map_err(backend)?;
    for (i, row) in rows.iter().enumerate() {
        insert
            .execute(params![
                session.as_str(),
                seq_to_sql(first_seq + i as u64),
                row.role,
                row.content,
                row.tool_calls,
                row.tool_call_id,
                row.tool_name,
                row.is_error,
                row.compressed,
                row.reasoning,
                row.model_visible,
                row.user_visible,
                now,
            ])
            .map_err(|e| explain(conn, session, first_seq, e))?;
    }
    Ok(())
}

/// Marks sessions as updated now (once per group of appends rather than once per append).
pub(crate) fn touch_sessions<'a>(
    conn: &Connection,
    sessions: impl IntoIterator<Item = &'a SessionId>,
) -> Result<(), StoreError> {
    let now = now_millis();
    let mut update = conn
        .prepare_cached("UPDATE sessions SET updated_at = ?2 WHERE id = ?1")
        .map_err(backend)?;
    for session in sessions {
        update.execute(params![session.as_str(), now]).map_err(backend)?;
    }
    Ok(())
}

/// Inserts or updates a tool-call record in one statement; the update happens only if the
/// state machine allows the change (see [`ToolCallState::can_become`]).
pub(crate) fn write_tool_call(conn: &Connection, record: &ToolCallRecord) -> Result<(), StoreError> {
    let changed = conn
        .prepare_cached(
            "INSERT INTO tool_calls (session_id, call_id, name, arguments, state, raw_result,
               compressed_result, error, started_at, finished_at, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
             ON CONFLICT (session_id, call_id) DO UPDATE SET
               name = excluded.name, arguments = excluded.arguments, state = excluded.state,
               raw_result = excluded.raw_result, compressed_result = excluded.compressed_result,
               error = excluded.error, started_at = excluded.started_at,
               finished_at = excluded.finished_at
             WHERE tool_calls.state = excluded.state
                OR (tool_calls.state = 'pending' AND excluded.state <> 'pending')
                OR (tool_calls.state = 'running'
                    AND excluded.state IN ('succeeded', 'failed', 'denied', 'cancelled'))",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                record.session_id.as_str(),
                record.call_id,
                record.name,
                record.arguments,
                record.state.as_str(),
                record.raw_result,
                record.compressed_result,
                record.error,
                record.started_at_ms,
                record.finished_at_ms,
                now_millis(),
            ])
        });
    match changed {
        Ok(0) => Err(refused_transition(conn, record)),
        Ok(_) => Ok(()),
        Err(e @ rusqlite::Error::SqliteFailure(..)) => match session_exists(conn, &record.session_id) {
            Ok(false) => Err(StoreError::SessionNotFound(record.session_id.clone())),
            _ => Err(backend(e)),
        },
        Err(e) => Err(backend(e)),
    }
}

/// The error for an upsert the state machine refused.
fn refused_transition(conn: &Connection, record: &ToolCallRecord) -> StoreError {
    let stored: Result<Option<String>, StoreError> = conn
        .prepare_cached("SELECT state FROM tool_calls WHERE session_id = ?1 AND call_id = ?2")
        .and_then(|mut stmt| {
            stmt.query_row(params![record.session_id.as_str(), record.call_id], |r| r.get(0))
                .optional()
        })
        .map_err(backend);
    match stored {
        Ok(Some(stored)) => match ToolCallState::parse(&stored) {
            Some(from) => StoreError::InvalidTransition {
                call_id: record.call_id.clone(),
                from: from.as_str(),
                to: record.state.as_str(),
            },
            None => StoreError::Backend(format!("unknown tool-call state {stored:?} in the database")),
        },
        Ok(None) => StoreError::Backend(format!("tool call {} was neither inserted nor updated", record.call_id)),
        Err(e) => e,
    }
}
