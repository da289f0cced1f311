//! The tab hub's API: opening and closing tabs, `deliver`, handles, snapshots and events.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, Weak};

use tokio::runtime::Handle;
use tokio::sync::{broadcast, watch};

use super::handles::{HandleIndex, Resolution};
use super::host_tabs::{HostTabIndex, OpenedTab, OpenedTabOwner, OpenedTabPolicy};
use super::hub_inner::{HubInner, MoreTabTools, Slot, read, write};
use super::store::{MemoryTabStore, QueuedMessage, TabRecord, TabStore};
use super::types::{AgentFactory, Delivery, TabError, TabEvent, TabEventKind, TabInfo, TabSnapshot};
use super::{DEFAULT_AUTO_WAKE_BUDGET, DEFAULT_MAX_HELD_MESSAGES, Origin, TabId, TabPermissions, TabState};
use crate::agent::{AgentBuilder, Run, Session};
use crate::message::Message;
use crate::provider::OutputSchema;
use crate::session::SessionId;
use crate::store::{MemoryStore, Store};
use crate::tool::Tool;

/// Builds a [`TabHub`].
pub struct TabHubBuilder {
    factory: Option<AgentFactory>,
    store: Option<Arc<dyn Store>>,
    tab_store: Option<Arc<dyn TabStore>>,
    auto_wake_budget: u32,
    max_held_messages: usize,
    default_permissions: TabPermissions,
    event_buffer: usize,
    opened_tab_policy: Option<OpenedTabPolicy>,
    tab_tools: Option<TabToolsFactory>,
}

/// Makes the tools the hub adds to each tab's agent besides `send_to_tab` and `read_tab`, for
/// that tab (for example page tools that act on the browser tab it is wired to). It gets a
/// [`WeakTabHub`] so that the tools can look the hub up without keeping it alive.
pub type TabToolsFactory = Arc<dyn Fn(&TabId, &WeakTabHub) -> Vec<Arc<dyn Tool>> + Send + Sync>;

impl Default for TabHubBuilder {
    fn default() -> Self {
        TabHubBuilder {
            factory: None,
            store: None,
            tab_store: None,
            auto_wake_budget: DEFAULT_AUTO_WAKE_BUDGET,
            max_held_messages: DEFAULT_MAX_HELD_MESSAGES,
            default_permissions: TabPermissions::default(),
            event_buffer: 1024,
            opened_tab_policy: None,
            tab_tools: None,
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

    /// Messages from other tabs' agents one tab's queue may hold (default 32). Past it a new
    /// one is refused ([`TabError::QueueFull`]; `send_to_tab` tells the sending model) and the
    /// older ones are kept. Messages from the person are never refused.
    pub fn max_held_messages(mut self, limit: usize) -> Self {
        self.max_held_messages = limit.max(1);
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

    /// Tools the hub adds to each tab's agent, made for that tab: for example page tools that
    /// act on the browser tab the hub tab is wired to (see [`TabHub::wire_host_tab`]). Called
    /// whenever the hub builds a tab's agent, after the agent factory.
    pub fn tab_tools(
        mut self,
        tools: impl Fn(&TabId, &WeakTabHub) -> Vec<Arc<dyn Tool>> + Send + Sync + 'static,
    ) -> Self {
        self.tab_tools = Some(Arc::new(tools));
        self
    }

    /// Who gets a browser tab that a tab's agent opens ([`TabHub::adopt_host_tab`]): by
    /// default the agent that opened it ([`OpenedTabOwner::SameAgent`]).
    pub fn opened_tab_policy(mut self, policy: impl Fn(&OpenedTab) -> OpenedTabOwner + Send + Sync + 'static) -> Self {
        self.opened_tab_policy = Some(Arc::new(policy));
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
            max_held: self.max_held_messages,
            default_permissions: self.default_permissions,
            index: RwLock::new(HandleIndex::new()),
            slots: RwLock::new(HashMap::new()),
            events,
            running: watch::channel(0).0,
            runtime,
            host_tabs: RwLock::new(HostTabIndex::default()),
            opened_tab_policy: self
                .opened_tab_policy
                .unwrap_or_else(|| Arc::new(|_: &OpenedTab| OpenedTabOwner::default())),
            tab_tools: self.tab_tools.map(|make| -> MoreTabTools {
                Arc::new(move |tab: &TabId, inner: Weak<HubInner>| make(tab, &WeakTabHub { inner }))
            }),
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
    pub(super) inner: Arc<HubInner>,
}

impl std::fmt::Debug for TabHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TabHub")
            .field("open_tabs", &read(&self.inner.index).len())
            .field("auto_wake_budget", &self.inner.budget)
            .finish_non_exhaustive()
    }
}

/// A hub that does not keep its tabs alive: what per-tab tools hold, since the hub owns their
/// agents (a strong handle there would be a reference cycle).
#[derive(Clone, Default)]
pub struct WeakTabHub {
    inner: Weak<HubInner>,
}

impl std::fmt::Debug for WeakTabHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WeakTabHub")
            .field("alive", &(self.inner.strong_count() > 0))
            .finish()
    }
}

impl WeakTabHub {
    /// The hub, unless every [`TabHub`] handle to it has been dropped.
    pub fn upgrade(&self) -> Option<TabHub> {
        self.inner.upgrade().map(|inner| TabHub { inner })
    }
}

impl TabHub {
    /// Starts building a hub.
    pub fn builder() -> TabHubBuilder {
        TabHubBuilder::default()
    }

    /// A handle that does not keep the hub alive (for tools the hub's agents hold).
    pub fn downgrade(&self) -> WeakTabHub {
        WeakTabHub {
            inner: Arc::downgrade(&self.inner),
        }
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
        let DeliveredMessage { message, output } = message.into();
        let queued = QueuedMessage {
            output,
            ..QueuedMessage::new(message, origin)
        };
        self.inner.deliver(tab, queued).await
    }

    /// Delivers a message written by the agent of tab `sender` (what `send_to_tab` does): as
    /// [`TabHub::deliver`] with [`Origin::Agent`], framed as that tab's words and wrapped as
    /// untrusted data from it, and the turn it starts names `sender` as its origin in its
    /// `run_started` event and in every gate request.
    pub async fn deliver_from_tab(
        &self,
        tab: &TabId,
        message: impl Into<DeliveredMessage>,
        sender: &TabId,
    ) -> Result<Delivery, TabError> {
        let DeliveredMessage { message, output } = message.into();
        self.inner.deliver_from_tab(tab, message, output, sender).await
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

    /// Answers the question the tab's turn is parked on (see `ask_clarification`): the turn
    /// continues in a new run, watched by the hub like any other, and queued messages follow
    /// when it ends. The answer counts as a human message: it refills the auto-wake budget. A
    /// wrong kind of answer is refused and the question stays pending.
    pub async fn answer_clarification(
        &self,
        tab: &TabId,
        clarification_id: &str,
        answer: &str,
    ) -> Result<Arc<Run>, TabError> {
        self.inner.answer_clarification(tab, clarification_id, answer).await
    }

    /// Dismisses the question the tab's turn is parked on, without answering it (the person
    /// closed it; see [`Session::dismiss_clarification`]). Works on a tab restored after a
    /// restart too. Messages held only because the tab was waiting for its person then start
    /// a turn, within the auto-wake budget.
    pub async fn dismiss_clarification(&self, tab: &TabId, clarification_id: &str) -> Result<(), TabError> {
        self.inner.dismiss_clarification(tab, clarification_id).await
    }

    /// Answers the approval the tab's turn is parked on (see
    /// [`Session::resolve_approval`](crate::Session::resolve_approval)): the turn continues in
    /// a new run, watched by the hub like any other, and queued messages follow when it ends.
    /// The answer comes from the person: it refills the auto-wake budget. A refused answer
    /// leaves the approval pending.
    pub async fn resolve_approval(
        &self,
        tab: &TabId,
        approval_id: &str,
        decisions: Vec<(String, crate::ApprovalDecision)>,
    ) -> Result<Arc<Run>, TabError> {
        self.inner.resolve_approval(tab, approval_id, decisions).await
    }

    /// Dismisses the approval the tab's turn is parked on, without answering it: its calls do
    /// not run. Messages held only because the tab was waiting for its person then start a
    /// turn, within the auto-wake budget.
    pub async fn dismiss_approval(&self, tab: &TabId, approval_id: &str) -> Result<(), TabError> {
        self.inner.dismiss_approval(tab, approval_id).await
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

/// A message for [`TabHub::deliver`]: a [`Message`] or text (a user message), and optionally
/// the schema its answer must match.
#[derive(Debug, Clone)]
pub struct DeliveredMessage {
    message: Message,
    output: Option<OutputSchema>,
}

impl DeliveredMessage {
    /// A message whose answer must match `schema`: the turn that reads it is a typed turn (as
    /// [`Session::send_with_schema`](crate::Session::send_with_schema)) and its outcome
    /// carries the answer in [`Outcome::structured`](crate::Outcome::structured). A typed
    /// message is never merged with other queued messages: it gets a turn of its own, and the
    /// schema is stored with the queue, so a restored tab still asks for it.
    ///
    /// ```
    /// use agent_core::{OutputSchema, tabs::DeliveredMessage};
    /// let schema = OutputSchema::new("city", serde_json::json!({
    ///     "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]
    /// }));
    /// let message = DeliveredMessage::from("The capital of Norway?").expecting(schema);
    /// assert_eq!(message.output().map(|s| s.name.as_str()), Some("city"));
    /// ```
    pub fn expecting(mut self, schema: OutputSchema) -> Self {
        self.output = Some(schema);
        self
    }

    /// [`Self::expecting`] a `T`, its schema from `schemars` (as
    /// [`Session::send_typed`](crate::Session::send_typed)).
    pub fn expecting_typed<T: schemars::JsonSchema>(self) -> Self {
        self.expecting(OutputSchema::new(T::schema_name(), crate::tool::schema_for::<T>()))
    }

    /// The message.
    pub fn message(&self) -> &Message {
        &self.message
    }

    /// The schema its answer must match, if any.
    pub fn output(&self) -> Option<&OutputSchema> {
        self.output.as_ref()
    }
}

impl From<Message> for DeliveredMessage {
    fn from(message: Message) -> Self {
        DeliveredMessage { message, output: None }
    }
}

impl From<&str> for DeliveredMessage {
    fn from(text: &str) -> Self {
        Message::user(text).into()
    }
}

impl From<String> for DeliveredMessage {
    fn from(text: String) -> Self {
        Message::user(text).into()
    }
}
