//! The `messages` table: appends with the sequence check, history reads.

use agent_core::{Message, SessionId, StoreError, StoredMessage};

use crate::error::{backend, seq_from_sql, seq_to_sql};
use crate::message_insert::insert;
use crate::now_millis;
use crate::rows::{MESSAGE_COLUMNS, MessageColumns, read_message};
use crate::store::PostgresStore;

/// Moves the session's last sequence number from `$2` to `$3` if it is still `$2`. The update
/// locks the row until commit, so a concurrent append of the same session waits here, then
/// finds the number moved and matches nothing: the loser of a race is then checked against
/// what the winner wrote (a conflict unless it is the same), never interleaved.
const CLAIM: &str = "UPDATE sessions SET last_seq = $3, updated_at = GREATEST(updated_at, $4)
                     WHERE id = $1 AND last_seq = $2 RETURNING key";

impl PostgresStore {
    /// Appends `messages` as `first_seq, first_seq + 1, ...` in one transaction: the claim of
    /// the numbers, then one insert of every row. When the claim finds another last number,
    /// the append is checked against the stored messages instead (see
    /// [`crate::replayed::append_over`]): a replay, a lost race, a gap or a missing session.
    pub(crate) async fn append(
        &self,
        session: &SessionId,
        first_seq: u64,
        messages: &[Message],
    ) -> Result<(), StoreError> {
        let columns = MessageColumns::new(first_seq, messages)?;
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(backend)?;
        let claimed = match first_seq.checked_sub(1) {
            // 0 is never a session's next number.
            None => None,
            Some(last) => {
                let stmt = tx.prepare_cached(CLAIM).await.map_err(backend)?;
                let new_last = last + messages.len() as u64;
                tx.query_opt(
                    &stmt,
                    &[
                        &session.as_str(),
                        &seq_to_sql(last),
                        &seq_to_sql(new_last),
                        &now_millis(),
                    ],
                )
                .await
                .map_err(backend)?
                .map(|row| row.get::<_, i64>(0))
            }
        };
        match claimed {
            Some(key) if !messages.is_empty() => insert(&tx, session, key, &columns).await?,
            Some(_) => {}
            None => crate::replayed::append_over(&tx, session, first_seq, messages).await?,
        }
        tx.commit().await.map_err(backend)
    }

    pub(crate) async fn select_messages(
        &self,
        session: &SessionId,
        after_seq: u64,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        let client = self.client().await?;
        let key = Self::session_key(&client, session).await?;
        let stmt = client
            .prepare_cached(&format!(
                "SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_key = $1 AND seq > $2 ORDER BY seq"
            ))
            .await
            .map_err(backend)?;
        let rows = client
            .query(&stmt, &[&key, &seq_to_sql(after_seq)])
            .await
            .map_err(backend)?;
        rows.iter().map(read_message).collect()
    }

    pub(crate) async fn select_last_seq(&self, session: &SessionId) -> Result<u64, StoreError> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached("SELECT last_seq FROM sessions WHERE id = $1")
            .await
            .map_err(backend)?;
        match client.query_opt(&stmt, &[&session.as_str()]).await.map_err(backend)? {
            Some(row) => Ok(seq_from_sql(row.get(0))),
            None => Err(StoreError::SessionNotFound(session.clone())),
        }
    }
}
