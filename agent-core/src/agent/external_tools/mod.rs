//! External tools: tools a turn offers the model that the host runs itself (an AG-UI client's
//! frontend tools). A call of one is not run by the agent: once the other calls of the same
//! message have run, the turn parks (`awaiting_tools`) with the calls the host must run,
//! persisted through the store like a clarification question, and the host's results continue
//! the turn in a new run ([`Session::submit_tool_results`](crate::Session::submit_tool_results)).
//! A new message instead dismisses them: each call gets a result saying it was not run.

mod types;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

pub use types::{ExternalCall, ExternalTool, ExternalToolError, ExternalToolResult, PendingToolCalls};

use super::history::History;
use super::parked_output;
use super::parked_slot::{Parked, ParkedSlot};
use super::turn_context::Turn;
use super::{AgentInner, SessionState};
use crate::event::EventKind;
use crate::gate::TurnOrigin;
use crate::message::{Message, ToolCall};
use crate::store::{StoreError, ToolCallRecord, ToolCallState, now_millis};
use crate::tool::{Tool, ToolContext, ToolError, ToolOutput, ToolSet, ToolSpec};

/// The `kind` of the parked-run state of a turn parked on external calls.
const PARKED_KIND: &str = "external_tools";

/// A turn's external tools, checked, with the tool set the model is offered (the agent's
/// tools and these), rebuilt only when the agent's tools are replaced.
pub(crate) struct ExternalSet {
    tools: Arc<[ExternalTool]>,
    /// The agent's tool set the offered one was built from, and the offered one.
    offered: Mutex<Option<(Arc<ToolSet>, Arc<ToolSet>)>>,
}

impl ExternalSet {
    /// Checks `tools` against the agent's own (`agent_tools`): no name clash, valid schemas.
    pub fn new(tools: Vec<ExternalTool>, agent_tools: &Arc<ToolSet>) -> Result<Self, ExternalToolError> {
        let offered = offer(agent_tools, &tools)?;
        Ok(ExternalSet {
            tools: tools.into(),
            offered: Mutex::new(Some((agent_tools.clone(), Arc::new(offered)))),
        })
    }

    /// The external tools of a parked turn, offered again by the turn that continues it.
    pub fn parked(tools: Arc<[ExternalTool]>) -> Self {
        ExternalSet {
            tools,
            offered: Mutex::new(None),
        }
    }

    /// The tools as the host gave them.
    pub fn tools(&self) -> &Arc<[ExternalTool]> {
        &self.tools
    }

    /// Whether `name` is one of them.
    pub fn has(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t.name == name)
    }

    /// The agent's tools (`agent_tools`, the current snapshot) and these. An external tool whose
    /// name the agent took since the turn started is left out: the agent's own wins.
    pub fn offered(&self, agent_tools: Arc<ToolSet>) -> Arc<ToolSet> {
        let Ok(mut cached) = self.offered.lock() else {
            return agent_tools;
        };
        if let Some((base, offered)) = cached.as_ref()
            && Arc::ptr_eq(base, &agent_tools)
        {
            return offered.clone();
        }
        let mut set = clone_set(&agent_tools);
        for tool in self.tools.iter() {
            if set.has(&tool.name) {
                tracing::warn!(tool = %tool.name, "an external tool's name is now one of the agent's tools: not offered");
                continue;
            }
            if let Err(e) = set.register(HostTool::new(tool)) {
                tracing::warn!(tool = %tool.name, error = %e, "external tool not offered");
            }
        }
        let offered = Arc::new(set);
        *cached = Some((agent_tools, offered.clone()));
        offered
    }
}

/// A copy of `tools` (the tools are shared).
fn clone_set(tools: &ToolSet) -> ToolSet {
    let mut set = ToolSet::new();
    for tool in tools.iter() {
        // The names are unique and the schemas compiled once already.
        let _ = set.register_arc(tool.clone());
    }
    set
}

/// The agent's tools with `tools` added, or why they cannot be.
fn offer(agent_tools: &ToolSet, tools: &[ExternalTool]) -> Result<ToolSet, ExternalToolError> {
    let mut set = clone_set(agent_tools);
    for tool in tools {
        if set.has(&tool.name) {
            return Err(ExternalToolError::NameClash(tool.name.clone()));
        }
        set.register(HostTool::new(tool))
            .map_err(|e| ExternalToolError::InvalidSchema {
                name: tool.name.clone(),
                reason: e.to_string(),
            })?;
    }
    Ok(set)
}

/// An external tool as the tool set holds it: its schema, for the model and for checking the
/// arguments. The loop parks on its calls; it never runs.
struct HostTool(ToolSpec);

impl HostTool {
    fn new(tool: &ExternalTool) -> Self {
        HostTool(ToolSpec::new(
            tool.name.clone(),
            tool.description.clone(),
            tool.parameters.clone(),
        ))
    }
}

#[async_trait]
impl Tool for HostTool {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn call(&self, _args: serde_json::Value, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::model(format!(
            "{} runs on the host, not in the agent",
            self.0.name
        )))
    }
}

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
    let settled = parked.pending.calls.iter().map(|call| {
        let result = results.iter().find(|r| r.call_id == call.call_id);
        let (content, is_error) =
            result.map_or_else(|| ("no result".to_owned(), true), |r| (r.content.clone(), r.is_error));
        (call, content, is_error)
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
