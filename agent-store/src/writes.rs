//! The loop's hot writes, each as few statements as the schema allows: the unique index on
//! `(session_key, seq)` catches a lost race, the foreign keys catch a missing session, and the
//! tool-call state machine is the `WHERE` of the upsert. Rows refer to their session by its
//! integer key (see the version 4 migration); callers look it up once with [`session_key`].

use rusqlite::{Connection, ErrorCode, OptionalExtension, params};

use crate::now_millis;
use agent_core::{SessionId, SessionInfo, StoreError, ToolCallRecord, ToolCallState};

use crate::replayed;
use crate::row_statements::{RowKind, RowStatements};
use crate::rows::{MessageRow, seq_to_sql};
use crate::sql_error::backend;

/// The sequence number the session with this key expects next, read from the file.
pub(crate) fn next_seq(conn: &Connection, key: i64) -> Result<u64, StoreError> {
    let last: i64 = conn
        .prepare_cached("SELECT COALESCE(MAX(seq), 0) FROM messages WHERE session_key = ?1")
        .and_then(|mut stmt| stmt.query_row([key], |r| r.get(0)))
        .map_err(backend)?;
    Ok(last.max(0) as u64 + 1)
}

/// A session's integer key, `None` if there is no such session.
pub(crate) fn session_key(conn: &Connection, session: &SessionId) -> Result<Option<i64>, StoreError> {
    conn.prepare_cached("SELECT key FROM sessions WHERE id = ?1")
        .and_then(|mut stmt| stmt.query_row([session.as_str()], |r| r.get(0)).optional())
        .map_err(backend)
}

/// A session's integer key; a missing session is [`StoreError::SessionNotFound`].
pub(crate) fn existing_session_key(conn: &Connection, session: &SessionId) -> Result<i64, StoreError> {
    session_key(conn, session)?.ok_or_else(|| StoreError::SessionNotFound(session.clone()))
}

/// Inserts a session row and returns its key; a taken id is [`StoreError::AlreadyExists`].
pub(crate) fn insert_session(conn: &Connection, info: &SessionInfo) -> Result<i64, StoreError> {
    let inserted = conn
        .prepare_cached("INSERT INTO sessions (id, title, created_at, updated_at) VALUES (?1, ?2, ?3, ?4)")
        .and_then(|mut stmt| {
            stmt.insert(params![
                info.id.as_str(),
                info.title,
                info.created_at_ms,
                info.updated_at_ms
            ])
        });
    match inserted {
        Ok(key) => Ok(key),
        Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == ErrorCode::ConstraintViolation => {
            Err(StoreError::AlreadyExists(info.id.clone()))
        }
        Err(e) => Err(backend(e)),
    }
}

/// What a failed write means: the session is gone (foreign key), another writer took the
/// sequence number (unique index), or something else. `key` is the key the write used; if
/// the session now has another one, it was deleted and created again behind our back.
fn explain(conn: &Connection, session: &SessionId, key: i64, first_seq: u64, e: rusqlite::Error) -> StoreError {
    let constraint = matches!(&e, rusqlite::Error::SqliteFailure(f, _) if f.code == ErrorCode::ConstraintViolation);
    if !constraint {
        return backend(e);
    }
    match session_key(conn, session) {
        // Gone, or deleted and created again since this writer looked its key up: the session
        // written to no longer exists.
        Ok(None) => StoreError::SessionNotFound(session.clone()),
        Ok(Some(now)) if now != key => StoreError::SessionNotFound(session.clone()),
        Ok(Some(now)) => match next_seq(conn, now) {
            Ok(actual) if actual == first_seq => backend(e),
            Ok(actual) => StoreError::Conflict {
                session: session.clone(),
                expected: first_seq,
                actual,
            },
            Err(other) => other,
        },
        Err(other) => other,
    }
}

/// Inserts message rows as `first_seq, first_seq + 1, ...` into the session with this key,
/// and returns the number the session expects next. With `check` it first compares
/// `first_seq` with that number: a gap or 0 is a conflict; taken numbers must hold the same
/// messages (a replayed append, see [`agent_core::Store::append_messages`]), or it is a lost
/// race, also a conflict; only the rows past the taken numbers are inserted. Without `check`
/// the unique index refuses a taken number, and the append is then checked as above.
pub(crate) fn insert_messages(
    conn: &Connection,
    session: &SessionId,
    key: i64,
    first_seq: u64,
    rows: &[MessageRow],
    check: bool,
) -> Result<u64, StoreError> {
    if !check {
        match insert_at(conn, session, key, first_seq, rows) {
            // Another process took the number, perhaps with these very messages.
            Err(StoreError::Conflict { .. }) => {}
            other => return other.map(|()| first_seq + rows.len() as u64),
        }
    }
    let actual = next_seq(conn, key)?;
    let conflict = || StoreError::Conflict {
        session: session.clone(),
        expected: first_seq,
        actual,
    };
    if first_seq == 0 || first_seq > actual || (rows.is_empty() && first_seq != actual) {
        return Err(conflict());
    }
    let taken = usize::try_from(actual - first_seq)
        .unwrap_or(usize::MAX)
        .min(rows.len());
    let (stored, new) = rows.split_at(taken);
    if !replayed::rows_match(conn, key, first_seq, stored)? {
        return Err(conflict());
    }
    insert_at(conn, session, key, actual, new)?;
    Ok(actual.max(first_seq + rows.len() as u64))
}

/// Inserts message rows as `first_seq, first_seq + 1, ...`, unchecked but for the constraints.
fn insert_at(
    conn: &Connection,
    session: &SessionId,
    key: i64,
    first_seq: u64,
    rows: &[MessageRow],
) -> Result<(), StoreError> {
    if rows.is_empty() {
        return Ok(());
    }
    let now = now_millis();
    let mut insert = conn
        .prepare_cached(
            "INSERT INTO messages (session_key, seq, role, content, tool_calls, tool_call_id,
               tool_name, is_error, compressed, reasoning, model_visible, user_visible, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        )
        .map_err(backend)?;
    for (i, row) in rows.iter().enumerate() {
        insert
            .execute(params![
                key,
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
            .map_err(|e| explain(conn, session, key, first_seq, e))?;
    }
    Ok(())
}

/// A message row to insert, and where it goes.
pub(crate) struct NewRow<'a> {
    pub key: i64,
    pub seq: u64,
    pub row: &'a MessageRow,
    pub created_at: i64,
}

/// Inserts message rows of any sessions, several per statement: one statement costs SQLite
/// more than the row it carries. Nothing is checked beyond the constraints (the unique index
/// on `(session_key, seq)`, the foreign key); on an error the caller cannot tell which row
/// failed, and should roll back and insert them one append at a time.
pub(crate) fn insert_rows(statements: &impl RowStatements, rows: &[NewRow<'_>]) -> rusqlite::Result<()> {
    for range in RowKind::Messages.statements_for(rows.len()) {
        statements.with_statement(RowKind::Messages, range.len(), |insert| {
            for (i, new) in rows[range.clone()].iter().enumerate() {
                let at = i * 13;
                let row = new.row;
                insert.raw_bind_parameter(at + 1, new.key)?;
                insert.raw_bind_parameter(at + 2, seq_to_sql(new.seq))?;
                insert.raw_bind_parameter(at + 3, row.role)?;
                insert.raw_bind_parameter(at + 4, &row.content)?;
                insert.raw_bind_parameter(at + 5, &row.tool_calls)?;
                insert.raw_bind_parameter(at + 6, &row.tool_call_id)?;
                insert.raw_bind_parameter(at + 7, &row.tool_name)?;
                insert.raw_bind_parameter(at + 8, row.is_error)?;
                insert.raw_bind_parameter(at + 9, &row.compressed)?;
                insert.raw_bind_parameter(at + 10, &row.reasoning)?;
                insert.raw_bind_parameter(at + 11, row.model_visible)?;
                insert.raw_bind_parameter(at + 12, row.user_visible)?;
                insert.raw_bind_parameter(at + 13, new.created_at)?;
            }
            insert.raw_execute().map(drop)
        })?;
    }
    Ok(())
}

/// Runs the upsert of `records` (each with its session's key), a number of rows
/// [`RowKind::statements_for`] gives, and returns how many rows it inserted or updated.
fn run_upsert(statements: &impl RowStatements, records: &[(i64, &ToolCallRecord)]) -> rusqlite::Result<usize> {
    let now = now_millis();
    statements.with_statement(RowKind::ToolCalls, records.len(), |upsert| {
        for (i, (key, record)) in records.iter().enumerate() {
            let at = i * 11;
            upsert.raw_bind_parameter(at + 1, *key)?;
            upsert.raw_bind_parameter(at + 2, &record.call_id)?;
            upsert.raw_bind_parameter(at + 3, &record.name)?;
            upsert.raw_bind_parameter(at + 4, &record.arguments)?;
            upsert.raw_bind_parameter(at + 5, record.state.as_str())?;
            upsert.raw_bind_parameter(at + 6, &record.raw_result)?;
            upsert.raw_bind_parameter(at + 7, &record.compressed_result)?;
            upsert.raw_bind_parameter(at + 8, &record.error)?;
            upsert.raw_bind_parameter(at + 9, record.started_at_ms)?;
            upsert.raw_bind_parameter(at + 10, record.finished_at_ms)?;
            upsert.raw_bind_parameter(at + 11, now)?;
        }
        upsert.raw_execute()
    })
}

/// Upserts tool-call records of any sessions (each with its session's key), several per
/// statement, and says which statements' records must be written again one at a time with
/// [`write_tool_call`] to learn their answers: those of a statement that failed (it changed
/// nothing: a statement is atomic), or that changed fewer rows than it carried (a record
/// repeating or going back on its stored state, which may be refused). Writing an applied
/// record again is harmless: it repeats the stored state. A statement error that made SQLite
/// roll back the transaction is returned instead.
pub(crate) fn upsert_tool_calls(
    statements: &impl RowStatements,
    records: &[(i64, &ToolCallRecord)],
) -> Result<Vec<std::ops::Range<usize>>, rusqlite::Error> {
    let mut again = Vec::new();
    for range in RowKind::ToolCalls.statements_for(records.len()) {
        match run_upsert(statements, &records[range.clone()]) {
            Ok(changed) if changed == range.len() => {}
            Ok(_) => again.push(range),
            Err(e) if statements.connection().is_autocommit() => return Err(e),
            Err(_) => again.push(range),
        }
    }
    Ok(again)
}

/// Inserts or updates a tool-call record of the session with this key in one statement; the
/// update happens only if the state machine allows a change (see
/// [`ToolCallState::can_become`]). A record of the stored state, or of one the call has
/// passed, changes nothing and is accepted (a replayed write, see
/// [`agent_core::Store::upsert_tool_call`]).
pub(crate) fn write_tool_call(conn: &Connection, key: i64, record: &ToolCallRecord) -> Result<(), StoreError> {
    match run_upsert(conn, &[(key, record)]) {
        Ok(0) => not_updated(conn, key, record),
        Ok(_) => Ok(()),
        Err(e @ rusqlite::Error::SqliteFailure(..)) => match session_key(conn, &record.session_id) {
            Ok(now) if now != Some(key) => Err(StoreError::SessionNotFound(record.session_id.clone())),
            _ => Err(backend(e)),
        },
        Err(e) => Err(backend(e)),
    }
}

/// What an upsert that changed nothing means: a repeated or late write (ignored), or a change
/// the state machine refuses.
fn not_updated(conn: &Connection, key: i64, record: &ToolCallRecord) -> Result<(), StoreError> {
    let stored: Result<Option<String>, StoreError> = conn
        .prepare_cached("SELECT state FROM tool_calls WHERE session_key = ?1 AND call_id = ?2")
        .and_then(|mut stmt| stmt.query_row(params![key, record.call_id], |r| r.get(0)).optional())
        .map_err(backend);
    match stored? {
        Some(stored) => match ToolCallState::parse(&stored) {
            Some(from) if record.state.can_become(from) => Ok(()),
            Some(from) => Err(StoreError::InvalidTransition {
                call_id: record.call_id.clone(),
                from: from.as_str(),
                to: record.state.as_str(),
            }),
            None => Err(StoreError::Backend(format!(
                "unknown tool-call state {stored:?} in the database"
            ))),
        },
        None => Err(StoreError::Backend(format!(
            "tool call {} was neither inserted nor updated",
            record.call_id
        ))),
    }
}
