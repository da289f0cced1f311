//! The tab hub: tabs, their sessions and agents, delivery with queueing, and the auto-wake
//! budget.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, RwLock};

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use tokio::runtime::Handle;
use tokio::sync::{broadcast, watch};

use super::handles::{HandleIndex, Resolution};
use super::store::{MemoryTabStore, QueuedMessage, TabRecord, TabStore};
use super::tools::tab_tools;
use super::{DEFAULT_AUTO_WAKE_BUDGET, DeliveryStatus, Origin, TabId, TabPermissions, TabState};
use crate::agent::{Agent, AgentBuilder, AgentError, Outcome, OutcomeStatus, Run, RunEvents, Session};
use crate::event::{AgentEvent, EventKind};
use crate::message::{ContentPart, Message, Role};
use crate::session::SessionId;
use crate::store::{MemoryStore, Store, StoreError};

/// Makes the agent of a tab: a fresh [`AgentBuilder`] (provider, other tools, system prompt,
/// config) for the given tab. The hub adds its store and the tab tools the tab's permissions
/// allow, then builds it. Called when a tab opens, when a restored tab is first used, and
/// when a tab's permissions change.
pub type AgentFactory = Arc<dyn Fn(&TabId) -> AgentBuilder + Send + Sync>;

/// A tab hub failure.
#[derive(Debug, thiserror::Error)]
pub enum TabError {
    /// No tab has this id.
    #[error("tab {0} not found")]
    NotFound(TabId),
    /// The tab is closed; reopen it first.
    #[error("tab {0} is closed; reopen it with TabHub::reopen_tab")]
    Closed(TabId),
    /// A tab with this id exists already.
    #[error("tab {0} already exists")]
    AlreadyExists(TabId),
    /// [`TabHubBuilder::build`] was called without an agent factory.
    #[error("no agent factory: call TabHubBuilder::agent_factory(...) before build()")]
    NoAgentFactory,
    /// No Tokio runtime to watch turns on.
    #[error("no Tokio runtime: build the tab hub inside a Tokio runtime")]
    NoRuntime,
    /// The tab's agent could not be built or its session opened.
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What [`TabHub::deliver`] did.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// Started, queued or held.
    pub status: DeliveryStatus,
    /// Messages waiting in the tab's queue afterwards.
    pub queue_len: usize,
    /// The tab's auto-wake budget afterwards.
    pub auto_wake_budget: u32,
    /// For `held`: whether the tab is held because its turn is parked on a question to its
    /// person (rather than because its budget is spent).
    pub awaiting_user: bool,
    /// The turn that started, for `started`. The hub reads its events first (they are
    /// forwarded to [`TabHub::subscribe`]); `.outcome()` works as usual.
    pub run: Option<Arc<Run>>,
}

/// A snapshot of a tab.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TabInfo {
    /// The tab's id.
    pub id: TabId,
    /// Its current handle (`None` when the tab is closed).
    pub handle: Option<String>,
    /// The session it owns.
    pub session_id: SessionId,
    /// Whether it is open.
    pub open: bool,
    /// What its agent is doing.
    pub state: TabState,
    /// Messages waiting for its next turn.
    pub queue_len: usize,
    /// Agent wakes left.
    pub auto_wake_budget: u32,
    /// Messages are waiting but will not start a turn by themselves (budget spent, or the
    /// last turn is parked on a question to the person); the next human message releases them.
    pub held: bool,
    /// The last turn ended parked on a question to the person.
    pub awaiting_user: bool,
    /// Which tab tools its agent has.
    pub permissions: TabPermissions,
}

/// What `read_tab` sees of a tab: its last completed assistant turn and its state. Reading it
/// never waits for a running turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TabSnapshot {
    /// The tab.
    pub tab_id: TabId,
    /// Its handle (`None` when closed).
    pub handle: Option<String>,
    /// What its agent is doing.
    pub state: TabState,
    /// The text of the last completed turn's final assistant message. While a turn runs, this
    /// is the turn before it. `None` when no turn has completed yet.
    pub last_response: Option<String>,
}

/// An event of the hub, tagged with its tab.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TabEvent {
    /// The tab.
    pub tab_id: TabId,
    /// What happened.
    #[serde(flatten)]
    pub kind: TabEventKind,
}

/// What happened in a tab. Serialized with a `type` field.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TabEventKind {
    /// The tab opened (or reopened).
    TabOpened {
        /// Its handle at that moment.
        handle: String,
    },
    /// The tab closed.
    TabClosed,
    /// The tab's agent state changed.
    StateChanged {
        /// The new state.
        state: TabState,
    },
    /// An event of one of the tab's turns, or `message_queued` when a message for a busy tab
    /// was queued.
    Agent {
        /// The event.
        event: Box<AgentEvent>,
    },
    /// Something the person should know, such as agent messages held because the auto-wake
    /// budget is spent (`code` = `auto_wake_budget_spent`), held while a question to the person
    /// is pending (`awaiting_user`), or a queued turn that failed to start (`start_failed`).
    Notice {
        /// A stable code.
        code: String,
        /// A sentence for the person.
        message: String,
        /// Messages waiting in the queue.
        queue_len: usize,
    },
}

/// Builds a [`TabHub`].
pub struct TabHubBuilder {
    factory: Option<AgentFactory>,
    store: Option<Arc<dyn Store>>,
    tab_store: Option<Arc<dyn TabStore>>,
    auto_wake_budget: u32,
    default_permissions: TabPermissions,
    event_buffer: usize,
}

impl Default for TabHubBuilder {
    fn default() -> Self {
        TabHubBuilder {
            factory: None,
            store: None,
            tab_store: None,
            auto_wake_budget: DEFAULT_AUTO_WAKE_BUDGET,
            default_permissions: TabPermissions::default(),
            event_buffer: 1024,
        }
    }
}

impl TabHubBuilder {
    /// How each tab's agent is made (required). See [`AgentFactory`].
    pub fn agent_factory(mut self, factory: impl Fn(&TabId) -> AgentBuilder + Send + Sync + 'static) -> Self {
        self.factory = Some(Arc::new(factory));
        self
    }

    /// Where the tabs' sessions persist (default: a [`MemoryStore`]). Every tab agent gets it.
    pub fn store(mut self, store: Arc<dyn Store>) -> Self {
        self.store = Some(store);
        self
    }

    /// Where the tab registry persists (default: a [`MemoryTabStore`]). [`TabHubBuilder::build`]
    /// restores the tabs it holds.
    pub fn tab_store(mut self, tab_store: Arc<dyn TabStore>) -> Self {
        self.tab_store = Some(tab_store);
        self
    }

    /// Agent wakes a tab may receive between two human messages (default 6).
    pub fn auto_wake_budget(mut self, budget: u32) -> Self {
        self.auto_wake_budget = budget;
        self
    }

    /// The permissions new tabs get (default: none).
    pub fn default_permissions(mut self, permissions: TabPermissions) -> Self {
        self.default_permissions = permissions;
        self
    }

    /// Events buffered for slow [`TabHub::subscribe`] receivers (default 1024).
    pub fn event_buffer(mut self, size: usize) -> Self {
        self.event_buffer = size.max(1);
        self
    }

    /// Builds the hub and restores the tabs of its tab store. Open tabs with queued messages
    /// pick them up as if their last turn had just ended.
    pub async fn build(self) -> Result<TabHub, TabError> {
        let factory = self.factory.ok_or(TabError::NoAgentFactory)?;
        let runtime = Handle::try_current().map_err(|_| TabError::NoRuntime)?;
        let (events, _) = broadcast::channel(self.event_buffer);
        let inner = Arc::new(HubInner {
            factory,
            store: self.store.unwrap_or_else(|| Arc::new(MemoryStore::new())),
            tab_store: self.tab_store.unwrap_or_else(|| Arc::new(MemoryTabStore::new())),
            budget: self.auto_wake_budget,
            default_permissions: self.default_permissions,
            index: RwLock::new(HandleIndex::new()),
            slots: RwLock::new(HashMap::new()),
            events,
            running: watch::channel(0).0,
            runtime,
        });
        let records = inner.tab_store.list_tabs().await?;
        let mut restored = Vec::new();
        for record in records {
            let open = record.open;
            let slot = Slot::new(record);
            if open {
                write(&inner.index).insert(slot.id.clone());
            }
            write(&inner.slots).insert(slot.id.clone(), slot.clone());
            restored.push(slot);
        }
        for slot in restored {
            let mut st = slot.state.lock().await;
            inner.pump(&slot, &mut st).await;
            inner.save(&st).await;
            inner.publish(&slot, &st);
        }
        Ok(TabHub { inner })
    }
}

/// Tabs, their sessions and agents, and the one `deliver` that routes every message.
///
/// Cheap to clone; clones share everything. See the [module docs](crate::tabs).
#[derive(Clone)]
pub struct TabHub {
    inner: Arc<HubInner>,
}

impl std::fmt::Debug for TabHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TabHub")
            .field("open_tabs", &read(&self.inner.index).len())
            .field("auto_wake_budget", &self.inner.budget)
            .finish_non_exhaustive()
    }
}

impl TabHub {
    /// Starts building a hub.
    pub fn builder() -> TabHubBuilder {
        TabHubBuilder::default()
    }

    /// Opens a new tab with a random id, a new session and the default permissions.
    pub async fn open_tab(&self) -> Result<TabId, TabError> {
        let id = TabId::new_random();
        self.open_tab_with(id.clone(), self.inner.default_permissions).await?;
        Ok(id)
    }

    /// Opens a new tab with the given id and permissions.
    pub async fn open_tab_with(&self, id: TabId, permissions: TabPermissions) -> Result<(), TabError> {
        let inner = &self.inner;
        if read(&inner.slots).contains_key(&id) || inner.tab_store.tab(&id).await?.is_some() {
            return Err(TabError::AlreadyExists(id));
        }
        let record = TabRecord::new(id.clone(), SessionId::new_random(), inner.budget, permissions);
        let slot = Slot::new(record);
        {
            let mut st = slot.state.lock().await;
            inner.ensure_live(&slot, &mut st).await?;
            inner.tab_store.save_tab(&st.record).await?;
            {
                let mut slots = write(&inner.slots);
                if slots.contains_key(&id) {
                    return Err(TabError::AlreadyExists(id));
                }
                slots.insert(id.clone(), slot.clone());
            }
            write(&inner.index).insert(id.clone());
            inner.publish(&slot, &st);
        }
        inner.emit_opened(&id);
        Ok(())
    }

    /// Closes a tab: it is no longer addressable, a running turn is cancelled, and the handles
    /// of the other tabs may shrink. Its session and queued messages are kept.
    pub async fn close_tab(&self, tab: &TabId) -> Result<(), TabError> {
        let inner = &self.inner;
        let slot = inner.slot(tab)?;
        let mut st = slot.state.lock().await;
        if !st.record.open {
            return Ok(());
        }
        st.record.open = false;
        if let Some(run) = &st.run {
            run.cancel();
        }
        write(&inner.index).remove(tab);
        inner.save_checked(&mut st).await?;
        inner.publish(&slot, &st);
        inner.emit(tab, TabEventKind::TabClosed);
        Ok(())
    }

    /// Reopens a closed tab. Messages queued for it start a turn as usual.
    pub async fn reopen_tab(&self, tab: &TabId) -> Result<(), TabError> {
        let inner = &self.inner;
        let slot = inner.slot(tab)?;
        let mut st = slot.state.lock().await;
        if st.record.open {
            return Ok(());
        }
        st.record.open = true;
        write(&inner.index).insert(tab.clone());
        inner.emit_opened(tab);
        inner.pump(&slot, &mut st).await;
        inner.save_checked(&mut st).await?;
        inner.publish(&slot, &st);
        Ok(())
    }

    /// Delivers a message to a tab: an idle (or errored) tab starts a turn, a busy tab queues
    /// it (emitting `message_queued`) and starts a new turn with it when the current one ends.
    /// [`Origin::Human`] refills the tab's auto-wake budget; [`Origin::Agent`] spends one unit
    /// when it wakes an idle tab, and past the budget is queued but held (see the module docs).
    pub async fn deliver(
        &self,
        tab: &TabId,
        message: impl Into<DeliveredMessage>,
        origin: Origin,
    ) -> Result<Delivery, TabError> {
        self.inner.deliver(tab, message.into().0, origin).await
    }

    /// Resolves a handle or any prefix of a tab id against the open tabs.
    pub fn resolve(&self, input: &str) -> Resolution {
        read(&self.inner.index).resolve(input)
    }

    /// An open tab's handle.
    pub fn handle(&self, tab: &TabId) -> Option<String> {
        read(&self.inner.index).handle(tab)
    }

    /// Every open tab with its handle, sorted by id.
    pub fn handles(&self) -> Vec<(TabId, String)> {
        read(&self.inner.index).handles()
    }

    /// A snapshot of a tab, `None` if there is no such tab.
    pub fn tab(&self, tab: &TabId) -> Option<TabInfo> {
        self.inner.info(tab)
    }

    /// Snapshots of every tab, open and closed.
    pub fn tabs(&self) -> Vec<TabInfo> {
        let ids: Vec<TabId> = read(&self.inner.slots).keys().cloned().collect();
        let mut tabs: Vec<TabInfo> = ids.iter().filter_map(|id| self.inner.info(id)).collect();
        tabs.sort_by(|a, b| a.id.cmp(&b.id));
        tabs
    }

    /// Changes which tab tools a tab's agent gets. Revoking takes effect at once (the tools
    /// check on every call); granting takes effect from the tab's next turn, when the hub
    /// rebuilds its agent over the same session.
    pub async fn set_permissions(&self, tab: &TabId, permissions: TabPermissions) -> Result<(), TabError> {
        let slot = self.inner.slot(tab)?;
        let mut st = slot.state.lock().await;
        st.record.permissions = permissions;
        self.inner.save_checked(&mut st).await?;
        self.inner.publish(&slot, &st);
        Ok(())
    }

    /// What `read_tab` returns for a tab: its last completed assistant turn and its state.
    /// Never waits for a running turn.
    pub async fn read(&self, tab: &TabId) -> Result<TabSnapshot, TabError> {
        self.inner.read(tab).await
    }

    /// The session a tab owns (its agent is built if the tab was restored and not used yet).
    /// Send messages through [`TabHub::deliver`], not the session, so the hub sees every turn.
    pub async fn session(&self, tab: &TabId) -> Result<Session, TabError> {
        let slot = self.inner.slot(tab)?;
        let mut st = slot.state.lock().await;
        self.inner.ensure_live(&slot, &mut st).await?;
        st.live
            .as_ref()
            .map(|l| l.session.clone())
            .ok_or_else(|| TabError::NotFound(tab.clone()))
    }

    /// Cancels the tab's running turn, if any. Queued messages stay queued and start the next
    /// turn as usual (take them out first with [`TabHub::take_queue`] to stop them).
    pub async fn cancel(&self, tab: &TabId) -> Result<(), TabError> {
        let slot = self.inner.slot(tab)?;
        let st = slot.state.lock().await;
        if let Some(run) = &st.run {
            run.cancel();
        }
        Ok(())
    }

    /// Removes and returns the messages queued for a tab.
    pub async fn take_queue(&self, tab: &TabId) -> Result<Vec<QueuedMessage>, TabError> {
        let slot = self.inner.slot(tab)?;
        let mut st = slot.state.lock().await;
        let taken = std::mem::take(&mut st.record.queue);
        self.inner.save_checked(&mut st).await?;
        self.inner.publish(&slot, &st);
        Ok(taken)
    }

    /// The hub's events: tabs opening and closing, state changes, every event of every turn
    /// the hub starts, `message_queued`, and notices. A receiver that falls more than the
    /// event buffer behind skips events.
    pub fn subscribe(&self) -> broadcast::Receiver<TabEvent> {
        self.inner.events.subscribe()
    }

    /// Waits until the tab is not running (its queue may still hold held messages).
    pub async fn wait_idle(&self, tab: &TabId) -> Result<TabInfo, TabError> {
        let slot = self.inner.slot(tab)?;
        let mut receiver = slot.info.subscribe();
        let info = receiver
            .wait_for(|i| i.state != TabState::Running)
            .await
            .map(|i| i.clone())
            .map_err(|_| TabError::NotFound(tab.clone()))?;
        Ok(self.inner.info(tab).unwrap_or(info))
    }

    /// Waits until no tab of the hub is running. Since only a running turn can wake another
    /// tab, the hub is then quiet until the host delivers a message.
    pub async fn wait_all_idle(&self) {
        let mut receiver = self.inner.running.subscribe();
        let _ = receiver.wait_for(|n| *n == 0).await;
    }

    /// The store the tabs' sessions persist in.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.inner.store
    }

    /// The store the tab registry persists in.
    pub fn tab_store(&self) -> &Arc<dyn TabStore> {
        &self.inner.tab_store
    }
}

/// A message for [`TabHub::deliver`]: a [`Message`] or text (a user message).
#[derive(Debug, Clone)]
pub struct DeliveredMessage(Message);

impl From<Message> for DeliveredMessage {
    fn from(message: Message) -> Self {
        DeliveredMessage(message)
    }
}

impl From<&str> for DeliveredMessage {
    fn from(text: &str) -> Self {
        DeliveredMessage(Message::user(text))
    }
}

impl From<String> for DeliveredMessage {
    fn from(text: String) -> Self {
        DeliveredMessage(Message::user(text))
    }
}

pub(crate) struct HubInner {
    factory: AgentFactory,
    store: Arc<dyn Store>,
    tab_store: Arc<dyn TabStore>,
    budget: u32,
    default_permissions: TabPermissions,
    index: RwLock<HandleIndex>,
    slots: RwLock<HashMap<TabId, Arc<Slot>>>,
    events: broadcast::Sender<TabEvent>,
    /// How many tabs are running.
    running: watch::Sender<usize>,
    runtime: Handle,
}

/// One tab: its mutable state behind an async lock (held only for decisions, never during a
/// turn) and a published snapshot for cheap reads.
struct Slot {
    id: TabId,
    state: tokio::sync::Mutex<SlotState>,
    info: watch::Sender<TabInfo>,
}

struct SlotState {
    record: TabRecord,
    live: Option<Live>,
    run: Option<Arc<Run>>,
    /// The session's last sequence number before the running turn started.
    turn_start_seq: u64,
    state: TabState,
    awaiting_user: bool,
}

struct Live {
    session: Session,
    permissions: TabPermissions,
}

impl Slot {
    fn new(record: TabRecord) -> Arc<Slot> {
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

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl HubInner {
    fn slot(&self, tab: &TabId) -> Result<Arc<Slot>, TabError> {
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

    fn emit(&self, tab: &TabId, kind: TabEventKind) {
        // No subscriber is fine: events are optional for hosts.
        let _ = self.events.send(TabEvent {
            tab_id: tab.clone(),
            kind,
        });
    }

    fn emit_opened(&self, tab: &TabId) {
        let handle = self.handle(tab).unwrap_or_default();
        self.emit(tab, TabEventKind::TabOpened { handle });
    }

    fn notice(&self, tab: &TabId, code: &str, message: String, queue_len: usize) {
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
    fn publish(&self, slot: &Slot, st: &SlotState) {
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
        if before != after {
            let was = before == TabState::Running;
            let is = after == TabState::Running;
            if was != is {
                self.running.send_modify(|n| {
                    if is {
                        *n += 1;
                    } else {
                        *n = n.saturating_sub(1);
                    }
                });
            }
        }
        slot.info.send_replace(info);
        if before != after {
            self.emit(&slot.id, TabEventKind::StateChanged { state: after });
        }
    }

    async fn save_checked(&self, st: &mut SlotState) -> Result<(), TabError> {
        st.record.updated_at_ms = crate::store::now_millis();
        self.tab_store.save_tab(&st.record).await?;
        Ok(())
    }

    /// Saves the record where no caller can take the error: logs it instead.
    async fn save(&self, st: &SlotState) {
        let mut record = st.record.clone();
        record.updated_at_ms = crate::store::now_millis();
        if let Err(e) = self.tab_store.save_tab(&record).await {
            tracing::warn!(tab = %record.id, error = %e, "could not save the tab record");
        }
    }

    fn build_agent(self: &Arc<Self>, tab: &TabId, permissions: TabPermissions) -> Result<Agent, AgentError> {
        let mut builder = (self.factory)(tab).store_arc(self.store.clone());
        for tool in tab_tools(Arc::downgrade(self), tab.clone(), permissions) {
            builder = builder.tool_arc(tool);
        }
        builder.build()
    }

    /// Makes sure the tab has an agent built for its current permissions and its session open.
    async fn ensure_live(self: &Arc<Self>, slot: &Slot, st: &mut SlotState) -> Result<(), TabError> {
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

    pub(crate) async fn deliver(
        self: &Arc<Self>,
        tab: &TabId,
        message: Message,
        origin: Origin,
    ) -> Result<Delivery, TabError> {
        let slot = self.slot(tab)?;
        let mut st = slot.state.lock().await;
        if !st.record.open {
            return Err(TabError::Closed(tab.clone()));
        }
        if origin == Origin::Human {
            st.record.auto_wake_budget = self.budget;
        }
        st.record.queue.push(QueuedMessage::new(message, origin));
        let mut run = None;
        let status = if st.state == TabState::Running {
            self.queued_event(&st, origin);
            if origin == Origin::Agent && st.record.auto_wake_budget == 0 {
                self.held_notice(&st);
                DeliveryStatus::Held
            } else {
                DeliveryStatus::Queued
            }
        } else if origin == Origin::Agent && (st.awaiting_user || st.record.auto_wake_budget == 0) {
            self.queued_event(&st, origin);
            self.held_notice(&st);
            DeliveryStatus::Held
        } else {
            if origin == Origin::Agent {
                st.record.auto_wake_budget -= 1;
            }
            match self.start_queued(&slot, &mut st).await {
                Ok(started) => {
                    run = Some(started);
                    DeliveryStatus::Started
                }
                Err(e) => {
                    // The caller gets the error, so the message is theirs again.
                    st.record.queue.pop();
                    if origin == Origin::Agent {
                        st.record.auto_wake_budget += 1;
                    }
                    st.state = TabState::Error;
                    self.save(&st).await;
                    self.publish(&slot, &st);
                    return Err(e);
                }
            }
        };
        self.save_checked(&mut st).await?;
        self.publish(&slot, &st);
        Ok(Delivery {
            status,
            queue_len: st.record.queue.len(),
            auto_wake_budget: st.record.auto_wake_budget,
            awaiting_user: status == DeliveryStatus::Held && st.awaiting_user,
            run,
        })
    }

    fn queued_event(&self, st: &SlotState, origin: Origin) {
        self.emit(
            &st.record.id,
            TabEventKind::Agent {
                event: Box::new(AgentEvent {
                    session_id: st.record.session_id.clone(),
                    kind: EventKind::MessageQueued {
                        queue_len: st.record.queue.len(),
                        origin: origin.as_str().to_owned(),
                    },
                }),
            },
        );
    }

    fn held_notice(&self, st: &SlotState) {
        let handle = self.handle(&st.record.id).unwrap_or_else(|| st.record.id.to_string());
        let n = st.record.queue.len();
        if st.awaiting_user {
            self.notice(
                &st.record.id,
                "awaiting_user",
                format!(
                    "Tab {handle} is waiting for its person to answer a question; {n} queued message(s) from other agents wait until it continues."
                ),
                n,
            );
        } else {
            self.notice(
                &st.record.id,
                "auto_wake_budget_spent",
                format!(
                    "Tab {handle} has used its auto-wake budget ({} agent wakes without a human message); {n} queued message(s) from other agents are held until a person messages this tab.",
                    self.budget
                ),
                n,
            );
        }
    }

    /// Starts a turn with everything queued. On failure the queue is left as it was.
    async fn start_queued(self: &Arc<Self>, slot: &Arc<Slot>, st: &mut SlotState) -> Result<Arc<Run>, TabError> {
        self.ensure_live(slot, st).await?;
        let turn_start_seq = self.store.last_seq(&st.record.session_id).await?;
        let Some(live) = &st.live else {
            return Err(TabError::NotFound(slot.id.clone()));
        };
        let batch = std::mem::take(&mut st.record.queue);
        let run = Arc::new(live.session.send_message(combine(batch)));
        st.turn_start_seq = turn_start_seq;
        st.run = Some(run.clone());
        st.state = TabState::Running;
        st.awaiting_user = false;
        let events = run.events();
        self.runtime
            .spawn(watch_run(self.clone(), slot.clone(), run.clone(), events));
        Ok(run)
    }

    /// After a turn ends (or a tab is restored or reopened): start a turn with the queued
    /// messages if any may wake the tab, or announce that they are held.
    async fn pump(self: &Arc<Self>, slot: &Arc<Slot>, st: &mut SlotState) {
        if !st.record.open || st.record.queue.is_empty() || st.state == TabState::Running {
            return;
        }
        let has_human = st.record.queue.iter().any(|q| q.origin == Origin::Human);
        let mut spent = false;
        if !has_human {
            if st.awaiting_user || st.record.auto_wake_budget == 0 {
                self.held_notice(st);
                return;
            }
            st.record.auto_wake_budget -= 1;
            spent = true;
        }
        if let Err(e) = self.start_queued(slot, st).await {
            if spent {
                st.record.auto_wake_budget += 1;
            }
            st.state = TabState::Error;
            let n = st.record.queue.len();
            self.notice(
                &slot.id,
                "start_failed",
                format!("A turn for {n} queued message(s) could not start: {e}. They stay queued; the next delivery retries."),
                n,
            );
        }
    }

    /// Boxed: a turn's end may start the next turn, whose watcher ends in here again.
    fn turn_ended<'a>(
        self: &'a Arc<Self>,
        slot: &'a Arc<Slot>,
        run: &'a Arc<Run>,
        outcome: Outcome,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(async move {
            let mut st = slot.state.lock().await;
            if st.run.as_ref().is_none_or(|r| r.id() != run.id()) {
                return;
            }
            st.run = None;
            st.state = if outcome.status == OutcomeStatus::Error {
                TabState::Error
            } else {
                TabState::Idle
            };
            st.awaiting_user = outcome.status == OutcomeStatus::AwaitingUser;
            self.pump(slot, &mut st).await;
            self.save(&st).await;
            self.publish(slot, &st);
        })
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

/// Forwards a turn's events to the hub's subscribers, then hands its outcome to the hub.
async fn watch_run(inner: Arc<HubInner>, slot: Arc<Slot>, run: Arc<Run>, mut events: RunEvents) {
    while let Some(event) = events.next().await {
        inner.emit(&slot.id, TabEventKind::Agent { event: Box::new(event) });
    }
    let outcome = run.outcome().await;
    inner.turn_ended(&slot, &run, outcome).await;
}

/// One user message from a batch of queued messages: a single message as it is; several
/// joined with blank lines, oldest first.
fn combine(batch: Vec<QueuedMessage>) -> Message {
    let mut messages: Vec<Message> = batch.into_iter().map(|q| q.message).collect();
    if messages.len() == 1
        && let Some(only) = messages.pop()
    {
        return only;
    }
    let mut parts: Vec<ContentPart> = Vec::new();
    for message in messages {
        for part in message.content {
            match (parts.last_mut(), part) {
                (Some(ContentPart::Text { text: last }), ContentPart::Text { text }) => {
                    last.push_str("\n\n");
                    last.push_str(&text);
                }
                (_, part) => parts.push(part),
            }
        }
    }
    Message::user_parts(parts)
}
