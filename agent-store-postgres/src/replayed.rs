//! Appends whose first number is not the session's next one: a durable executor's replay of
//! messages already stored (accepted when they are the same, and only the new ones written),
//! a lost race, a gap, or a missing session.

use agent_core::{Message, SessionId, StoreError};
use deadpool_postgres::Transaction;

use crate::error::{backend, seq_from_sql, seq_to_sql};
use crate::message_insert::insert;
use crate::now_millis;
use crate::rows::MessageColumns;

/// Locks the session's row until commit, so no other append can move its last number meanwhile.
const LOCK: &str = "SELECT key, last_seq FROM sessions WHERE id = $1 FOR UPDATE";

/// How many of the given rows the session with key `$1` stores as they are: every column the
/// store writes compared, the creation time aside.
const SAME_ROWS: &str = "SELECT count(*) FROM messages s
     JOIN unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::bytea[],
        $7::bytea[], $8::boolean[], $9::bytea[], $10::text[], $11::boolean[], $12::boolean[])
        AS m(seq, role, content, tool_calls, tool_call_id, tool_name, is_error, compressed,
             reasoning, model_visible, user_visible)
     ON s.session_key = $1 AND s.seq = m.seq
     WHERE (s.role, s.content, s.tool_calls, s.tool_call_id, s.tool_name, s.is_error, s.compressed,
            s.reasoning, s.model_visible, s.user_visible)
           IS NOT DISTINCT FROM
           (m.role, m.content, m.tool_calls, m.tool_call_id, m.tool_name, m.is_error, m.compressed,
            m.reasoning, m.model_visible, m.user_visible)";

const MOVE_LAST: &str = "UPDATE sessions SET last_seq = $2, updated_at = GREATEST(updated_at, $3) WHERE key = $1";

/// Appends `messages` from `first_seq` in `tx`, checked under the session row's lock: a gap,
/// 0, or a taken number holding another message is [`StoreError::Conflict`] (the caller rolls
/// back, nothing is written); messages already stored as they are are skipped, the rest
/// inserted.
pub(crate) async fn append_over(
    tx: &Transaction<'_>,
    session: &SessionId,
    first_seq: u64,
    messages: &[Message],
) -> Result<(), StoreError> {
    let stmt = tx.prepare_cached(LOCK).await.map_err(backend)?;
    let Some(row) = tx.query_opt(&stmt, &[&session.as_str()]).await.map_err(backend)? else {
        return Err(StoreError::SessionNotFound(session.clone()));
    };
    let key: i64 = row.get(0);
    let actual = seq_from_sql(row.get(1)) + 1;
    let conflict = || StoreError::Conflict {
        session: session.clone(),
        expected: first_seq,
        actual,
    };
    if first_seq == 0 || first_seq > actual || (messages.is_empty() && first_seq != actual) {
        return Err(conflict());
    }
    let taken = usize::try_from(actual - first_seq)
        .unwrap_or(usize::MAX)
        .min(messages.len());
    let (stored, new) = messages.split_at(taken);
    if !stored.is_empty() {
        let columns = MessageColumns::new(first_seq, stored)?;
        let stmt = tx.prepare_cached(SAME_ROWS).await.map_err(backend)?;
        let same: i64 = tx
            .query_one(&stmt, &columns.params(&key))
            .await
            .map_err(backend)?
            .get(0);
        if usize::try_from(same).ok() != Some(stored.len()) {
            return Err(conflict());
        }
    }
    if new.is_empty() {
        // A replay of what is stored: nothing to write, nothing to notify.
        return Ok(());
    }
    insert(tx, session, key, &MessageColumns::new(actual, new)?).await?;
    let stmt = tx.prepare_cached(MOVE_LAST).await.map_err(backend)?;
    let last = actual + new.len() as u64 - 1;
    tx.execute(&stmt, &[&key, &seq_to_sql(last), &now_millis()])
        .await
        .map_err(backend)?;
    Ok(())
}
