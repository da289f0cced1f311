//! The tab registry: [`TabStore`] for [`PostgresStore`].

use async_trait::async_trait;
use tokio_postgres::Row;

use agent_core::tabs::{QueuedMessage, TabId, TabPermissions, TabRecord, TabStore};
use agent_core::{SessionId, StoreError};

use crate::error::backend;
use crate::store::PostgresStore;

const COLUMNS: &str =
    "id, session_id, is_open, auto_wake_budget, perm_send_to_tab, perm_read_tab, queue, created_at, updated_at";

fn read_tab(row: &Row) -> Result<TabRecord, StoreError> {
    let id: &str = row.get(0);
    let session: &str = row.get(1);
    let queue: &str = row.get(6);
    let budget: i64 = row.get(3);
    let queue: Vec<QueuedMessage> =
        serde_json::from_str(queue).map_err(|e| StoreError::Backend(format!("tab {id}: unreadable queue: {e}")))?;
    Ok(TabRecord {
        id: TabId::parse(id).map_err(|e| StoreError::Backend(e.to_string()))?,
        session_id: SessionId::parse(session).map_err(|e| StoreError::Backend(e.to_string()))?,
        open: row.get(2),
        auto_wake_budget: u32::try_from(budget).unwrap_or(0),
        permissions: TabPermissions {
            send_to_tab: row.get(4),
            read_tab: row.get(5),
        },
        queue,
        created_at_ms: row.get(7),
        updated_at_ms: row.get(8),
    })
}

impl PostgresStore {
    async fn select_tabs(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Vec<TabRecord>, StoreError> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql).await.map_err(backend)?;
        let rows = client.query(&stmt, params).await.map_err(backend)?;
        rows.iter().map(read_tab).collect()
    }
}

#[async_trait]
impl TabStore for PostgresStore {
    async fn save_tab(&self, tab: &TabRecord) -> Result<(), StoreError> {
        let queue = serde_json::to_string(&tab.queue)
            .map_err(|e| StoreError::Backend(format!("cannot serialize the queue of tab {}: {e}", tab.id)))?;
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&format!(
                "INSERT INTO tabs ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                 ON CONFLICT (id) DO UPDATE SET
                    session_id = excluded.session_id, is_open = excluded.is_open,
                    auto_wake_budget = excluded.auto_wake_budget, perm_send_to_tab = excluded.perm_send_to_tab,
                    perm_read_tab = excluded.perm_read_tab, queue = excluded.queue,
                    updated_at = excluded.updated_at"
            ))
            .await
            .map_err(backend)?;
        client
            .execute(
                &stmt,
                &[
                    &tab.id.as_str(),
                    &tab.session_id.as_str(),
                    &tab.open,
                    &i64::from(tab.auto_wake_budget),
                    &tab.permissions.send_to_tab,
                    &tab.permissions.read_tab,
                    &queue,
                    &tab.created_at_ms,
                    &tab.updated_at_ms,
                ],
            )
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn tab(&self, id: &TabId) -> Result<Option<TabRecord>, StoreError> {
        let mut tabs = self
            .select_tabs(&format!("SELECT {COLUMNS} FROM tabs WHERE id = $1"), &[&id.as_str()])
            .await?;
        Ok(tabs.pop())
    }

    async fn list_tabs(&self) -> Result<Vec<TabRecord>, StoreError> {
        self.select_tabs(&format!("SELECT {COLUMNS} FROM tabs ORDER BY created_at, id"), &[])
            .await
    }

    async fn find_open_by_prefix(&self, prefix: &str) -> Result<Vec<TabRecord>, StoreError> {
        // starts_with compares literally: unlike LIKE, `%` and `_` in the prefix match only
        // themselves. The prefix is a bound parameter, never spliced into the SQL.
        self.select_tabs(
            &format!("SELECT {COLUMNS} FROM tabs WHERE is_open AND starts_with(id, $1) ORDER BY id"),
            &[&prefix],
        )
        .await
    }

    async fn delete_tab(&self, id: &TabId) -> Result<(), StoreError> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached("DELETE FROM tabs WHERE id = $1")
            .await
            .map_err(backend)?;
        client.execute(&stmt, &[&id.as_str()]).await.map_err(backend)?;
        Ok(())
    }
}
