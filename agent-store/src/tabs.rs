//! The tab registry in SQLite: [`agent_core::tabs::TabStore`] for [`SqliteStore`] (its table
//! is added by the migrations' version 3).

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, Row, params};

use agent_core::StoreError;
use agent_core::tabs::{QueuedMessage, TabId, TabPermissions, TabRecord, TabStore};

use crate::sql_error::backend;
use crate::sqlite::SqliteStore;

const COLUMNS: &str =
    "id, session_id, is_open, auto_wake_budget, perm_send_to_tab, perm_read_tab, queue, created_at, updated_at";

fn read_tab(row: &Row<'_>) -> rusqlite::Result<Result<TabRecord, StoreError>> {
    let id: String = row.get(0)?;
    let session: String = row.get(1)?;
    let budget: i64 = row.get(3)?;
    let queue: String = row.get(6)?;
    let record = (|| {
        let queue: Vec<QueuedMessage> = serde_json::from_str(&queue)
            .map_err(|e| StoreError::Backend(format!("tab {id}: unreadable queue: {e}")))?;
        Ok(TabRecord {
            id: TabId::parse(&id).map_err(|e| StoreError::Backend(e.to_string()))?,
            session_id: agent_core::SessionId::parse(&session).map_err(|e| StoreError::Backend(e.to_string()))?,
            open: row.get::<_, bool>(2).map_err(backend)?,
            auto_wake_budget: u32::try_from(budget).unwrap_or(0),
            permissions: TabPermissions {
                send_to_tab: row.get(4).map_err(backend)?,
                read_tab: row.get(5).map_err(backend)?,
            },
            queue,
            created_at_ms: row.get(7).map_err(backend)?,
            updated_at_ms: row.get(8).map_err(backend)?,
        })
    })();
    Ok(record)
}

fn collect(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> Result<Vec<TabRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(sql).map_err(backend)?;
    let rows = stmt.query_map(params, read_tab).map_err(backend)?;
    rows.map(|r| r.map_err(backend)?).collect()
}

/// The smallest string greater than every string that starts with `prefix`, when there is one
/// (the last character plus one), so a prefix search is an index range.
fn upper_bound(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    let last = chars.pop()?;
    let next = char::from_u32(u32::from(last) + 1)?;
    chars.push(next);
    Some(chars.into_iter().collect())
}

#[async_trait]
impl TabStore for SqliteStore {
    async fn save_tab(&self, tab: &TabRecord) -> Result<(), StoreError> {
        let queue = serde_json::to_string(&tab.queue)
            .map_err(|e| StoreError::Backend(format!("cannot serialize the queue of tab {}: {e}", tab.id)))?;
        let tab = tab.clone();
        self.write(move |conn| {
            conn.execute(
                "INSERT INTO tabs (id, session_id, is_open, auto_wake_budget, perm_send_to_tab, perm_read_tab,
                                   queue, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT (id) DO UPDATE SET
                    session_id = excluded.session_id, is_open = excluded.is_open,
                    auto_wake_budget = excluded.auto_wake_budget, perm_send_to_tab = excluded.perm_send_to_tab,
                    perm_read_tab = excluded.perm_read_tab, queue = excluded.queue,
                    updated_at = excluded.updated_at",
                params![
                    tab.id.as_str(),
                    tab.session_id.as_str(),
                    tab.open,
                    i64::from(tab.auto_wake_budget),
                    tab.permissions.send_to_tab,
                    tab.permissions.read_tab,
                    queue,
                    tab.created_at_ms,
                    tab.updated_at_ms,
                ],
            )
            .map_err(backend)?;
            Ok(())
        })
        .await
    }

    async fn tab(&self, id: &TabId) -> Result<Option<TabRecord>, StoreError> {
        let id = id.clone();
        self.read(move |conn| {
            conn.query_row(
                &format!("SELECT {COLUMNS} FROM tabs WHERE id = ?1"),
                [id.as_str()],
                read_tab,
            )
            .optional()
            .map_err(backend)?
            .transpose()
        })
        .await
    }

    async fn list_tabs(&self) -> Result<Vec<TabRecord>, StoreError> {
        self.read(|conn| collect(conn, &format!("SELECT {COLUMNS} FROM tabs ORDER BY created_at, id"), []))
            .await
    }

    async fn find_open_by_prefix(&self, prefix: &str) -> Result<Vec<TabRecord>, StoreError> {
        // Parameterised and literal: `substr(...) = ?` has no wildcard characters (unlike LIKE,
        // where `%` and `_` would widen the match), and the range on the id uses the index.
        let prefix = prefix.to_owned();
        self.read(move |conn| match upper_bound(&prefix) {
            Some(upper) => collect(
                conn,
                &format!(
                    "SELECT {COLUMNS} FROM tabs WHERE is_open = 1 AND id >= ?1 AND id < ?2
                       AND substr(id, 1, length(?1)) = ?1 ORDER BY id"
                ),
                params![prefix, upper],
            ),
            None => collect(
                conn,
                &format!("SELECT {COLUMNS} FROM tabs WHERE is_open = 1 AND substr(id, 1, length(?1)) = ?1 ORDER BY id"),
                params![prefix],
            ),
        })
        .await
    }

    async fn delete_tab(&self, id: &TabId) -> Result<(), StoreError> {
        let id = id.clone();
        self.write(move |conn| {
            conn.execute("DELETE FROM tabs WHERE id = ?1", [id.as_str()])
                .map_err(backend)?;
            Ok(())
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::upper_bound;

    #[test]
    fn upper_bound_increments_the_last_character() {
        assert_eq!(upper_bound("6fe8").as_deref(), Some("6fe9"));
        assert_eq!(upper_bound("6fe-").as_deref(), Some("6fe."));
        assert_eq!(upper_bound("%").as_deref(), Some("&"));
        assert_eq!(upper_bound(""), None);
    }
}
