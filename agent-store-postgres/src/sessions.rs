//! The `sessions` table: create, read, list, rename, delete.

use tokio_postgres::Row;
use tokio_postgres::error::SqlState;

use agent_core::{SessionId, SessionInfo, StoreError};

use crate::error::{backend, utf8_opt};
use crate::now_millis;
use crate::store::PostgresStore;

const COLUMNS: &str = "id, title, created_at, updated_at";

fn read_session(row: &Row) -> Result<SessionInfo, StoreError> {
    let id: &str = row.get(0);
    Ok(SessionInfo {
        id: SessionId::parse(id)
            .map_err(|e| StoreError::Backend(format!("corrupt session id in the database: {e}")))?,
        title: utf8_opt("session title", row.get(1))?,
        created_at_ms: row.get(2),
        updated_at_ms: row.get(3),
    })
}

impl PostgresStore {
    pub(crate) async fn insert_session(&self, info: &SessionInfo) -> Result<(), StoreError> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached("INSERT INTO sessions (id, title, created_at, updated_at) VALUES ($1, $2, $3, $4)")
            .await
            .map_err(backend)?;
        let title = info.title.as_deref().map(str::as_bytes);
        match client
            .execute(
                &stmt,
                &[&info.id.as_str(), &title, &info.created_at_ms, &info.updated_at_ms],
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => Err(StoreError::AlreadyExists(info.id.clone())),
            Err(e) => Err(backend(e)),
        }
    }

    pub(crate) async fn select_session(&self, id: &SessionId) -> Result<Option<SessionInfo>, StoreError> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&format!("SELECT {COLUMNS} FROM sessions WHERE id = $1"))
            .await
            .map_err(backend)?;
        client
            .query_opt(&stmt, &[&id.as_str()])
            .await
            .map_err(backend)?
            .as_ref()
            .map(read_session)
            .transpose()
    }

    pub(crate) async fn select_sessions(&self) -> Result<Vec<SessionInfo>, StoreError> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&format!("SELECT {COLUMNS} FROM sessions ORDER BY updated_at DESC, id"))
            .await
            .map_err(backend)?;
        let rows = client.query(&stmt, &[]).await.map_err(backend)?;
        rows.iter().map(read_session).collect()
    }

    pub(crate) async fn update_title(&self, id: &SessionId, title: &str) -> Result<(), StoreError> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached("UPDATE sessions SET title = $2, updated_at = $3 WHERE id = $1")
            .await
            .map_err(backend)?;
        let n = client
            .execute(&stmt, &[&id.as_str(), &title.as_bytes(), &now_millis()])
            .await
            .map_err(backend)?;
        if n == 0 {
            return Err(StoreError::SessionNotFound(id.clone()));
        }
        Ok(())
    }

    /// Deletes the session; its messages, tool calls, compactions and parked run go with it
    /// (`ON DELETE CASCADE`), and its key-value entries (keys under
    /// [`agent_core::session_key_prefix`]) in the same transaction.
    pub(crate) async fn remove_session(&self, id: &SessionId) -> Result<(), StoreError> {
        // Every key from the prefix (which ends in '/') up to the same prefix ending in '0', the
        // next byte: a range of the primary key's index.
        let first_key = agent_core::session_key_prefix(id);
        let past_key = format!("{}0", first_key.trim_end_matches('/'));
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(backend)?;
        let stmt = tx
            .prepare_cached("DELETE FROM sessions WHERE id = $1")
            .await
            .map_err(backend)?;
        let n = tx.execute(&stmt, &[&id.as_str()]).await.map_err(backend)?;
        if n == 0 {
            return Err(StoreError::SessionNotFound(id.clone()));
        }
        let stmt = tx
            .prepare_cached("DELETE FROM key_value WHERE key >= $1 AND key < $2")
            .await
            .map_err(backend)?;
        tx.execute(&stmt, &[&first_key.as_bytes(), &past_key.as_bytes()])
            .await
            .map_err(backend)?;
        tx.commit().await.map_err(backend)
    }
}
