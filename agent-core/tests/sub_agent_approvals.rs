//! A sub-agent whose gate asks the person parks the calling turn: the caller's approval holds
//! the sub-agent's call, and answering it continues the sub-agent's turn, then the caller's,
//! also after a restart; a rejection reaches the sub-agent's model; edits are checked against
//! the sub-agent's tool.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::{Arc, Mutex};

use agent_core::{
    Agent, ApprovalDecision, ApprovalError, GateDecision, MemoryStore, ModelRequest, OutcomeStatus, Role, ScriptStep,
    ScriptedProvider, ScriptedReply, Store, ToolContext, ToolError, agent_tool, gate_fn, tool_fn,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct PayArgs {
    /// Amount in cents.
    amount: u32,
}

/// Answers with the last tool result, or calls `tool` with `args` when there is none yet.
fn calls_then_answers(tool: &'static str, args: serde_json::Value, prefix: &'static str) -> ScriptedProvider {
    ScriptedProvider::from_fn(move |req: &ModelRequest| {
        match req.messages.iter().rev().find(|m| m.role == Role::Tool) {
            None => ScriptStep::Reply(ScriptedReply::tool_call(tool, args.clone())),
            Some(result) => ScriptStep::Reply(ScriptedReply::text(format!("{prefix}{}", result.text()))),
        }
    })
}

/// A gated `pay` tool that records each amount it pays in `paid`.
fn pay_tool(paid: &Arc<Mutex<Vec<u32>>>) -> impl agent_core::Tool + 'static {
    let paid = paid.clone();
    tool_fn("pay", "Pays.", move |args: PayArgs, _cx: ToolContext| {
        let paid = paid.clone();
        async move {
            paid.lock().unwrap().push(args.amount);
            Ok::<_, ToolError>(format!("paid {}", args.amount))
        }
    })
    .gated(true)
}

struct Agents {
    lead: Agent,
    paid: Arc<Mutex<Vec<u32>>>,
    asked: Arc<Mutex<usize>>,
}

/// A lead agent offered a `helper` sub-agent whose gated `pay` tool the gate asks about.
fn agents(store: Option<Arc<dyn Store>>) -> Agents {
    let paid = Arc::new(Mutex::new(Vec::new()));
    let asked = Arc::new(Mutex::new(0));
    let pay = pay_tool(&paid);
    let a = asked.clone();
    let mut helper = Agent::builder()
        .provider(calls_then_answers("pay", json!({"amount": 5}), "helper: "))
        .tool(pay)
        .gate(gate_fn(move |_| {
            *a.lock().unwrap() += 1;
            async { GateDecision::ask("Pay?") }
        }));
    let mut lead = Agent::builder().provider(calls_then_answers("helper", json!({"task": "pay 5"}), "heard: "));
    if let Some(store) = store {
        helper = helper.store_arc(store.clone());
        lead = lead.store_arc(store);
    }
    let lead = lead
        .tool(agent_tool("helper", "Pays things.", helper.build().unwrap()))
        .build()
        .unwrap();
    Agents { lead, paid, asked }
}

#[tokio::test]
async fn the_sub_agents_approval_parks_the_caller_and_the_answer_resumes_both() {
    let a = agents(None);
    let session = a.lead.create_session().await.unwrap();
    let outcome = session.send("pay the bill").await;
    assert_eq!(outcome.status, OutcomeStatus::AwaitingApproval, "{:?}", outcome.error);
    let approval = outcome.approval.clone().unwrap();
    assert_eq!(approval.calls.len(), 1);
    let call = &approval.calls[0];
    assert_eq!(call.tool, "pay");
    assert_eq!(call.arguments, json!({"amount": 5}));
    assert_eq!(call.prompt.as_deref(), Some("Pay?"));
    assert_eq!(call.via.len(), 1);
    assert_eq!(call.via[0].tool, "helper");
    assert!(
        call.call_id.starts_with(&format!("{}/", call.via[0].call_id)),
        "{}",
        call.call_id
    );
    assert_ne!(&call.via[0].session_id, session.id());
    assert_eq!(session.pending_approval(), Some(approval.clone()));
    assert!(a.paid.lock().unwrap().is_empty());

    let outcome = session
        .resolve_approval(&approval.id, [(call.call_id.clone(), ApprovalDecision::approve())])
        .unwrap()
        .await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert_eq!(outcome.final_text.as_deref(), Some("heard: helper: paid 5"));
    assert_eq!(*a.paid.lock().unwrap(), vec![5]);
    assert_eq!(*a.asked.lock().unwrap(), 1, "the gate is asked once");
    assert_eq!(outcome.sub_agents.len(), 1, "the resumed sub-agent's usage is reported");
    assert!(session.pending_approval().is_none());
}

#[tokio::test]
async fn after_a_restart_the_answer_continues_the_sub_agent_and_the_call_runs_once() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let first = agents(Some(store.clone()));
    let session = first.lead.create_session().await.unwrap();
    let id = session.id().clone();
    let approval = session.send("pay").await.approval.unwrap();
    drop(session);
    drop(first);

    // New agents on the same store: the process restarted.
    let second = agents(Some(store));
    let session = second.lead.open_session(&id).await.unwrap();
    assert_eq!(session.pending_approval(), Some(approval.clone()));
    let call = approval.calls[0].call_id.clone();
    let outcome = session
        .resolve_approval(&approval.id, [(call, ApprovalDecision::approve())])
        .unwrap()
        .await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert_eq!(outcome.final_text.as_deref(), Some("heard: helper: paid 5"));
    assert_eq!(*second.paid.lock().unwrap(), vec![5]);
    assert_eq!(*second.asked.lock().unwrap(), 0, "nothing is asked again");
    let again = second.lead.open_session(&id).await.unwrap();
    assert!(again.pending_approval().is_none());
}

#[tokio::test]
async fn a_rejection_reaches_the_sub_agents_model() {
    let a = agents(None);
    let session = a.lead.create_session().await.unwrap();
    let approval = session.send("pay").await.approval.unwrap();
    let call = approval.calls[0].call_id.clone();
    let outcome = session
        .resolve_approval(&approval.id, [(call, ApprovalDecision::reject("not today"))])
        .unwrap()
        .await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    let text = outcome.final_text.unwrap();
    assert!(text.starts_with("heard: helper: "), "{text}");
    assert!(text.contains("the person rejected it: not today"), "{text}");
    assert!(a.paid.lock().unwrap().is_empty());
}

#[tokio::test]
async fn edits_are_checked_against_the_sub_agents_tool() {
    let a = agents(None);
    let session = a.lead.create_session().await.unwrap();
    let approval = session.send("pay").await.approval.unwrap();
    let call = approval.calls[0].call_id.clone();
    let refused = session.resolve_approval(
        &approval.id,
        [(call.clone(), ApprovalDecision::approve_with(json!({"amount": "lots"})))],
    );
    match refused {
        Err(ApprovalError::InvalidArguments { call_id, message }) => {
            assert_eq!(call_id, call);
            assert!(message.contains("amount"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert!(session.pending_approval().is_some());
    let outcome = session
        .resolve_approval(
            &approval.id,
            [(call, ApprovalDecision::approve_with(json!({"amount": 2})))],
        )
        .unwrap()
        .await;
    assert_eq!(outcome.final_text.as_deref(), Some("heard: helper: paid 2"));
    assert_eq!(*a.paid.lock().unwrap(), vec![2]);
}

#[tokio::test]
async fn a_new_message_dismisses_the_callers_approval() {
    let a = agents(None);
    let session = a.lead.create_session().await.unwrap();
    let approval = session.send("pay").await.approval.unwrap();
    let outcome = session.send("never mind").await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    // The helper's call got a result saying it did not run, which the lead's model read.
    let text = outcome.final_text.unwrap();
    assert!(text.contains("the person sent a new message"), "{text}");
    assert!(matches!(
        session.resolve_approval(&approval.id, []),
        Err(ApprovalError::NotPending(_))
    ));
    assert!(a.paid.lock().unwrap().is_empty());
}

#[tokio::test]
async fn an_approval_two_sub_agents_down_resumes_every_level() {
    let paid = Arc::new(Mutex::new(Vec::new()));
    let pay = pay_tool(&paid);
    let cashier = Agent::builder()
        .provider(calls_then_answers("pay", json!({"amount": 3}), "cashier: "))
        .tool(pay)
        .gate(gate_fn(|_| async { GateDecision::ask("Pay?") }))
        .build()
        .unwrap();
    let helper = Agent::builder()
        .provider(calls_then_answers("cashier", json!({"task": "pay 3"}), "helper: "))
        .tool(agent_tool("cashier", "Pays.", cashier))
        .build()
        .unwrap();
    let lead = Agent::builder()
        .provider(calls_then_answers("helper", json!({"task": "pay 3"}), "heard: "))
        .tool(agent_tool("helper", "Helps.", helper))
        .build()
        .unwrap();
    let session = lead.create_session().await.unwrap();
    let approval = session.send("pay").await.approval.unwrap();
    let call = &approval.calls[0];
    assert_eq!(call.tool, "pay");
    let via: Vec<&str> = call.via.iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(via, vec!["helper", "cashier"]);
    assert_eq!(call.call_id.matches('/').count(), 2, "{}", call.call_id);
    let outcome = session
        .resolve_approval(&approval.id, [(call.call_id.clone(), ApprovalDecision::approve())])
        .unwrap()
        .await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert_eq!(outcome.final_text.as_deref(), Some("heard: helper: cashier: paid 3"));
    assert_eq!(*paid.lock().unwrap(), vec![3]);
}
