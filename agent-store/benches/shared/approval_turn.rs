//! A turn that parks for the person's approval, and its resumption by another agent on the
//! same SQLite file (a restarted process): the `store` bench's `approval_turn` group.

use std::sync::Arc;

use agent_core::{
    Agent, AgentError, ApprovalDecision, GateDecision, OutcomeStatus, ScriptStep, ScriptedProvider, ScriptedReply,
    SessionId, Store, ToolContext, ToolError, gate_fn, tool_fn,
};

/// An agent whose gated `pay` tool the gate asks the person about; its model pays on the
/// user's message and answers after the tool's result.
pub fn approval_agent(runtime: &tokio::runtime::Runtime, store: Arc<dyn Store>) -> Result<Agent, AgentError> {
    let pay = tool_fn("pay", "Pays.", |_: serde_json::Value, _: ToolContext| async move {
        Ok::<_, ToolError>("paid")
    })
    .gated(true);
    let provider = ScriptedProvider::from_fn(|req| match req.messages.last().map(|m| m.role) {
        Some(agent_core::Role::User) => {
            ScriptStep::Reply(ScriptedReply::tool_call("pay", serde_json::json!({"amount": 5})))
        }
        _ => ScriptStep::Reply(ScriptedReply::text("paid it")),
    });
    let _context = runtime.enter();
    Agent::builder()
        .provider(provider)
        .tool(pay)
        .store_arc(store)
        .gate(gate_fn(|_| async { GateDecision::ask("Pay?") }))
        .runtime(runtime.handle().clone())
        .build()
}

/// One park in `parking`'s process, then the answer through `resuming` (another agent on the
/// same store: it opens the session from the file, finds the approval, and completes the turn).
pub async fn park_and_resume(parking: &Agent, resuming: &Agent) -> SessionId {
    let session = parking.create_session().await.unwrap();
    let parked = session.send("pay").await;
    assert_eq!(parked.status, OutcomeStatus::AwaitingApproval);
    let id = session.id().clone();
    drop(session);
    let reopened = resuming.open_session(&id).await.unwrap();
    let approval = reopened.pending_approval().expect("a pending approval");
    let answers = approval
        .calls
        .iter()
        .map(|c| (c.call_id.clone(), ApprovalDecision::approve()));
    let done = reopened.resolve_approval(&approval.id, answers).unwrap().await;
    assert_eq!(done.status, OutcomeStatus::Done);
    id
}
