use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;

use super::{Compaction, SessionInfo, Store, StoreError, StoredMessage, ToolCallRecord, now_millis};
use crate::message::Message;
use crate::session::SessionId;

#[derive(Default)]
struct SessionData {
    info: Option<SessionInfo>,
    messages: Vec<StoredMessage>,
    tool_calls: Vec<ToolCallRecord>,
    compactions: Vec<Compaction>,
    parked: Option<serde_json::Value>,
}

#[derive(Default)]
struct Inner {
    sessions: HashMap<SessionId, SessionData>,
    kv: HashMap<String, String>,
}

/// A [`Store`] that keeps everything in memory: for tests and for hosts that want no disk.
/// It enforces the same rules as the SQLite store (sequence conflicts, replayed appends,
/// tool-call transitions).
#[derive(Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStore").finish_non_exhaustive()
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> Result<MutexGuard<'_, Inner>, StoreError> {
        self.inner
            .lock()
            .map_err(|_| StoreError::Backend("memory store lock poisoned by a panic".into()))
    }

    /// Writes a tool-call record, taking it if it is owned: see [`Store::upsert_tool_call`].
    fn upsert(&self, record: Cow<'_, ToolCallRecord>) -> Result<(), StoreError> {
        let mut inner = self.lock()?;
        let data = existing(&mut inner, &record.session_id)?;
        match data.tool_calls.iter_mut().find(|r| r.call_id == record.call_id) {
            // A state the call has already reached or passed: a repeated write, ignored.
            Some(stored) if record.state.can_become(stored.state) => {}
            Some(stored) => {
                if !stored.state.can_become(record.state) {
                    return Err(StoreError::InvalidTransition {
                        call_id: record.call_id.clone(),
                        from: stored.state.as_str(),
                        to: record.state.as_str(),
                    });
                }
                *stored = record.into_owned();
            }
            None => data.tool_calls.push(record.into_owned()),
        }
        Ok(())
    }
}

fn existing<'a>(inner: &'a mut Inner, id: &SessionId) -> Result<&'a mut SessionData, StoreError> {
    inner
        .sessions
        .get_mut(id)
        .filter(|s| s.info.is_some())
        .ok_or_else(|| StoreError::SessionNotFound(id.clone()))
}

#[async_trait]
impl Store for MemoryStore {
    async fn create_session(&self, info: &SessionInfo) -> Result<(), StoreError> {
        let mut inner = self.lock()?;
        let data = inner.sessions.entry(info.id.clone()).or_default();
        if data.info.is_some() {
            return Err(StoreError::AlreadyExists(info.id.clone()));
        }
        data.info = Some(info.clone());
        Ok(())
    }

    async fn session(&self, id: &SessionId) -> Result<Option<SessionInfo>, StoreError> {
        Ok(self.lock()?.sessions.get(id).and_then(|s| s.info.clone()))
    }

    async fn list_sessions(&self) -> Result<Vec<SessionInfo>, StoreError> {
        let inner = self.lock()?;
        let mut list: Vec<SessionInfo> = inner.sessions.values().filter_map(|s| s.info.clone()).collect();
        list.sort_by_key(|s| std::cmp::Reverse(s.updated_at_ms));
        Ok(list)
    }

    async fn set_title(&self, id: &SessionId, title: &str) -> Result<(), StoreError> {
        let mut inner = self.lock()?;
        let data = existing(&mut inner, id)?;
        if let Some(info) = data.info.as_mut() {
            info.title = Some(title.to_owned());
            info.updated_at_ms = now_millis();
        }
        Ok(())
    }

    async fn delete_session(&self, id: &SessionId) -> Result<(), StoreError> {
        let mut inner = self.lock()?;
        existing(&mut inner, id)?;
        inner.sessions.remove(id);
        let prefix = super::session_key_prefix(id);
        inner.kv.retain(|key, _| !key.starts_with(&prefix));
        Ok(())
    }

    async fn append_messages(
        &self,
        session: &SessionId,
        first_seq: u64,
        messages: &[Message],
    ) -> Result<(), StoreError> {
        let mut inner = self.lock()?;
        let data = existing(&mut inner, session)?;
        let actual = data.messages.last().map_or(0, |m| m.seq) + 1;
        let conflict = || StoreError::Conflict {
            session: session.clone(),
            expected: first_seq,
            actual,
        };
        if first_seq == 0 || first_seq > actual || (messages.is_empty() && first_seq != actual) {
            return Err(conflict());
        }
        // Numbers are dense from 1, so seq n is at index n - 1. Messages already stored must
        // be the same (a replayed append); only the rest is new.
        let stored = data.messages.get((first_seq - 1) as usize..).unwrap_or_default();
        if stored.iter().zip(messages).any(|(s, m)| s.message != *m) {
            return Err(conflict());
        }
        let new = messages.get(stored.len()..).unwrap_or_default();
        if new.is_empty() {
            return Ok(());
        }
        let now = now_millis();
        for (i, message) in new.iter().enumerate() {
            data.messages.push(StoredMessage {
                seq: actual + i as u64,
                message: message.clone(),
                created_at_ms: now,
            });
        }
        if let Some(info) = data.info.as_mut() {
            info.updated_at_ms = now;
        }
        Ok(())
    }

    async fn load_messages(&self, session: &SessionId, after_seq: u64) -> Result<Vec<StoredMessage>, StoreError> {
        let mut inner = self.lock()?;
        let data = existing(&mut inner, session)?;
        let start = data.messages.partition_point(|m| m.seq <= after_seq);
        Ok(data.messages[start..].to_vec())
    }

    async fn last_seq(&self, session: &SessionId) -> Result<u64, StoreError> {
        let mut inner = self.lock()?;
        let data = existing(&mut inner, session)?;
        Ok(data.messages.last().map_or(0, |m| m.seq))
    }

    async fn upsert_tool_call(&self, record: &ToolCallRecord) -> Result<(), StoreError> {
        self.upsert(Cow::Borrowed(record))
    }

    async fn upsert_tool_call_owned(&self, record: ToolCallRecord) -> Result<(), StoreError> {
        self.upsert(Cow::Owned(record))
    }

    async fn tool_calls(&self, session: &SessionId) -> Result<Vec<ToolCallRecord>, StoreError> {
        let mut inner = self.lock()?;
        Ok(existing(&mut inner, session)?.tool_calls.clone())
    }

    async fn add_compaction(&self, compaction: &Compaction) -> Result<(), StoreError> {
        let mut inner = self.lock()?;
        existing(&mut inner, &compaction.session_id)?
            .compactions
            .push(compaction.clone());
        Ok(())
    }

    async fn latest_compaction(&self, session: &SessionId) -> Result<Option<Compaction>, StoreError> {
        let mut inner = self.lock()?;
        Ok(existing(&mut inner, session)?.compactions.last().cloned())
    }

    async fn set_parked_run(&self, session: &SessionId, state: Option<&serde_json::Value>) -> Result<(), StoreError> {
        let mut inner = self.lock()?;
        existing(&mut inner, session)?.parked = state.cloned();
        Ok(())
    }

    async fn parked_run(&self, session: &SessionId) -> Result<Option<serde_json::Value>, StoreError> {
        let mut inner = self.lock()?;
        Ok(existing(&mut inner, session)?.parked.clone())
    }

    async fn kv_get(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(self.lock()?.kv.get(key).cloned())
    }

    async fn kv_set(&self, key: &str, value: &str) -> Result<(), StoreError> {
        self.lock()?.kv.insert(key.to_owned(), value.to_owned());
        Ok(())
    }

    async fn kv_delete(&self, key: &str) -> Result<(), StoreError> {
        self.lock()?.kv.remove(key);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[tokio::test]
    async fn delete_session_removes_everything_and_reports_missing_ones() {
        let store = MemoryStore::new();
        let id = SessionId::new_random();
        store.create_session(&SessionInfo::new(id.clone())).await.unwrap();
        store.append_messages(&id, 1, &[Message::user("x")]).await.unwrap();
        let own_key = format!("{}spend", super::super::session_key_prefix(&id));
        store.kv_set(&own_key, "1").await.unwrap();
        store.kv_set("shared", "2").await.unwrap();
        store.delete_session(&id).await.unwrap();
        assert!(store.session(&id).await.unwrap().is_none());
        assert_eq!(store.kv_get(&own_key).await.unwrap(), None);
        assert_eq!(store.kv_get("shared").await.unwrap().as_deref(), Some("2"));
        assert_eq!(
            store.delete_session(&id).await.unwrap_err(),
            StoreError::SessionNotFound(id.clone())
        );
        store.create_session(&SessionInfo::new(id.clone())).await.unwrap();
        assert!(store.load_messages(&id, 0).await.unwrap().is_empty());
    }
}
