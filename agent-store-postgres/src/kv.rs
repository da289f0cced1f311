//! The `key_value` table.

use agent_core::StoreError;

use crate::error::{backend, utf8};
use crate::store::PostgresStore;

impl PostgresStore {
    pub(crate) async fn select_kv(&self, key: &str) -> Result<Option<String>, StoreError> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached("SELECT value FROM key_value WHERE key = $1")
            .await
            .map_err(backend)?;
        client
            .query_opt(&stmt, &[&key.as_bytes()])
            .await
            .map_err(backend)?
            .map(|row| utf8("key-value value", row.get(0)))
            .transpose()
    }

    pub(crate) async fn write_kv(&self, key: &str, value: &str) -> Result<(), StoreError> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(
                "INSERT INTO key_value (key, value) VALUES ($1, $2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            )
            .await
            .map_err(backend)?;
        client
            .execute(&stmt, &[&key.as_bytes(), &value.as_bytes()])
            .await
            .map_err(backend)?;
        Ok(())
    }

    pub(crate) async fn remove_kv(&self, key: &str) -> Result<(), StoreError> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached("DELETE FROM key_value WHERE key = $1")
            .await
            .map_err(backend)?;
        client.execute(&stmt, &[&key.as_bytes()]).await.map_err(backend)?;
        Ok(())
    }
}
