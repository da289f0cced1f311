//! External tools: tools a turn offers the model that the host runs itself (an AG-UI client's
//! frontend tools). A call of one is not run by the agent: once the other calls of the same
//! message have run, the turn parks (`awaiting_tools`) with the calls the host must run,
//! persisted through the store like a clarification question, and the host's results continue
//! the turn in a new run ([`Session::submit_tool_results`](crate::Session::submit_tool_results)).
//! A new message instead dismisses them: each call gets a result saying it was not run.

use serde::{Deserialize, Serialize};

use super::pending_tools::{ExternalCall, ExternalToolError, ExternalToolResult, PendingToolCalls};

use super::history::History;
use super::parked_output;
use super::parked_slot::{Parked, ParkedSlot};
use super::tools_exec::cap_output;
use super::turn_context::Turn;
use super::{AgentInner, SessionState};
use crate::event::EventKind;
use crate::gate::TurnOrigin;
use crate::message::{Message, ToolCall};
use crate::store::{StoreError, ToolCallRecord, ToolCallState, now_millis};
use crate::tool::ToolOutput;

/// The `kind` of the parked-run state of a turn parked on external calls.
const PARKED_KIND: &str = "external_tools";

/// What the store keeps of a turn parked on external calls (the turn's external tools are kept
/// beside it, see `parked_output`, as for a turn parked on a question or an approval).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ParkedCalls {
    /// Always `"external_tools"`.
    kind: String,
    pub pending: PendingToolCalls,
}

impl Parked for ParkedCalls {
    fn id(&self) -> &str {
        &self.pending.id
    }

    fn origin(&self) -> &TurnOrigin {
        &self.pending.origin
    }
}

/// A session's parked external calls.
pub(crate) type Slot = ParkedSlot<ParkedCalls>;

impl Slot {
    /// The pending calls, if any.
    pub fn get(&self) -> Option<PendingToolCalls> {
        self.with(|p| p.pending.clone())
    }

    /// The ids of the pending calls: waiting, not interrupted.
    pub fn waiting_calls(&self) -> Vec<String> {
        self.with(waiting_ids).unwrap_or_default()
    }
}

/// The ids of the calls a parked turn waits on, for crash repair.
pub(crate) fn waiting_ids(parked: &ParkedCalls) -> Vec<String> {
    parked.pending.calls.iter().map(|c| c.call_id.clone()).collect()
}

/// Parks the turn on `calls` (with their checked arguments): persists them with the turn's
/// external tools, and emits `tool_call_started` for each (the host runs them now).
pub(crate) async fn park(
    turn: &Turn<'_>,
    calls: Vec<(ToolCall, serde_json::Value)>,
) -> Result<PendingToolCalls, StoreError> {
    let now = now_millis();
    let pending = PendingToolCalls {
        id: uuid::Uuid::new_v4().to_string(),
        calls: calls
            .iter()
            .map(|(call, args)| ExternalCall {
                call_id: call.id.clone(),
                name: call.name.clone(),
                arguments: args.clone(),
            })
            .collect(),
        origin: turn.origin.clone(),
        asked_at_ms: now,
    };
    let parked = ParkedCalls {
        kind: PARKED_KIND.to_owned(),
        pending: pending.clone(),
    };
    if let Some(store) = turn.agent.store.as_ref() {
        let mut json = serde_json::to_value(&parked).map_err(|e| StoreError::Backend(e.to_string()))?;
        parked_output::attach(&mut json, turn.state.parked_output());
        parked_output::attach_tools(&mut json, turn.state.parked_tools());
        store.set_parked_run(turn.session, Some(&json)).await?;
        for (call, _) in &calls {
            let mut record = ToolCallRecord::pending(turn.session.clone(), &call.id, &call.name, &call.arguments);
            record.started_at_ms = Some(now);
            store.upsert_tool_call(&record).await?;
        }
        // Parked means durable: the calls must be there after a crash right after this.
        store.flush(turn.session).await?;
    }
    for call in &pending.calls {
        turn.emitter.emit(EventKind::ToolCallStarted {
            call_id: call.call_id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        });
    }
    turn.state.external.set(parked);
    Ok(pending)
}

/// Checks the host's results against the pending calls before a turn starts for them: one
/// result per pending call, no stranger, no duplicate.
pub(crate) fn check(state: &SessionState, id: &str, results: &[ExternalToolResult]) -> Result<(), ExternalToolError> {
    let pending = state
        .external
        .get()
        .filter(|p| p.id == id)
        .ok_or_else(|| ExternalToolError::NotPending(id.to_owned()))?;
    for (i, result) in results.iter().enumerate() {
        if !pending.calls.iter().any(|c| c.call_id == result.call_id) {
            return Err(ExternalToolError::UnknownCall(result.call_id.clone()));
        }
        if results[..i].iter().any(|r| r.call_id == result.call_id) {
            return Err(ExternalToolError::DuplicateResult(result.call_id.clone()));
        }
    }
    if let Some(missing) = pending
        .calls
        .iter()
        .find(|c| !results.iter().any(|r| r.call_id == c.call_id))
    {
        return Err(ExternalToolError::MissingResult(missing.call_id.clone()));
    }
    Ok(())
}

/// Continues a parked turn with the host's (already checked) results: each pending call gets
/// its result, in the model's order.
pub(crate) async fn resume(
    turn: &Turn<'_>,
    history: &mut History,
    id: &str,
    results: &[ExternalToolResult],
) -> Result<(), ExternalToolError> {
    let Some(parked) = turn.state.external.take(Some(id)) else {
        return Err(ExternalToolError::NotPending(id.to_owned()));
    };
    history.turn_start = history.messages.len();
    // Bounded like the agent's own tools' results: cut to the result cap, with the marker.
    let cap = turn.agent.config.result_cap_chars;
    let settled = parked.pending.calls.iter().map(|call| {
        let result = results.iter().find(|r| r.call_id == call.call_id);
        let (content, is_error) =
            result.map_or_else(|| ("no result".to_owned(), true), |r| (r.content.clone(), r.is_error));
        (call, cap_output(ToolOutput::text(content), cap).model_text, is_error)
    });
    let settled: Vec<_> = settled.collect();
    settle(turn.agent, &turn.state.id, history, &parked, &settled).await?;
    for (call, content, is_error) in settled {
        let event = if is_error {
            EventKind::ToolCallFailed {
                call_id: call.call_id.clone(),
                name: call.name.clone(),
                error: content,
                fatal: false,
            }
        } else {
            EventKind::ToolCallSucceeded {
                call_id: call.call_id.clone(),
                name: call.name.clone(),
                output: content,
                truncated: false,
                duration_ms: u64::try_from(now_millis().saturating_sub(parked.pending.asked_at_ms)).unwrap_or(0),
            }
        };
        turn.emitter.emit(event);
    }
    Ok(())
}

/// A new message dismisses the pending calls, if any: each gets an error result saying it was
/// not run before the message is added.
pub(crate) async fn dismiss_for_new_message(turn: &Turn<'_>, history: &mut History) -> Result<(), StoreError> {
    let Some(parked) = turn.state.external.take(None) else {
        return Ok(());
    };
    let text = "[Tool call dismissed]: the person sent a new message before the host returned this call's result; it was not run";
    let settled: Vec<_> = parked
        .pending
        .calls
        .iter()
        .map(|call| (call, text.to_owned(), true))
        .collect();
    settle(turn.agent, &turn.state.id, history, &parked, &settled)
        .await
        .map_err(|e| match e {
            ExternalToolError::Store(e) => e,
            other => StoreError::Backend(other.to_string()),
        })?;
    for call in &parked.pending.calls {
        turn.emitter.emit(EventKind::ToolCallFailed {
            call_id: call.call_id.clone(),
            name: call.name.clone(),
            error: text.to_owned(),
            fatal: false,
        });
    }
    Ok(())
}

/// Writes the results of the parked calls (`(call, content, is_error)`), records their final
/// state and clears the parked state.
async fn settle(
    agent: &AgentInner,
    session: &crate::session::SessionId,
    history: &mut History,
    parked: &ParkedCalls,
    settled: &[(&ExternalCall, String, bool)],
) -> Result<(), ExternalToolError> {
    let store = agent.store.as_ref();
    let messages = settled
        .iter()
        .map(|(call, content, is_error)| Message::tool_result(&call.call_id, &call.name, content.clone(), *is_error))
        .collect();
    if let Some(store) = store {
        store.set_parked_run(session, None).await?;
        for (call, content, is_error) in settled {
            let arguments = call.arguments.to_string();
            let mut record = ToolCallRecord::pending(session.clone(), &call.call_id, &call.name, &arguments);
            record.started_at_ms = Some(parked.pending.asked_at_ms);
            record.finished_at_ms = Some(now_millis());
            if *is_error {
                record.state = ToolCallState::Failed;
                record.error = Some(content.clone());
            } else {
                record.state = ToolCallState::Succeeded;
                record.raw_result = Some(content.clone());
            }
            store.upsert_tool_call(&record).await?;
        }
    }
    history.push(store, session, messages).await?;
    Ok(())
}

/// The calls a stored session's turn was parked on when the process stopped, if its
/// parked-run state is that.
pub(crate) fn from_parked(json: &serde_json::Value) -> Option<ParkedCalls> {
    if json.get("kind").and_then(|k| k.as_str()) != Some(PARKED_KIND) {
        return None;
    }
    ParkedCalls::deserialize(json).ok()
}

/// Puts calls loaded from the store back in the reopened session's slot.
pub(crate) fn restore(state: &SessionState, parked: ParkedCalls) {
    state.external.set(parked);
}
