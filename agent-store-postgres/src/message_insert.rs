//! Inserting numbered message rows, and the notice of each append that inserted rows: shared by
//! the ordinary append (`messages`) and the replayed one (`replayed`).

use agent_core::{SessionId, StoreError};
use deadpool_postgres::Transaction;

use crate::error::backend;
use crate::now_millis;
use crate::rows::{MessageColumns, Param};

/// Inserts the rows of a [`MessageColumns`] into the session with key `$1` and, in the same
/// statement, notifies channel `$14` with `$15` (sent at commit, so only for rows that were
/// committed).
const INSERT: &str = "WITH inserted AS (
     INSERT INTO messages (session_key, seq, role, content, tool_calls, tool_call_id,
        tool_name, is_error, compressed, reasoning, model_visible, user_visible, created_at)
     SELECT $1, m.* , $13 FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::bytea[],
        $7::bytea[], $8::boolean[], $9::bytea[], $10::text[], $11::boolean[], $12::boolean[])
        AS m(seq, role, content, tool_calls, tool_call_id, tool_name, is_error, compressed,
             reasoning, model_visible, user_visible))
     SELECT pg_notify($14, $15)";

/// The channel every append that inserted rows notifies, with the payload
/// `<session id> <last inserted seq>` (see docs/postgres.md).
pub(crate) const CHANNEL: &str = "agent_core_messages";

/// Inserts the rows of `columns` (numbered already) into the session with this key, and
/// notifies [`CHANNEL`] of the last one in the same transaction.
pub(crate) async fn insert(
    tx: &Transaction<'_>,
    session: &SessionId,
    key: i64,
    columns: &MessageColumns,
) -> Result<(), StoreError> {
    let Some(last) = columns.seq.last() else {
        return Ok(());
    };
    let notice = format!("{session} {last}");
    let stmt = tx.prepare_cached(INSERT).await.map_err(backend)?;
    let now = now_millis();
    let mut params: Vec<Param<'_>> = columns.params(&key).to_vec();
    params.extend([&now as Param<'_>, &CHANNEL, &notice]);
    tx.execute(&stmt, &params).await.map_err(backend)?;
    Ok(())
}
