//! The parked approval's watcher (expiry and cancellation) and how the calls that waited get
//! their results when the approval ends without an answer.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::agent::emit::Emitter;
use crate::agent::history::History;
use crate::agent::parked_watch::watch;
use crate::agent::pending_approval::ParkedApproval;
use crate::agent::{AgentInner, SessionState};
use crate::event::EventKind;
use crate::message::Message;
use crate::session::SessionId;
use crate::store::{Store, StoreError, ToolCallRecord, ToolCallState, now_millis};

/// Expires or dismisses a parked approval unless it is answered first: after `ttl`, or when
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
        let Some(parked) = state.approval.take(Some(&id)) else {
            return;
        };
        let (why, event) = if expired {
            (
                format!(
                    "the person did not answer within {} minutes",
                    ttl.as_secs().div_ceil(60)
                ),
                EventKind::ApprovalExpired {
                    approval_id: id.clone(),
                },
            )
        } else {
            (
                "the run was cancelled before the person answered".to_owned(),
                EventKind::ApprovalResolved {
                    approval_id: id.clone(),
                    resolution: "dismissed".into(),
                    decisions: serde_json::json!({ "reason": "the run was cancelled" }),
                },
            )
        };
        if let Err(e) = settle(&mut history, agent.store.as_ref(), &state.id, &parked, &why).await {
            tracing::warn!(error = %e, "could not record the end of an approval");
        }
        drop(history);
        emitter.emit(event);
    });
}

/// Gives every call that waited on the approval a result saying it did not run and why,
/// records them cancelled, and clears the parked state.
pub(super) async fn settle(
    history: &mut History,
    store: Option<&Arc<dyn Store>>,
    session: &SessionId,
    parked: &ParkedApproval,
    why: &str,
) -> Result<(), StoreError> {
    let asked = |id: &str| parked.approval.calls.iter().any(|c| c.call_id == id);
    let results: Vec<(String, Message)> = parked
        .waiting
        .iter()
        .map(|call| {
            let text = if asked(&call.id) {
                format!("[Approval not given]: {why}; {} did not run", call.name)
            } else {
                format!("not run: it waited for the approval of an earlier call, which {why}")
            };
            (text.clone(), Message::tool_result(&call.id, &call.name, text, true))
        })
        .collect();
    if let Some(store) = store {
        store.set_parked_run(session, None).await?;
        for (call, (text, _)) in parked.waiting.iter().zip(&results) {
            let mut record = ToolCallRecord::pending(session.clone(), &call.id, &call.name, &call.arguments);
            record.state = ToolCallState::Cancelled;
            record.error = Some(text.clone());
            record.started_at_ms = Some(parked.approval.asked_at_ms);
            record.finished_at_ms = Some(now_millis());
            store.upsert_tool_call(&record).await?;
        }
    }
    history
        .push(store, session, results.into_iter().map(|(_, m)| m).collect())
        .await
}
