//! The hub's state machine: per-tab state behind an async lock, starting turns, watching them
//! end, the queue and the auto-wake budget.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, RwLock};

use futures::StreamExt;
use tokio::runtime::Handle;
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

use super::handles::{HandleIndex, Resolution};
use super::store::{QueuedMessage, TabRecord, TabStore};
use super::tools::tab_tools;
use super::types::{AgentFactory, Delivery, TabError, TabEvent, TabEventKind, TabInfo, TabSnapshot};
use super::{DeliveryStatus, Origin, TabId, TabPermissions, TabState};
use crate::agent::{Agent, AgentError, Outcome, OutcomeStatus, Run, RunEvents, Session};
use crate::event::{AgentEvent, EventKind};
use crate::message::{ContentPart, Message, Role};
use crate::store::Store;

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

    pub(crate) async fn deliver(self: &Arc<Self>, tab: &TabId, queued: QueuedMessage) -> Result<Delivery, TabError> {
        let origin = queued.origin;
        let slot = self.slot(tab)?;
        let mut st = slot.state.lock().await;
        if !st.record.open {
            return Err(TabError::Closed(tab.clone()));
        }
        if origin == Origin::Human {
            st.record.auto_wake_budget = self.budget;
        } else {
            // Oldest kept, newest refused: a flood from other tabs cannot grow the queue (or
            // the stored tab record) without bound.
            let held = st.record.queue.iter().filter(|q| q.origin == Origin::Agent).count();
            if held >= self.max_held {
                return Err(TabError::QueueFull {
                    tab: tab.clone(),
                    limit: self.max_held,
                });
            }
        }
        st.record.queue.push(queued);
        let mut run = None;
        let status = if st.state == TabState::Running {
            self.queued_event(&st, origin);
            if origin == Origin::Agent && st.record.auto_wake_budget == 0 {
                self.held_notice(&st);
                DeliveryStatus::Held
            } else {
                DeliveryStatus::Queued
            }
        } else if origin == Origin::Agent
            && (st.record.auto_wake_budget == 0 || self.refresh_awaiting(&slot, &mut st).await)
        {
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

    pub(super) fn queued_event(&self, st: &SlotState, origin: Origin) {
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

    pub(super) fn held_notice(&self, st: &SlotState) {
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
    pub(super) async fn start_queued(
        self: &Arc<Self>,
        slot: &Arc<Slot>,
        st: &mut SlotState,
    ) -> Result<Arc<Run>, TabError> {
        self.ensure_live(slot, st).await?;
        let turn_start_seq = self.store.last_seq(&st.record.session_id).await?;
        let Some(live) = &st.live else {
            return Err(TabError::NotFound(slot.id.clone()));
        };
        let batch = next_batch(&mut st.record.queue);
        let origin = batch.first().map(QueuedMessage::turn_origin).unwrap_or_default();
        let run = Arc::new(live.session.send_from(combine(batch), origin, CancellationToken::new()));
        self.track_run(slot, st, run.clone(), turn_start_seq);
        Ok(run)
    }

    /// Marks the tab running `run`, forwards its events and hands its end to `turn_ended`.
    pub(super) fn track_run(
        self: &Arc<Self>,
        slot: &Arc<Slot>,
        st: &mut SlotState,
        run: Arc<Run>,
        turn_start_seq: u64,
    ) {
        st.turn_start_seq = turn_start_seq;
        st.run = Some(run.clone());
        st.state = TabState::Running;
        st.awaiting_user = false;
        let events = run.events();
        self.runtime.spawn(watch_run(self.clone(), slot.clone(), run, events));
    }

    /// Whether the tab's last turn is parked on a question to its person (checked on the live
    /// session when there is one, so a question answered, expired or restored is seen).
    pub(super) async fn refresh_awaiting(self: &Arc<Self>, slot: &Arc<Slot>, st: &mut SlotState) -> bool {
        if self.ensure_live(slot, st).await.is_ok()
            && let Some(live) = &st.live
        {
            st.awaiting_user = live.session.pending_clarification().is_some();
        }
        st.awaiting_user
    }

    /// Answers the question the tab's turn is parked on; the turn continues in a new run that
    /// the hub watches like any other. The answer comes from the person: it refills the budget.
    pub(super) async fn answer_clarification(
        self: &Arc<Self>,
        tab: &TabId,
        clarification_id: &str,
        answer: &str,
    ) -> Result<Arc<Run>, TabError> {
        let slot = self.slot(tab)?;
        let mut st = slot.state.lock().await;
        if !st.record.open {
            return Err(TabError::Closed(tab.clone()));
        }
        self.ensure_live(&slot, &mut st).await?;
        let turn_start_seq = self.store.last_seq(&st.record.session_id).await?;
        let Some(live) = &st.live else {
            return Err(TabError::NotFound(tab.clone()));
        };
        let run = Arc::new(live.session.answer_clarification(clarification_id, answer)?);
        st.record.auto_wake_budget = self.budget;
        self.track_run(&slot, &mut st, run.clone(), turn_start_seq);
        self.save_checked(&mut st).await?;
        self.publish(&slot, &st);
        Ok(run)
    }

    /// After a turn ends (or a tab is restored or reopened): start a turn with the queued
    /// messages if any may wake the tab, or announce that they are held.
    pub(super) async fn pump(self: &Arc<Self>, slot: &Arc<Slot>, st: &mut SlotState) {
        if !st.record.open || st.record.queue.is_empty() || st.state == TabState::Running {
            return;
        }
        let has_human = st.record.queue.iter().any(|q| q.origin == Origin::Human);
        let mut spent = false;
        if !has_human {
            if st.record.auto_wake_budget == 0 || self.refresh_awaiting(slot, st).await {
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
    pub(super) fn turn_ended<'a>(
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

/// Takes the messages of the next turn off the queue: every message from the person if there
/// is one, otherwise every message from the sender of the oldest one. One turn never mixes
/// senders, so another tab's text is never merged into the person's message and every turn
/// has one origin; the rest stays queued for the turns after it.
fn next_batch(queue: &mut Vec<QueuedMessage>) -> Vec<QueuedMessage> {
    let human = queue.iter().any(|q| q.origin == Origin::Human);
    let sender = queue.first().and_then(|q| q.from_tab.clone());
    let (batch, rest): (Vec<_>, Vec<_>) = std::mem::take(queue).into_iter().partition(|q| {
        if human {
            q.origin == Origin::Human
        } else {
            q.origin == Origin::Agent && q.from_tab == sender
        }
    });
    *queue = rest;
    batch
}

/// One user message from a batch of queued messages of one sender: a single message as it
/// is; several joined with blank lines, oldest first.
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
