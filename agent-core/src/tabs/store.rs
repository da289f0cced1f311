//! The tab registry's persistence: [`TabStore`] and its in-memory implementation.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::{Origin, TabId, TabPermissions};
use crate::gate::TurnOrigin;
use crate::message::Message;
use crate::provider::OutputSchema;
use crate::session::SessionId;
use crate::store::{StoreError, now_millis};

/// A message waiting for a tab's next turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueuedMessage {
    /// The message (already carrying the `[message from tab ...]` prefix for agent messages).
    pub message: Message,
    /// Who sent it.
    pub origin: Origin,
    /// The sending tab, for a message from another tab's agent, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_tab: Option<TabId>,
    /// The sending tab's handle when it sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_handle: Option<String>,
    /// When it was queued (ms since the epoch).
    pub queued_at_ms: i64,
    /// The schema the answer to this message must match (a typed turn, see
    /// [`DeliveredMessage::expecting`](super::DeliveredMessage::expecting)). Such a message
    /// gets a turn of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<OutputSchema>,
}

impl QueuedMessage {
    /// A message queued now.
    pub fn new(message: Message, origin: Origin) -> Self {
        QueuedMessage {
            message,
            origin,
            from_tab: None,
            from_handle: None,
            queued_at_ms: now_millis(),
            output: None,
        }
    }

    /// A message from another tab's agent, queued now.
    pub fn from_tab(message: Message, sender: TabId, handle: Option<String>) -> Self {
        QueuedMessage {
            from_tab: Some(sender),
            from_handle: handle,
            ..QueuedMessage::new(message, Origin::Agent)
        }
    }

    /// Who the turn that reads this message acts for.
    pub fn turn_origin(&self) -> TurnOrigin {
        match self.origin {
            Origin::Human => TurnOrigin::Person,
            Origin::Agent => TurnOrigin::Tab {
                tab_id: self.from_tab.as_ref().map(ToString::to_string),
                handle: self.from_handle.clone(),
            },
        }
    }
}

/// Everything the hub persists about a tab. The handle is not stored: it is derived from the
/// ids of the open tabs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TabRecord {
    /// The tab's id.
    pub id: TabId,
    /// The session the tab owns.
    pub session_id: SessionId,
    /// Whether the tab is open (closed tabs are not addressable).
    pub open: bool,
    /// Agent wakes left before agent messages are held.
    pub auto_wake_budget: u32,
    /// Which tab tools its agent gets.
    pub permissions: TabPermissions,
    /// Messages waiting for the next turn, oldest first.
    pub queue: Vec<QueuedMessage>,
    /// Creation time (ms since the epoch).
    pub created_at_ms: i64,
    /// Last change (ms since the epoch).
    pub updated_at_ms: i64,
}

impl TabRecord {
    /// A new open tab created now.
    pub fn new(id: TabId, session_id: SessionId, auto_wake_budget: u32, permissions: TabPermissions) -> Self {
        let now = now_millis();
        TabRecord {
            id,
            session_id,
            open: true,
            auto_wake_budget,
            permissions,
            queue: Vec::new(),
            created_at_ms: now,
            updated_at_ms: now,
        }
    }
}

/// Where the tab registry lives. `agent-store`'s SQLite store implements it; [`MemoryTabStore`]
/// serves tests and hosts that want no disk. Implementations must never block the async
/// executor's threads.
#[async_trait]
pub trait TabStore: Send + Sync {
    /// Inserts or replaces a tab's record.
    async fn save_tab(&self, tab: &TabRecord) -> Result<(), StoreError>;

    /// A tab's record, `None` if it does not exist.
    async fn tab(&self, id: &TabId) -> Result<Option<TabRecord>, StoreError>;

    /// Every tab, open and closed, oldest first.
    async fn list_tabs(&self) -> Result<Vec<TabRecord>, StoreError>;

    /// The open tabs whose id starts with `prefix`, compared literally and case-sensitively
    /// (ids are lowercase): no character of `prefix` is a wildcard, so `%` or `_` match only
    /// themselves (that is, nothing). Sorted by id.
    async fn find_open_by_prefix(&self, prefix: &str) -> Result<Vec<TabRecord>, StoreError>;

    /// Deletes a tab's record; deleting a missing tab is not an error.
    async fn delete_tab(&self, id: &TabId) -> Result<(), StoreError>;
}

/// A [`TabStore`] in memory.
#[derive(Debug, Default)]
pub struct MemoryTabStore {
    tabs: Mutex<BTreeMap<TabId, TabRecord>>,
}

impl MemoryTabStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> Result<MutexGuard<'_, BTreeMap<TabId, TabRecord>>, StoreError> {
        self.tabs
            .lock()
            .map_err(|_| StoreError::Backend("memory tab store lock poisoned by a panic".into()))
    }
}

#[async_trait]
impl TabStore for MemoryTabStore {
    async fn save_tab(&self, tab: &TabRecord) -> Result<(), StoreError> {
        self.lock()?.insert(tab.id.clone(), tab.clone());
        Ok(())
    }

    async fn tab(&self, id: &TabId) -> Result<Option<TabRecord>, StoreError> {
        Ok(self.lock()?.get(id).cloned())
    }

    async fn list_tabs(&self) -> Result<Vec<TabRecord>, StoreError> {
        let mut tabs: Vec<TabRecord> = self.lock()?.values().cloned().collect();
        tabs.sort_by(|a, b| a.created_at_ms.cmp(&b.created_at_ms).then_with(|| a.id.cmp(&b.id)));
        Ok(tabs)
    }

    async fn find_open_by_prefix(&self, prefix: &str) -> Result<Vec<TabRecord>, StoreError> {
        Ok(self
            .lock()?
            .values()
            .filter(|t| t.open && t.id.as_str().starts_with(prefix))
            .cloned()
            .collect())
    }

    async fn delete_tab(&self, id: &TabId) -> Result<(), StoreError> {
        self.lock()?.remove(id);
        Ok(())
    }
}
