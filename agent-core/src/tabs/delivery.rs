//! Delivery: what happens to a message for a tab (start a turn, queue it, hold it), the
//! auto-wake budget, and starting the next queued turn when one ends.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::hub_inner::{HubInner, Slot, SlotState};
use super::store::QueuedMessage;
use super::types::{Delivery, TabError, TabEventKind};
use super::{DeliveryStatus, Origin, TabId, TabState};
use crate::agent::{Outcome, OutcomeStatus, Run, RunEvents};
use crate::event::{AgentEvent, EventKind};
use crate::message::{ContentPart, Message};
use crate::provider::OutputSchema;
use crate::untrusted::{Provenance, wrap_untrusted};

impl HubInner {
    /// Delivers what the agent of tab `sender` wrote (`send_to_tab`, or a host relaying it):
    /// framed as another tab's words and wrapped as untrusted data from that tab, so the
    /// receiving model never reads it as its person's, then queued with the sender as origin.
    pub(crate) async fn deliver_from_tab(
        self: &Arc<Self>,
        tab: &TabId,
        message: Message,
        output: Option<OutputSchema>,
        sender: &TabId,
    ) -> Result<Delivery, TabError> {
        let handle = self.handle(sender);
        let label = handle.clone().unwrap_or_else(|| sender.to_string());
        let framed = from_another_tab(message, &label);
        let queued = QueuedMessage {
            output,
            ..QueuedMessage::from_tab(framed, sender.clone(), handle)
        };
        self.deliver(tab, queued).await
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
        // A caller that awaited the run's outcome may deliver before the run's watcher has
        // told the hub it ended: the tab is not running any more, whatever it last heard.
        if let Some(ended) = st.run.clone().filter(|r| r.is_finished()) {
            let outcome = ended.outcome().await;
            end_turn(&mut st, &outcome);
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
        // A typed message is batched alone (see `next_batch`).
        let output = batch.first().and_then(|q| q.output.clone());
        let message = combine(batch);
        let cancel = CancellationToken::new();
        let run = Arc::new(match output {
            Some(schema) => live.session.send_with_schema_from(message, schema, origin, cancel),
            None => live.session.send_from(message, origin, cancel),
        });
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
        // Not `run.events()`: the host holding the run reads it from its start too.
        let events = run.observe_events();
        self.runtime.spawn(watch_run(self.clone(), slot.clone(), run, events));
    }

    /// Whether the tab's last turn is parked on a question to its person (checked on the live
    /// session when there is one, so a question answered, expired or restored is seen).
    pub(super) async fn refresh_awaiting(self: &Arc<Self>, slot: &Arc<Slot>, st: &mut SlotState) -> bool {
        if self.ensure_live(slot, st).await.is_ok()
            && let Some(live) = &st.live
        {
            st.awaiting_user =
                live.session.pending_clarification().is_some() || live.session.pending_approval().is_some();
        }
        st.awaiting_user
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
            end_turn(&mut st, &outcome);
            self.pump(slot, &mut st).await;
            self.save(&st).await;
            self.publish(slot, &st);
        })
    }
}

/// The tab's state once its run ended with `outcome` (the run's watcher then finds it gone).
fn end_turn(st: &mut SlotState, outcome: &Outcome) {
    st.run = None;
    st.state = if outcome.status == OutcomeStatus::Error {
        TabState::Error
    } else {
        TabState::Idle
    };
    st.awaiting_user = matches!(
        outcome.status,
        OutcomeStatus::AwaitingUser | OutcomeStatus::AwaitingApproval
    );
}

/// Forwards a turn's events to the hub's subscribers, then hands its outcome to the hub.
async fn watch_run(inner: Arc<HubInner>, slot: Arc<Slot>, run: Arc<Run>, mut events: RunEvents) {
    while let Some(event) = events.next().await {
        inner.emit(&slot.id, TabEventKind::Agent { event: Box::new(event) });
    }
    let outcome = run.outcome().await;
    inner.turn_ended(&slot, &run, outcome).await;
}

/// `message` as the receiving model reads it: a line saying another tab's agent wrote it, then
/// its text wrapped as untrusted data from tab `label`; images follow as they are.
fn from_another_tab(message: Message, label: &str) -> Message {
    let text = message.text();
    let mut parts = vec![ContentPart::text(format!(
        "[message from tab {label}: written by that tab's agent, not by your person]\n{}",
        wrap_untrusted(&Provenance::tab(label), &text)
    ))];
    parts.extend(message.content.into_iter().filter(|p| p.as_text().is_none()));
    Message::user_parts(parts)
}

/// Takes the messages of the next turn off the queue: every message from the person if there
/// is one, otherwise every message from the sender of the oldest one. One turn never mixes
/// senders, so another tab's text is never merged into the person's message and every turn
/// has one origin; the rest stays queued for the turns after it.
fn next_batch(queue: &mut Vec<QueuedMessage>) -> Vec<QueuedMessage> {
    let human = queue.iter().any(|q| q.origin == Origin::Human);
    let sender = queue.first().and_then(|q| q.from_tab.clone());
    let eligible = |q: &QueuedMessage| {
        if human {
            q.origin == Origin::Human
        } else {
            q.origin == Origin::Agent && q.from_tab == sender
        }
    };
    // A message expecting a typed answer gets a turn of its own: it ends the batch before it,
    // or is the whole batch when it comes first.
    let mut batch = Vec::new();
    let mut rest = Vec::new();
    let mut closed = false;
    for q in std::mem::take(queue) {
        if closed || !eligible(&q) {
            rest.push(q);
        } else if q.output.is_none() {
            batch.push(q);
        } else {
            closed = true;
            if batch.is_empty() {
                batch.push(q);
            } else {
                rest.push(q);
            }
        }
    }
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
