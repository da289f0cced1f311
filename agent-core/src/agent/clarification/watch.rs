//! The pending question's watcher (expiry and cancellation) and how a question's call gets
//! its result when the question ends.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{CLARIFICATION_TOOL, Clarification};
use crate::agent::emit::Emitter;
use crate::agent::history::History;
use crate::agent::parked_watch::watch;
use crate::agent::{AgentInner, SessionState};
use crate::event::EventKind;
use crate::message::Message;
use crate::session::SessionId;
use crate::store::{Store, StoreError, ToolCallRecord, ToolCallState, now_millis};

/// Expires or dismisses a pending question unless it is answered first: after `ttl`, or when
/// the parked run is cancelled. The model finds the outcome in the transcript next turn.
pub(super) fn spawn(
    agent: Arc<AgentInner>,
    state: Arc<SessionState>,
    id: String,
    ttl: Duration,
    cancel: CancellationToken,
    resolved: CancellationToken,
    emitter: Emitter,
) {
    let runtime = agent.runtime.clone();
    watch(&runtime, ttl, cancel, resolved, move |expired| async move {
        let mut history = state.history.lock().await;
        let Some(question) = state.clarification.take(Some(&id)) else {
            return;
        };
        let (text, event) = if expired {
            (
                format!(
                    "[Clarification expired]: the user did not answer within {} minutes",
                    ttl.as_secs().div_ceil(60)
                ),
                EventKind::ClarificationExpired {
                    clarification_id: id.clone(),
                },
            )
        } else {
            (
                "[Clarification dismissed]: the run was cancelled before the user answered".to_owned(),
                EventKind::ClarificationDismissed {
                    clarification_id: id.clone(),
                    reason: "the run was cancelled".into(),
                },
            )
        };
        if let Err(e) = settle(&mut history, agent.store.as_ref(), &state.id, &question, &text, false).await {
            tracing::warn!(error = %e, "could not record the end of a clarification");
        }
        drop(history);
        emitter.emit(event);
    });
}

/// Gives the parked `ask_clarification` call its result (`answered`: the person answered;
/// otherwise it expired or was dismissed) and clears the parked state.
pub(super) async fn settle(
    history: &mut History,
    store: Option<&Arc<dyn Store>>,
    session: &SessionId,
    question: &Clarification,
    text: &str,
    answered: bool,
) -> Result<(), StoreError> {
    let result = Message::tool_result(&question.call_id, CLARIFICATION_TOOL, text, !answered);
    history.push(store, session, vec![result]).await?;
    if let Some(store) = store {
        store.set_parked_run(session, None).await?;
        let mut record = ToolCallRecord::pending(session.clone(), &question.call_id, CLARIFICATION_TOOL, "");
        record.state = if answered {
            ToolCallState::Succeeded
        } else {
            ToolCallState::Cancelled
        };
        record.raw_result = Some(text.to_owned());
        record.started_at_ms = Some(question.asked_at_ms);
        record.finished_at_ms = Some(now_millis());
        if let Some(existing) = store
            .tool_calls(session)
            .await?
            .into_iter()
            .find(|r| r.call_id == question.call_id)
        {
            record.arguments = existing.arguments;
        }
        store.upsert_tool_call(&record).await?;
    }
    Ok(())
}
