//! Clarification: a turn parked on a question to the person, from the model's
//! `ask_clarification` call to the answer (or expiry, or dismissal).
//!
//! This module owns the whole lifecycle: the session's [`Slot`] for the pending question,
//! parking a turn on it (persisted, announced, watched), the watcher that expires or dismisses
//! it, resuming the turn with the answer, and picking a parked question back up when a stored
//! session is reopened after a restart. The turn only calls in.
//!
//! A parked turn is the general shape (the turn ends `awaiting_user`, its question is
//! persisted, a later run continues it); a clarification question is its first kind.

mod watch;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use tokio_util::sync::CancellationToken;

pub(crate) use super::question::AskClarificationTool;
pub use super::question::{CLARIFICATION_TOOL, Clarification, ClarificationError, ClarificationKind};

use super::emit::Emitter;
use super::history::History;
use super::parked_output;
use super::parked_slot::{Parked, ParkedSlot};
use super::run::RunStatus;
use super::turn_context::Turn;
use super::{AgentInner, SessionState};
use crate::event::EventKind;
use crate::gate::TurnOrigin;
use crate::message::{Message, ToolCall};
use crate::store::{StoreError, ToolCallRecord, now_millis};

/// Why a second question in the same assistant message is refused.
pub(crate) const ONE_AT_A_TIME: &str =
    "only one clarification question can be pending at a time; ask the others after this one is answered";

/// Whether the loop intercepts this call to park the turn instead of running a tool.
pub(crate) fn is_question(call: &ToolCall) -> bool {
    call.name == CLARIFICATION_TOOL
}

/// A session's pending question.
pub(crate) type Slot = ParkedSlot<Clarification>;

impl Parked for Clarification {
    fn id(&self) -> &str {
        &self.id
    }

    fn origin(&self) -> &TurnOrigin {
        &self.origin
    }
}

impl Slot {
    /// The pending question, if any.
    pub fn get(&self) -> Option<Clarification> {
        self.with(Clarification::clone)
    }

    /// The tool call a pending question answers: it is waiting, not interrupted.
    pub fn parked_call(&self) -> Option<String> {
        self.with(|q| q.call_id.clone())
    }
}

/// Parks the turn on a question: persists it, emits `clarification_pending`, and watches for
/// expiry and cancellation. Returns `None` when the question is malformed (the model gets an
/// error result instead, and the turn goes on).
pub(super) async fn park(
    turn: &Turn<'_>,
    history: &mut History,
    call: &ToolCall,
    args: &serde_json::Value,
) -> Result<Option<Clarification>, StoreError> {
    let store = turn.agent.store.as_ref();
    let ttl = turn.agent.config.clarification_ttl;
    let question = match Clarification::from_call(&call.id, args, now_millis(), ttl) {
        Ok(q) => Clarification {
            origin: turn.origin.clone(),
            ..q
        },
        Err(message) => {
            let result = Message::tool_result(&call.id, &call.name, message, true);
            history.push(store, turn.session, vec![result]).await?;
            return Ok(None);
        }
    };
    if let Some(store) = store {
        let mut json = serde_json::to_value(&question).map_err(|e| StoreError::Backend(e.to_string()))?;
        parked_output::attach(&mut json, turn.state.parked_output());
        store.set_parked_run(turn.session, Some(&json)).await?;
        let mut record = ToolCallRecord::pending(turn.session.clone(), &call.id, &call.name, &call.arguments);
        record.started_at_ms = Some(question.asked_at_ms);
        store.upsert_tool_call(&record).await?;
    }
    turn.emitter.emit(EventKind::ClarificationPending {
        clarification_id: question.id.clone(),
        question: question.to_json(),
    });
    let resolved = turn.state.clarification.set(question.clone());
    watch::spawn(
        turn.agent.clone(),
        turn.state.clone(),
        question.id.clone(),
        ttl,
        turn.cancel.clone(),
        resolved,
        turn.emitter.observers_only(),
    );
    Ok(Some(question))
}

/// Continues a parked turn with the person's (already checked) answer: the parked call gets
/// "[User Response to Clarification]: ..." as its result. The turn starts at that result.
pub(super) async fn resume(
    turn: &Turn<'_>,
    history: &mut History,
    id: &str,
    answer: &str,
) -> Result<(), ClarificationError> {
    let Some(pending) = turn.state.clarification.take(Some(id)) else {
        return Err(ClarificationError::NotPending(id.to_owned()));
    };
    history.turn_start = history.messages.len();
    let text = format!("[User Response to Clarification]: {answer}");
    watch::settle(history, turn.agent.store.as_ref(), turn.session, &pending, &text, true).await?;
    turn.emitter.emit(EventKind::ClarificationResponded {
        clarification_id: pending.id,
        answer: answer.to_owned(),
    });
    Ok(())
}

/// A new message dismisses the pending question, if there is one: its call gets a result
/// saying so before the message is added.
pub(super) async fn dismiss_for_new_message(turn: &Turn<'_>, history: &mut History) -> Result<(), StoreError> {
    let Some(pending) = turn.state.clarification.take(None) else {
        return Ok(());
    };
    let text = "[Clarification dismissed]: the user sent a new message instead of answering";
    watch::settle(history, turn.agent.store.as_ref(), turn.session, &pending, text, false).await?;
    turn.emitter.emit(EventKind::ClarificationDismissed {
        clarification_id: pending.id,
        reason: "a new message arrived".into(),
    });
    Ok(())
}

/// The host dismisses pending question `id` (the person closed it without answering): its
/// call gets a result saying so, the parked state is cleared in the store, and
/// `clarification_dismissed` goes to the agent's observers. No turn starts; the model reads
/// the dismissal in the transcript on the next turn.
pub(super) async fn dismiss(agent: &AgentInner, state: &SessionState, id: &str) -> Result<(), ClarificationError> {
    // The history first, then the slot: the watcher takes them in this order too.
    let mut history = state.history.lock().await;
    let Some(question) = state.clarification.take(Some(id)) else {
        return Err(ClarificationError::NotPending(id.to_owned()));
    };
    let text = "[Clarification dismissed]: the person dismissed the question without answering";
    watch::settle(&mut history, agent.store.as_ref(), &state.id, &question, text, false).await?;
    drop(history);
    let emitter = Emitter::detached(
        state.id.clone(),
        agent.observers.clone(),
        Arc::new(Mutex::new(RunStatus::default())),
    );
    emitter.emit(EventKind::ClarificationDismissed {
        clarification_id: question.id,
        reason: "dismissed by the host".into(),
    });
    Ok(())
}

/// The question a stored session's turn was parked on when the process stopped, if its
/// parked-run state is one.
pub(super) fn from_parked(json: &serde_json::Value) -> Option<Clarification> {
    Clarification::deserialize(json).ok()
}

/// Puts a question loaded from the store back in the reopened session's slot and keeps
/// waiting for the answer, for whatever is left of its time to live.
pub(super) fn restore(agent: &Arc<AgentInner>, state: &Arc<SessionState>, question: Clarification) {
    let left = question.expires_at_ms.saturating_sub(now_millis()).max(0) as u64;
    let question_id = question.id.clone();
    let resolved = state.clarification.set(question);
    // No run is parked in this process: the watcher's events go to the observers only.
    let emitter = Emitter::detached(
        state.id.clone(),
        agent.observers.clone(),
        Arc::new(Mutex::new(RunStatus::default())),
    );
    watch::spawn(
        agent.clone(),
        state.clone(),
        question_id,
        Duration::from_millis(left),
        CancellationToken::new(),
        resolved,
        emitter,
    );
}
