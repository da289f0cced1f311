//! Durable approvals: a turn parked until the person approves or rejects a gated call.
//!
//! A gate that answers [`GateDecision::Ask`](crate::GateDecision::Ask) (and no remembered
//! decision answers for it) parks the turn the way a clarification question does: the
//! outcome is `awaiting_approval`, the approval is persisted through the store, and
//! [`Session::resolve_approval`](crate::Session::resolve_approval) continues the turn in a new
//! run, in this process or in a new one after a restart. This module owns that lifecycle; the
//! tool step only calls in.

mod host_pattern;
mod nested;
mod rules;
mod watch;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

pub use super::pending_approval::{
    ApprovalCall, ApprovalDecision, ApprovalError, PendingApproval, RememberScope, SubAgentStep,
};
pub(crate) use super::pending_approval::{Gated, Verdict};
use super::pending_approval::{PARKED_KIND, ParkedApproval};
pub(crate) use host_pattern::normalize_host;
pub(crate) use nested::lift as lift_nested;
pub use rules::ApprovalRule;
pub(crate) use rules::ApprovalRules;

use super::emit::Emitter;
use super::history::History;
use super::parked_output;
use super::parked_slot::{Parked, ParkedSlot};
use super::run::RunStatus;
use super::turn_context::Turn;
use super::{AgentInner, SessionState};
use crate::event::EventKind;
use crate::message::ToolCall;
use crate::store::{StoreError, ToolCallRecord, now_millis};

/// The decisions a resumed turn applies, by call id, and the host each call was asked about.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(transparent)]
pub(crate) struct Decisions {
    by_call: HashMap<String, ApprovalDecision>,
    /// The host each call acts on, as the person saw it: an approved call runs only while its
    /// page is still there. Filled from the approval by [`check`].
    #[serde(skip)]
    hosts: HashMap<String, String>,
    /// The decisions for calls waiting in sub-agents, by the id of the call of the sub-agent
    /// tool they wait in: that call resumes its sub-agent's turn with them. Filled by [`check`].
    #[serde(skip)]
    nested: HashMap<String, NestedDecisions>,
    /// What the gate decided, when the turn parked, for the later gated calls of the message
    /// it did not ask the person about. Filled from the parked approval by [`resume`].
    #[serde(skip)]
    gated: HashMap<String, Gated>,
}

/// What a sub-agent's parked turn is resumed with: its session, its approval, and the
/// decisions for its calls under the sub-agent's own call ids.
#[derive(Debug, Clone)]
pub(crate) struct NestedDecisions {
    pub session_id: crate::SessionId,
    pub approval_id: String,
    pub decisions: Vec<(String, ApprovalDecision)>,
}

impl Decisions {
    /// The decision for call `id`.
    pub fn get(&self, id: &str) -> Option<&ApprovalDecision> {
        self.by_call.get(id)
    }

    /// The host call `id` was asked about, if its tool named one.
    pub fn host(&self, id: &str) -> Option<&str> {
        self.hosts.get(id).map(String::as_str)
    }

    /// When call `id` is a sub-agent's call its turn parked in: what resumes that turn.
    pub fn nested(&self, id: &str) -> Option<&NestedDecisions> {
        self.nested.get(id)
    }

    /// What the gate decided for call `id` when the turn parked, if it did not ask the person.
    pub fn gated(&self, id: &str) -> Option<&Gated> {
        self.gated.get(id)
    }
}

impl FromIterator<(String, ApprovalDecision)> for Decisions {
    fn from_iter<I: IntoIterator<Item = (String, ApprovalDecision)>>(iter: I) -> Self {
        Decisions {
            by_call: iter.into_iter().collect(),
            hosts: HashMap::new(),
            nested: HashMap::new(),
            gated: HashMap::new(),
        }
    }
}

/// What a message's calls park on: the first call to wait (`index`: it and the calls after it
/// run when the person answers), the calls the person is asked about, and what the gate
/// decided for the message's other gated calls (so it is asked once per call).
pub(crate) struct Parking {
    pub index: usize,
    /// As the approval holds them (a sub-agent's calls already lifted, see `nested`).
    pub calls: Vec<ApprovalCall>,
    pub gated: Vec<Gated>,
    /// The gate denied one of them and the denial will end the turn: nothing after it is asked.
    pub ends_turn: bool,
}

impl Parking {
    /// Parks at call `index` on `calls`; the gate has decided nothing else yet.
    pub fn at(index: usize, calls: Vec<ApprovalCall>) -> Self {
        Parking {
            index,
            calls,
            gated: Vec::new(),
            ends_turn: false,
        }
    }
}

/// The session's own call `call` that the gate asked the person about, with its checked
/// arguments, the gate's prompt and the host of its page (see [`crate::Tool::target_host`]).
pub(crate) fn asked(
    call: &ToolCall,
    arguments: serde_json::Value,
    prompt: Option<String>,
    host: Option<String>,
) -> ApprovalCall {
    ApprovalCall {
        call_id: call.id.clone(),
        tool: call.name.clone(),
        arguments,
        prompt,
        host,
        via: Vec::new(),
    }
}

/// A session's parked approval.
pub(crate) type Slot = ParkedSlot<ParkedApproval>;

impl Parked for ParkedApproval {
    fn id(&self) -> &str {
        &self.approval.id
    }

    fn origin(&self) -> &crate::gate::TurnOrigin {
        &self.approval.origin
    }
}

impl Slot {
    /// The pending approval, if any.
    pub fn get(&self) -> Option<PendingApproval> {
        self.with(|p| p.approval.clone())
    }

    /// The ids of the calls a pending approval holds back: waiting, not interrupted.
    pub fn waiting_calls(&self) -> Vec<String> {
        self.with(waiting_ids).unwrap_or_default()
    }
}

/// Parks the turn on `parking`: persists the approval with the calls that wait for it
/// (`waiting`, the first asked call first), emits `approval_pending`, and watches for expiry
/// and cancellation.
pub(crate) async fn park(
    turn: &Turn<'_>,
    waiting: Vec<ToolCall>,
    parking: Parking,
    message: Option<String>,
) -> Result<PendingApproval, StoreError> {
    let ttl = turn.agent.config.approval_ttl;
    let now = now_millis();
    let approval = PendingApproval {
        id: uuid::Uuid::new_v4().to_string(),
        calls: parking.calls,
        message,
        origin: turn.origin.clone(),
        asked_at_ms: now,
        expires_at_ms: now.saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX)),
    };
    let parked = ParkedApproval {
        kind: PARKED_KIND.to_owned(),
        approval: approval.clone(),
        waiting,
        gated: parking.gated,
    };
    if let Some(store) = turn.agent.store.as_ref() {
        let mut json = serde_json::to_value(&parked).map_err(|e| StoreError::Backend(e.to_string()))?;
        parked_output::attach(&mut json, turn.state.parked_output());
        store.set_parked_run(turn.session, Some(&json)).await?;
        for call in &parked.waiting {
            let mut record = ToolCallRecord::pending(turn.session.clone(), &call.id, &call.name, &call.arguments);
            record.started_at_ms = Some(now);
            store.upsert_tool_call(&record).await?;
        }
        // Parked means durable: the approval must be there after a crash right after this.
        store.flush(turn.session).await?;
    }
    turn.emitter.emit(EventKind::ApprovalPending {
        approval_id: approval.id.clone(),
        approval: serde_json::to_value(&approval).unwrap_or_default(),
    });
    let resolved = turn.state.approval.set(parked);
    watch::spawn(
        turn.agent.clone(),
        turn.state.clone(),
        approval.id.clone(),
        ttl,
        turn.cancel.clone(),
        resolved,
        turn.emitter.observers_only(),
    );
    Ok(approval)
}

/// Checks the person's answer against the pending approval before a turn starts for it:
/// every call answered, no stranger, edited arguments valid for the tool's schema, a host
/// pattern to remember valid and matching the call's host. Notes each call's host in
/// `decisions`.
pub(crate) fn check(
    agent: &AgentInner,
    state: &SessionState,
    id: &str,
    decisions: &mut Decisions,
) -> Result<(), ApprovalError> {
    let approval = state
        .approval
        .get()
        .filter(|a| a.id == id)
        .ok_or_else(|| ApprovalError::NotPending(id.to_owned()))?;
    if now_millis() > approval.expires_at_ms {
        return Err(ApprovalError::Expired);
    }
    if let Some(stranger) = decisions
        .by_call
        .keys()
        .find(|k| !approval.calls.iter().any(|c| &c.call_id == *k))
    {
        return Err(ApprovalError::UnknownCall(stranger.clone()));
    }
    let tools = agent.tool_snapshot();
    for call in &approval.calls {
        match decisions.get(&call.call_id) {
            None => return Err(ApprovalError::MissingDecision(call.call_id.clone())),
            Some(ApprovalDecision::Approve {
                arguments: Some(edited),
                ..
            }) => nested::tools_of(&tools, call)
                .ok_or_else(|| ApprovalError::InvalidArguments {
                    call_id: call.call_id.clone(),
                    message: format!(
                        "{} is no longer offered here, so its arguments cannot be checked",
                        call.tool
                    ),
                })?
                .validate(&call.tool, edited)
                .map_err(|e| ApprovalError::InvalidArguments {
                    call_id: call.call_id.clone(),
                    message: e.message,
                })?,
            Some(_) => {}
        }
        if let Some(RememberScope::Host(pattern)) = decisions.get(&call.call_id).and_then(ApprovalDecision::remembered)
        {
            check_host_scope(call, &pattern)?;
        }
    }
    for call in &approval.calls {
        if let Some(host) = &call.host {
            decisions.hosts.insert(call.call_id.clone(), host.clone());
        }
    }
    decisions.nested = nested::by_sub_agent_call(&approval, &decisions.by_call);
    Ok(())
}

/// A decision remembered for `pattern` must name a valid pattern that matches the host of the
/// call it answers: the person decides about the page they saw.
fn check_host_scope(call: &ApprovalCall, pattern: &str) -> Result<(), ApprovalError> {
    let invalid = |message: String| ApprovalError::InvalidRemember {
        call_id: call.call_id.clone(),
        message,
    };
    let pattern = host_pattern::parse_pattern(pattern).map_err(invalid)?;
    match call.host.as_deref() {
        None => Err(invalid(format!(
            "{} names no page host for this call, so a host rule could never answer it; remember it for the session or always instead",
            call.tool
        ))),
        Some(host) if !host_pattern::matches(&pattern, host) => Err(invalid(format!(
            "host pattern {pattern} does not match this call's host {host}"
        ))),
        Some(_) => Ok(()),
    }
}

/// Continues a parked turn with the person's (already checked) decisions: the approval is
/// resolved, remembered decisions are stored, and the calls that waited are handed back to
/// run with the decisions.
pub(crate) async fn resume(
    turn: &Turn<'_>,
    history: &mut History,
    id: &str,
    decisions: &mut Decisions,
) -> Result<Vec<ToolCall>, ApprovalError> {
    let Some(parked) = turn.state.approval.take(Some(id)) else {
        return Err(ApprovalError::NotPending(id.to_owned()));
    };
    decisions.gated = parked.gated.iter().map(|g| (g.call_id.clone(), g.clone())).collect();
    history.turn_start = history.messages.len();
    let store = turn.agent.store.as_ref();
    if let Some(store) = store {
        store.set_parked_run(turn.session, None).await?;
    }
    // A sub-agent's call is remembered by the sub-agent, which gets the decision.
    for call in parked.approval.calls.iter().filter(|c| c.via.is_empty()) {
        let Some(decision) = decisions.get(&call.call_id) else {
            continue;
        };
        if let Some(scope) = decision.remembered() {
            let reason = match decision {
                ApprovalDecision::Reject { reason, .. } => reason.clone(),
                ApprovalDecision::Approve { .. } => None,
            };
            turn.agent
                .approval_rules
                .remember(store, &call.tool, turn.session, scope, decision.approves(), reason)
                .await?;
        }
    }
    turn.emitter.emit(EventKind::ApprovalResolved {
        approval_id: parked.approval.id.clone(),
        resolution: "answered".into(),
        decisions: serde_json::to_value(decisions).unwrap_or_default(),
    });
    Ok(parked.waiting)
}

/// A new message dismisses the pending approval, if there is one: its calls get results
/// saying they did not run before the message is added.
pub(crate) async fn dismiss_for_new_message(turn: &Turn<'_>, history: &mut History) -> Result<(), StoreError> {
    let Some(parked) = turn.state.approval.take(None) else {
        return Ok(());
    };
    let why = "the person sent a new message instead of answering";
    watch::settle(history, turn.agent.store.as_ref(), turn.session, &parked, why).await?;
    turn.emitter.emit(dismissed(&parked, "a new message arrived"));
    Ok(())
}

/// The host dismisses pending approval `id` without answering: its calls get results saying
/// they did not run, the parked state is cleared in the store, and the event goes to the
/// agent's observers. No turn starts.
pub(crate) async fn dismiss(agent: &AgentInner, state: &SessionState, id: &str) -> Result<(), ApprovalError> {
    let mut history = state.history.lock().await;
    let Some(parked) = state.approval.take(Some(id)) else {
        return Err(ApprovalError::NotPending(id.to_owned()));
    };
    let why = "the person dismissed the approval without answering";
    watch::settle(&mut history, agent.store.as_ref(), &state.id, &parked, why).await?;
    drop(history);
    detached(agent, state).emit(dismissed(&parked, "dismissed by the host"));
    Ok(())
}

fn dismissed(parked: &ParkedApproval, reason: &str) -> EventKind {
    EventKind::ApprovalResolved {
        approval_id: parked.approval.id.clone(),
        resolution: "dismissed".into(),
        decisions: serde_json::json!({ "reason": reason }),
    }
}

/// Events of a session no run of this process is parked in: to the observers only.
fn detached(agent: &AgentInner, state: &SessionState) -> Emitter {
    Emitter::detached(
        state.id.clone(),
        agent.observers.clone(),
        Arc::new(Mutex::new(RunStatus::default())),
    )
}

/// The approval a stored session's turn was parked on when the process stopped, if its
/// parked-run state is one.
pub(crate) fn from_parked(json: &serde_json::Value) -> Option<ParkedApproval> {
    if json.get("kind").and_then(|k| k.as_str()) != Some(PARKED_KIND) {
        return None;
    }
    ParkedApproval::deserialize(json).ok()
}

/// The ids of the calls a loaded approval holds back, for crash repair.
pub(crate) fn waiting_ids(parked: &ParkedApproval) -> Vec<String> {
    parked.waiting.iter().map(|c| c.id.clone()).collect()
}

/// Puts an approval loaded from the store back in the reopened session's slot and keeps
/// waiting for the answer, for whatever is left of its time to live.
pub(crate) fn restore(agent: &Arc<AgentInner>, state: &Arc<SessionState>, parked: ParkedApproval) {
    let left = parked.approval.expires_at_ms.saturating_sub(now_millis()).max(0) as u64;
    let id = parked.approval.id.clone();
    let resolved = state.approval.set(parked);
    watch::spawn(
        agent.clone(),
        state.clone(),
        id,
        Duration::from_millis(left),
        CancellationToken::new(),
        resolved,
        detached(agent, state),
    );
}
