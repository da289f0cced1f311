//! Appends that repeat messages already stored, as a durable executor's replay of a turn does:
//! they are accepted when the stored rows are the ones the append would write.

use rusqlite::{Connection, Row, params};

use agent_core::StoreError;

use crate::rows::{MessageRow, seq_to_sql};
use crate::sql_error::backend;

/// Whether the session with this key stores exactly `rows` at `first_seq, first_seq + 1, ...`,
/// column by column as they were written (their creation time aside).
pub(crate) fn rows_match(conn: &Connection, key: i64, first_seq: u64, rows: &[MessageRow]) -> Result<bool, StoreError> {
    if rows.is_empty() {
        return Ok(true);
    }
    let mut stmt = conn
        .prepare_cached(
            "SELECT role, content, tool_calls, tool_call_id, tool_name, is_error, compressed, reasoning,
                    model_visible, user_visible
             FROM messages WHERE session_key = ?1 AND seq >= ?2 AND seq < ?3 ORDER BY seq",
        )
        .map_err(backend)?;
    let past = first_seq.saturating_add(rows.len() as u64);
    let mut stored = stmt
        .query(params![key, seq_to_sql(first_seq), seq_to_sql(past)])
        .map_err(backend)?;
    let mut wanted = rows.iter();
    let mut matched = 0;
    while let Some(row) = stored.next().map_err(backend)? {
        match wanted.next() {
            Some(want) if same(row, want).map_err(backend)? => matched += 1,
            _ => return Ok(false),
        }
    }
    // A missing row (never, numbers are dense) is no match either.
    Ok(matched == rows.len())
}

fn same(row: &Row<'_>, want: &MessageRow) -> rusqlite::Result<bool> {
    Ok(row.get::<_, String>(0)? == want.role
        && row.get::<_, String>(1)? == want.content
        && row.get::<_, Option<String>>(2)? == want.tool_calls
        && row.get::<_, Option<String>>(3)? == want.tool_call_id
        && row.get::<_, Option<String>>(4)? == want.tool_name
        && row.get::<_, bool>(5)? == want.is_error
        && row.get::<_, Option<String>>(6)? == want.compressed
        && row.get::<_, Option<String>>(7)? == want.reasoning
        && row.get::<_, bool>(8)? == want.model_visible
        && row.get::<_, bool>(9)? == want.user_visible)
}
