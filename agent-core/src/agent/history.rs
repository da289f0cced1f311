use std::sync::Arc;

use crate::message::{ContentPart, Message, Role};
use crate::session::SessionId;
use crate::store::{Store, StoreError};

/// A session's conversation as the loop holds it: every message (the authoritative in-process
/// copy), written through to the store as it is produced.
#[derive(Debug, Default)]
pub(crate) struct History {
    pub messages: Vec<Message>,
    /// The store's sequence number of the last message (equals `messages.len()` when the
    /// whole session is loaded).
    pub last_seq: u64,
    /// Index of the first message of the current turn; tool results before it are replayed in
    /// their compressed form.
    pub turn_start: usize,
}

impl History {
    /// Loads a stored session's messages.
    pub async fn load(store: &dyn Store, session: &SessionId) -> Result<Self, StoreError> {
        let stored = store.load_messages(session, 0).await?;
        let last_seq = stored.last().map_or(0, |m| m.seq);
        let messages: Vec<Message> = stored.into_iter().map(|m| m.message).collect();
        Ok(History {
            turn_start: messages.len(),
            messages,
            last_seq,
        })
    }

    /// Appends messages in memory and writes them through to the store (if any).
    pub async fn push(
        &mut self,
        store: Option<&Arc<dyn Store>>,
        session: &SessionId,
        batch: Vec<Message>,
    ) -> Result<(), StoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        if let Some(store) = store {
            store.append_messages(session, self.last_seq + 1, &batch).await?;
        }
        self.last_seq += batch.len() as u64;
        self.messages.extend(batch);
        Ok(())
    }

    /// What the model may see: visible messages, with tool results of earlier turns replaced
    /// by their compressed form.
    pub fn model_view(&self) -> Vec<Message> {
        let mut view = Vec::with_capacity(self.messages.len());
        for (i, m) in self.messages.iter().enumerate() {
            if !m.visibility.model {
                continue;
            }
            match (&m.compressed, i < self.turn_start && m.role == Role::Tool) {
                (Some(compressed), true) => {
                    let mut replay = m.clone();
                    replay.content = vec![ContentPart::text(compressed.clone())];
                    replay.compressed = None;
                    view.push(replay);
                }
                _ => view.push(m.clone()),
            }
        }
        view
    }

    /// Tool calls of the last assistant message that have no result after it.
    pub fn dangling_calls(&self) -> Vec<(String, String)> {
        let Some(pos) = self.messages.iter().rposition(|m| m.role == Role::Assistant) else {
            return Vec::new();
        };
        let answered: Vec<&str> = self.messages[pos + 1..]
            .iter()
            .filter_map(|m| m.tool_call_id.as_deref())
            .collect();
        self.messages[pos]
            .tool_calls
            .iter()
            .filter(|c| !answered.contains(&c.id.as_str()))
            .map(|c| (c.id.clone(), c.name.clone()))
            .collect()
    }
}
