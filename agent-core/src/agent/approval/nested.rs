//! Approvals asked in a sub-agent's turn: the calling session's approval holds the sub-agent's
//! calls (their ids prefixed with the calling call's id), and the person's decisions go back
//! down to the sub-agent's parked turn when the calling turn resumes.

use std::collections::HashMap;
use std::sync::Arc;

use super::{ApprovalCall, ApprovalDecision, NestedDecisions, PendingApproval, SubAgentStep};
use crate::session::SessionId;
use crate::tool::ToolSet;

/// The calls of a sub-agent's pending approval as the calling session's approval holds them:
/// the sub-agent's turn (session `session`) was started by call `call_id` of tool `tool`.
pub(crate) fn lift(pending: PendingApproval, tool: &str, call_id: &str, session: &SessionId) -> Vec<ApprovalCall> {
    let step = SubAgentStep {
        tool: tool.to_owned(),
        call_id: call_id.to_owned(),
        session_id: session.clone(),
        approval_id: pending.id,
    };
    pending
        .calls
        .into_iter()
        .map(|mut call| {
            call.call_id = format!("{call_id}/{}", call.call_id);
            call.via.insert(0, step.clone());
            call
        })
        .collect()
}

/// The tools of the agent `call` waits in: this agent's own, or a sub-agent's down its `via`
/// chain (`None` when a sub-agent on the way is no longer offered).
pub(crate) fn tools_of(tools: &Arc<ToolSet>, call: &ApprovalCall) -> Option<Arc<ToolSet>> {
    let mut tools = tools.clone();
    for step in &call.via {
        let sub_agent = tools.get(&step.tool)?.as_sub_agent()?;
        tools = sub_agent.tool_snapshot();
    }
    Some(tools)
}

/// The decisions for the calls waiting in sub-agents, grouped by the call of the sub-agent
/// tool whose turn resumes with them, under the sub-agent's own call ids.
pub(crate) fn by_sub_agent_call(
    approval: &PendingApproval,
    decisions: &HashMap<String, ApprovalDecision>,
) -> HashMap<String, NestedDecisions> {
    let mut nested: HashMap<String, NestedDecisions> = HashMap::new();
    for call in &approval.calls {
        let (Some(step), Some(decision)) = (call.via.first(), decisions.get(&call.call_id)) else {
            continue;
        };
        let own_id = call
            .call_id
            .strip_prefix(step.call_id.as_str())
            .and_then(|rest| rest.strip_prefix('/'))
            .unwrap_or(&call.call_id);
        nested
            .entry(step.call_id.clone())
            .or_insert_with(|| NestedDecisions {
                session_id: step.session_id.clone(),
                approval_id: step.approval_id.clone(),
                decisions: Vec::new(),
            })
            .decisions
            .push((own_id.to_owned(), decision.clone()));
    }
    nested
}
