//! The hub's state: per-tab state behind an async lock, the handle index, events, and the
//! tab's live agent session. What happens to a delivered message is in `delivery`.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, Weak};

use tokio::runtime::Handle;
use tokio::sync::{broadcast, watch};

use super::handles::{HandleIndex, Resolution};
use super::host_tabs::{HostTabIndex, OpenedTabPolicy};
use super::store::{TabRecord, TabStore};
use super::tools::tab_tools;
use super::types::{AgentFactory, TabError, TabEvent, TabEventKind, TabInfo, TabSnapshot};
use super::{TabId, TabPermissions, TabState};
use crate::agent::{Agent, AgentError, Run, Session};
use crate::message::Role;
use crate::store::Store;
use crate::tool::Tool;

/// The host's per-tab tools (`TabHubBuilder::tab_tools`), given the hub as the weak reference
/// the tools keep.
pub(super) type MoreTabTools = Arc<dyn Fn(&TabId, Weak<HubInner>) -> Vec<Arc<dyn Tool>> + Send + Sync>;

pub(crate) struct HubInner {
    pub(super) factory: AgentFactory,
    pub(super) store: Arc<dyn Store>,
    pub(super) tab_store: Arc<dyn TabStore>,
    pub(super) budget: u32,
    /// Messages from other tabs' agents a tab's queue holds at most.
    pub(super) max_held: usize,
    pub(super) default_permissions: TabPermissions,
    pub(super) index: RwLock<HandleIndex>,
    pub(super) slots: RwLock<HashMap<TabId, Arc<Slot>>>,
    pub(super) events: broadcast::Sender<TabEvent>,
    /// How many tabs are running.
    pub(super) running: watch::Sender<usize>,
    pub(super) runtime: Handle,
    /// Which browser tabs belong to which hub tab.
    pub(super) host_tabs: RwLock<HostTabIndex>,
    pub(super) opened_tab_policy: OpenedTabPolicy,
    pub(super) tab_tools: Option<MoreTabTools>,
}

/// One tab: its mutable state behind an async lock (held only for decisions, never during a
/// turn) and a published snapshot for cheap reads.
pub(super) struct Slot {
    pub(super) id: TabId,
    pub(super) state: tokio::sync::Mutex<SlotState>,
    pub(super) info: watch::Sender<TabInfo>,
}

pub(super) struct SlotState {
    pub(super) record: TabRecord,
    pub(super) live: Option<Live>,
    pub(super) run: Option<Arc<Run>>,
    /// The session's last sequence number before the running turn started.
    pub(super) turn_start_seq: u64,
    pub(super) state: TabState,
    pub(super) awaiting_user: bool,
}

pub(super) struct Live {
    pub(super) session: Session,
    pub(super) permissions: TabPermissions,
}

impl Slot {
    pub(super) fn new(record: TabRecord) -> Arc<Slot> {
        let info = TabInfo {
            id: record.id.clone(),
            handle: None,
            session_id: record.session_id.clone(),
            open: record.open,
            state: TabState::Idle,
            queue_len: record.queue.len(),
            auto_wake_budget: record.auto_wake_budget,
            held: false,
            awaiting_user: false,
            permissions: record.permissions,
        };
        Arc::new(Slot {
            id: record.id.clone(),
            info: watch::channel(info).0,
            state: tokio::sync::Mutex::new(SlotState {
                record,
                live: None,
                run: None,
                turn_start_seq: 0,
                state: TabState::Idle,
                awaiting_user: false,
            }),
        })
    }
}

pub(super) fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub(super) fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl HubInner {
    pub(super) fn slot(&self, tab: &TabId) -> Result<Arc<Slot>, TabError> {
        read(&self.slots)
            .get(tab)
            .cloned()
            .ok_or_else(|| TabError::NotFound(tab.clone()))
    }

    pub(crate) fn resolve(&self, input: &str) -> Resolution {
        read(&self.index).resolve(input)
    }

    pub(crate) fn handle(&self, tab: &TabId) -> Option<String> {
        read(&self.index).handle(tab)
    }

    pub(crate) fn permissions(&self, tab: &TabId) -> TabPermissions {
        self.info(tab).map(|i| i.permissions).unwrap_or_default()
    }

    pub(crate) fn info(&self, tab: &TabId) -> Option<TabInfo> {
        let slot = read(&self.slots).get(tab).cloned()?;
        let mut info = slot.info.borrow().clone();
        info.handle = if info.open { self.handle(tab) } else { None };
        Some(info)
    }

    pub(super) fn emit(&self, tab: &TabId, kind: TabEventKind) {
        // No subscriber is fine: events are optional for hosts.
        let _ = self.events.send(TabEvent {
            tab_id: tab.clone(),
            kind,
        });
    }

    pub(super) fn emit_opened(&self, tab: &TabId) {
        let handle = self.handle(tab).unwrap_or_default();
        self.emit(tab, TabEventKind::TabOpened { handle });
    }

    pub(super) fn notice(&self, tab: &TabId, code: &str, message: String, queue_len: usize) {
        tracing::info!(tab = %tab, code, "{message}");
        self.emit(
            tab,
            TabEventKind::Notice {
                code: code.to_owned(),
                message,
                queue_len,
            },
        );
    }

    /// Publishes the tab's snapshot, emitting `state_changed` and keeping the running count.
    pub(super) fn publish(&self, slot: &Slot, st: &SlotState) {
        let info = TabInfo {
            id: slot.id.clone(),
            handle: None,
            session_id: st.record.session_id.clone(),
            open: st.record.open,
            state: st.state,
            queue_len: st.record.queue.len(),
            auto_wake_budget: st.record.auto_wake_budget,
            held: st.state != TabState::Running && !st.record.queue.is_empty(),
            awaiting_user: st.awaiting_user,
            permissions: st.record.permissions,
        };
        let before = slot.info.borrow().state;
        let after = info.state;
        let was_running = before == TabState::Running;
        let is_running = after == TabState::Running;
        // Count a tab as running before it is shown running, and show it idle before it stops
        // counting, so `wait_all_idle` never returns while a snapshot still says running.
        if is_running && !was_running {
            self.running.send_modify(|n| *n += 1);
        }
        slot.info.send_replace(info);
        if was_running && !is_running {
            self.running.send_modify(|n| *n = n.saturating_sub(1));
        }
        if before != after {
            self.emit(&slot.id, TabEventKind::StateChanged { state: after });
        }
    }

    pub(super) async fn save_checked(&self, st: &mut SlotState) -> Result<(), TabError> {
        st.record.updated_at_ms = crate::store::now_millis();
        self.tab_store.save_tab(&st.record).await?;
        Ok(())
    }

    /// Saves the record where no caller can take the error: logs it instead.
    pub(super) async fn save(&self, st: &SlotState) {
        let mut record = st.record.clone();
        record.updated_at_ms = crate::store::now_millis();
        if let Err(e) = self.tab_store.save_tab(&record).await {
            tracing::warn!(tab = %record.id, error = %e, "could not save the tab record");
        }
    }

    pub(super) fn build_agent(self: &Arc<Self>, tab: &TabId, permissions: TabPermissions) -> Result<Agent, AgentError> {
        let mut builder = (self.factory)(tab).store_arc(self.store.clone());
        for tool in tab_tools(Arc::downgrade(self), tab.clone(), permissions) {
            builder = builder.tool_arc(tool);
        }
        if let Some(make) = &self.tab_tools {
            for tool in make(tab, Arc::downgrade(self)) {
                builder = builder.tool_arc(tool);
            }
        }
        builder.build()
    }

    /// Makes sure the tab has an agent built for its current permissions and its session open.
    pub(super) async fn ensure_live(self: &Arc<Self>, slot: &Slot, st: &mut SlotState) -> Result<(), TabError> {
        let permissions = st.record.permissions;
        if st.live.as_ref().is_some_and(|l| l.permissions == permissions) {
            return Ok(());
        }
        let agent = self.build_agent(&slot.id, permissions)?;
        let session = match agent.open_session(&st.record.session_id).await {
            Ok(session) => session,
            Err(AgentError::SessionNotFound(_)) => agent.create_session_with_id(st.record.session_id.clone()).await?,
            Err(e) => return Err(e.into()),
        };
        st.live = Some(Live { session, permissions });
        Ok(())
    }

    pub(crate) async fn read(&self, tab: &TabId) -> Result<TabSnapshot, TabError> {
        let slot = self.slot(tab)?;
        let (state, session_id, turn_start) = {
            let st = slot.state.lock().await;
            (st.state, st.record.session_id.clone(), st.turn_start_seq)
        };
        let messages = self.store.load_messages(&session_id, 0).await?;
        let last_response = messages
            .iter()
            .rev()
            .filter(|m| state != TabState::Running || m.seq <= turn_start)
            .filter(|m| m.message.role == Role::Assistant)
            .map(|m| m.message.text())
            .find(|t| !t.trim().is_empty());
        Ok(TabSnapshot {
            tab_id: tab.clone(),
            handle: self.handle(tab),
            state,
            last_response,
        })
    }
}
