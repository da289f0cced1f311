//! The per-session state beside the transcript: compactions and the parked run.

use agent_core::{Compaction, SessionId, StoreError};

use crate::error::{backend, seq_from_sql, seq_to_sql, utf8};
use crate::now_millis;
use crate::store::PostgresStore;

impl PostgresStore {
    pub(crate) async fn insert_compaction(&self, c: &Compaction) -> Result<(), StoreError> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(
                "INSERT INTO compactions (session_key, up_to_seq, summary, created_at)
                 SELECT key, $2, $3, $4 FROM sessions WHERE id = $1",
            )
            .await
            .map_err(backend)?;
        let n = client
            .execute(
                &stmt,
                &[
                    &c.session_id.as_str(),
                    &seq_to_sql(c.cursor),
                    &c.summary.as_bytes(),
                    &c.created_at_ms,
                ],
            )
            .await
            .map_err(backend)?;
        if n == 0 {
            return Err(StoreError::SessionNotFound(c.session_id.clone()));
        }
        Ok(())
    }

    pub(crate) async fn select_latest_compaction(&self, session: &SessionId) -> Result<Option<Compaction>, StoreError> {
        let client = self.client().await?;
        let key = Self::session_key(&client, session).await?;
        let stmt = client
            .prepare_cached(
                "SELECT up_to_seq, summary, created_at FROM compactions WHERE session_key = $1
                 ORDER BY id DESC LIMIT 1",
            )
            .await
            .map_err(backend)?;
        let Some(row) = client.query_opt(&stmt, &[&key]).await.map_err(backend)? else {
            return Ok(None);
        };
        Ok(Some(Compaction {
            session_id: session.clone(),
            cursor: seq_from_sql(row.get(0)),
            summary: utf8("compaction summary", row.get(1))?,
            created_at_ms: row.get(2),
        }))
    }

    pub(crate) async fn write_parked_run(
        &self,
        session: &SessionId,
        state: Option<&serde_json::Value>,
    ) -> Result<(), StoreError> {
        let client = self.client().await?;
        let key = Self::session_key(&client, session).await?;
        match state {
            Some(state) => {
                let stmt = client
                    .prepare_cached(
                        "INSERT INTO runs (session_key, state, updated_at) VALUES ($1, $2, $3)
                         ON CONFLICT (session_key) DO UPDATE SET state = excluded.state,
                           updated_at = excluded.updated_at",
                    )
                    .await
                    .map_err(backend)?;
                // A foreign-key failure here means the session was deleted since its key was read.
                client
                    .execute(&stmt, &[&key, &state.to_string(), &now_millis()])
                    .await
                    .map_err(|e| match e.code() {
                        Some(&tokio_postgres::error::SqlState::FOREIGN_KEY_VIOLATION) => {
                            StoreError::SessionNotFound(session.clone())
                        }
                        _ => backend(e),
                    })?;
            }
            None => {
                let stmt = client
                    .prepare_cached("DELETE FROM runs WHERE session_key = $1")
                    .await
                    .map_err(backend)?;
                client.execute(&stmt, &[&key]).await.map_err(backend)?;
            }
        }
        Ok(())
    }

    pub(crate) async fn select_parked_run(&self, session: &SessionId) -> Result<Option<serde_json::Value>, StoreError> {
        let client = self.client().await?;
        let key = Self::session_key(&client, session).await?;
        let stmt = client
            .prepare_cached("SELECT state FROM runs WHERE session_key = $1")
            .await
            .map_err(backend)?;
        let Some(row) = client.query_opt(&stmt, &[&key]).await.map_err(backend)? else {
            return Ok(None);
        };
        let text: &str = row.get(0);
        serde_json::from_str(text)
            .map(Some)
            .map_err(|e| StoreError::Backend(format!("corrupt parked run in the database: {e}")))
    }
}
