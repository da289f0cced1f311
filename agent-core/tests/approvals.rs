//! Durable approvals: a gate that answers "ask" parks the turn; approve, reject, edit (valid
//! and not), remembered decisions, expiry, a new message, a reopened store, and calls after
//! the parked one waiting in order.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::{
    Agent, AgentConfig, AgentEvent, ApprovalDecision, ApprovalError, GateDecision, MemoryStore, OutcomeStatus,
    RememberScope, RunState, ScriptedProvider, ScriptedReply, Store, ToolContext, ToolError, gate_fn, tool_fn,
};
use common::{assert_transcript_valid, collect_events, messages_of, names, tool_results};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct PayArgs {
    /// Amount in cents.
    amount: u32,
}

/// What the tools ran, in order.
type Ran = Arc<Mutex<Vec<String>>>;

struct Fixture {
    agent: Agent,
    provider: Arc<ScriptedProvider>,
    ran: Ran,
    observed: Arc<Mutex<Vec<AgentEvent>>>,
}

/// An agent with a gated `pay` tool whose gate asks the person, and an ungated `note` tool.
fn fixture(replies: Vec<ScriptedReply>, store: Option<Arc<dyn Store>>, config: AgentConfig) -> Fixture {
    let ran: Ran = Arc::default();
    let r = ran.clone();
    let pay = tool_fn("pay", "Pays.", move |args: PayArgs, _cx: ToolContext| {
        let r = r.clone();
        async move {
            r.lock().unwrap().push(format!("pay {}", args.amount));
            Ok::<_, ToolError>(format!("paid {}", args.amount))
        }
    })
    .gated(true);
    let r = ran.clone();
    let note = tool_fn("note", "Notes.", move |_: serde_json::Value, _cx: ToolContext| {
        let r = r.clone();
        async move {
            r.lock().unwrap().push("note".into());
            Ok::<_, ToolError>("noted")
        }
    });
    let provider = Arc::new(ScriptedProvider::new(replies.into_iter().map(Into::into)).record_requests());
    let observed = Arc::new(Mutex::new(Vec::new()));
    let o = observed.clone();
    let mut builder = Agent::builder()
        .provider_arc(provider.clone())
        .tool(pay)
        .tool(note)
        .config(config)
        .gate(gate_fn(|_| async { GateDecision::ask("Pay this?") }))
        .on_event(move |e| o.lock().unwrap().push(e.clone()));
    if let Some(store) = store {
        builder = builder.store_arc(store);
    }
    Fixture {
        agent: builder.build().unwrap(),
        provider,
        ran,
        observed,
    }
}

fn pay(amount: u32) -> ScriptedReply {
    ScriptedReply::text("I will pay.").with_call("pay", json!({ "amount": amount }))
}

#[tokio::test]
async fn ask_parks_the_turn_and_an_approval_runs_the_call_once_in_a_new_run() {
    let f = fixture(
        vec![pay(500), ScriptedReply::text("Paid.")],
        None,
        AgentConfig::default(),
    );
    let session = f.agent.create_session().await.unwrap();
    let run = session.send("pay the bill");
    let events = collect_events(&run).await;
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, OutcomeStatus::AwaitingApproval);
    assert_eq!(run.status().state, RunState::AwaitingApproval);
    assert!(names(&events).contains(&"approval_pending"));
    let approval = outcome.approval.clone().unwrap();
    assert_eq!(approval.calls.len(), 1);
    assert_eq!(approval.calls[0].tool, "pay");
    assert_eq!(approval.calls[0].arguments, json!({"amount": 500}));
    assert_eq!(approval.calls[0].prompt.as_deref(), Some("Pay this?"));
    assert_eq!(approval.message.as_deref(), Some("I will pay."));
    assert!(approval.origin.is_person());
    assert_eq!(session.pending_approval(), Some(approval.clone()));
    assert!(
        f.ran.lock().unwrap().is_empty(),
        "nothing runs before the person answers"
    );

    let call_id = approval.calls[0].call_id.clone();
    let resumed = session
        .resolve_approval(&approval.id, [(call_id, ApprovalDecision::approve())])
        .unwrap();
    let events = collect_events(&resumed).await;
    let outcome = resumed.outcome().await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert_eq!(outcome.final_text.as_deref(), Some("Paid."));
    assert_eq!(*f.ran.lock().unwrap(), vec!["pay 500"]);
    assert!(names(&events).contains(&"approval_resolved"));
    assert!(session.pending_approval().is_none());
    // Answered once: a second answer is refused.
    assert!(matches!(
        session.resolve_approval(&approval.id, []),
        Err(ApprovalError::NotPending(_))
    ));
    let messages = messages_of(&session).await;
    assert_transcript_valid(&messages);
    assert_eq!(tool_results(&messages), vec![("paid 500".to_owned(), false)]);
    assert_eq!(f.provider.call_count(), 2);
}

#[tokio::test]
async fn a_rejection_is_read_by_the_model_and_the_turn_goes_on() {
    let f = fixture(
        vec![pay(500), ScriptedReply::text("Understood.")],
        None,
        AgentConfig::default(),
    );
    let session = f.agent.create_session().await.unwrap();
    let approval = session.send("pay").await.approval.unwrap();
    let call = approval.calls[0].call_id.clone();
    let outcome = session
        .resolve_approval(&approval.id, [(call, ApprovalDecision::reject("too expensive"))])
        .unwrap()
        .await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    assert!(f.ran.lock().unwrap().is_empty());
    let seen = f.provider.requests();
    let last = seen.last().unwrap().messages.last().unwrap().text();
    assert!(last.contains("the person rejected it: too expensive"), "{last}");
    assert_transcript_valid(&messages_of(&session).await);
}

#[tokio::test]
async fn edited_arguments_are_checked_against_the_schema_and_used() {
    let f = fixture(
        vec![pay(500), ScriptedReply::text("Paid less.")],
        None,
        AgentConfig::default(),
    );
    let session = f.agent.create_session().await.unwrap();
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
    assert!(
        session.pending_approval().is_some(),
        "still pending after a refused edit"
    );
    // Every call needs a decision; strangers are refused.
    assert!(matches!(
        session.resolve_approval(&approval.id, []),
        Err(ApprovalError::MissingDecision(_))
    ));
    assert!(matches!(
        session.resolve_approval(&approval.id, [("nope".to_owned(), ApprovalDecision::approve())]),
        Err(ApprovalError::UnknownCall(_))
    ));
    let outcome = session
        .resolve_approval(
            &approval.id,
            [(call, ApprovalDecision::approve_with(json!({"amount": 200})))],
        )
        .unwrap()
        .await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    assert_eq!(*f.ran.lock().unwrap(), vec!["pay 200"]);
}

#[tokio::test]
async fn a_remembered_decision_skips_the_question_until_it_is_revoked() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let f = fixture(
        vec![
            pay(1),
            ScriptedReply::text("ok"),
            pay(2),
            ScriptedReply::text("ok again"),
            pay(3),
        ],
        Some(store.clone()),
        AgentConfig::default(),
    );
    let session = f.agent.create_session().await.unwrap();
    let approval = session.send("pay 1").await.approval.unwrap();
    let call = approval.calls[0].call_id.clone();
    let remembered = ApprovalDecision::approve().remember(RememberScope::Session);
    session
        .resolve_approval(&approval.id, [(call, remembered)])
        .unwrap()
        .await;
    let rules = f.agent.approval_rules().await.unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].tool, "pay");
    assert_eq!(rules[0].session_id.as_ref(), Some(session.id()));
    assert!(rules[0].allow);

    // The gate asks again; the remembered approval answers.
    let outcome = session.send("pay 2").await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{outcome:?}");
    assert_eq!(*f.ran.lock().unwrap(), vec!["pay 1", "pay 2"]);

    // Revoked, the question goes to the person again.
    assert!(f.agent.revoke_approval_rule(&rules[0].id).await.unwrap());
    assert!(!f.agent.revoke_approval_rule(&rules[0].id).await.unwrap());
    assert!(f.agent.approval_rules().await.unwrap().is_empty());
    assert_eq!(session.send("pay 3").await.status, OutcomeStatus::AwaitingApproval);
}

#[tokio::test]
async fn a_remembered_rejection_tells_the_model_without_asking() {
    let f = fixture(
        vec![pay(1), ScriptedReply::text("ok"), pay(2), ScriptedReply::text("fine")],
        None,
        AgentConfig::default(),
    );
    let session = f.agent.create_session().await.unwrap();
    let approval = session.send("pay").await.approval.unwrap();
    let call = approval.calls[0].call_id.clone();
    let never = ApprovalDecision::reject("never pay from this agent").remember(RememberScope::Always);
    session.resolve_approval(&approval.id, [(call, never)]).unwrap().await;
    let other = f.agent.create_session().await.unwrap();
    assert_eq!(other.send("pay").await.status, OutcomeStatus::Done);
    assert!(f.ran.lock().unwrap().is_empty());
    let results = tool_results(&messages_of(&other).await);
    assert!(results[0].0.contains("never pay from this agent"), "{results:?}");
}

#[tokio::test(start_paused = true)]
async fn an_unanswered_approval_expires_and_its_call_does_not_run() {
    let config = AgentConfig {
        approval_ttl: Duration::from_secs(60),
        ..AgentConfig::default()
    };
    let f = fixture(vec![pay(5), ScriptedReply::text("next")], None, config);
    let session = f.agent.create_session().await.unwrap();
    let approval = session.send("pay").await.approval.unwrap();
    tokio::time::sleep(Duration::from_secs(61)).await;
    // Let the watcher record the expiry.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert!(session.pending_approval().is_none());
    assert!(names(&f.observed.lock().unwrap()).contains(&"approval_expired"));
    let call = approval.calls[0].call_id.clone();
    assert!(matches!(
        session.resolve_approval(&approval.id, [(call, ApprovalDecision::approve())]),
        Err(ApprovalError::NotPending(_))
    ));
    let messages = messages_of(&session).await;
    assert_transcript_valid(&messages);
    let results = tool_results(&messages);
    assert!(
        results[0]
            .0
            .starts_with("[Approval not given]: the person did not answer within 1 minutes"),
        "{results:?}"
    );
    assert!(f.ran.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_new_message_dismisses_the_approval() {
    let f = fixture(
        vec![pay(5), ScriptedReply::text("Okay, not paying.")],
        None,
        AgentConfig::default(),
    );
    let session = f.agent.create_session().await.unwrap();
    let approval = session.send("pay").await.approval.unwrap();
    let run = session.send("never mind");
    let events = collect_events(&run).await;
    assert_eq!(run.outcome().await.status, OutcomeStatus::Done);
    assert!(session.pending_approval().is_none());
    let resolved = events
        .iter()
        .find(|e| e.kind.name() == "approval_resolved")
        .expect("approval_resolved");
    let data = serde_json::to_value(&resolved.kind).unwrap();
    assert_eq!(data["approval_id"], json!(approval.id));
    assert_eq!(data["resolution"], json!("dismissed"));
    let messages = messages_of(&session).await;
    assert_transcript_valid(&messages);
    assert!(tool_results(&messages)[0].0.contains("the person sent a new message"));
    assert!(f.ran.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_reopened_store_keeps_the_approval_and_the_call_runs_exactly_once() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let first = fixture(vec![pay(7)], Some(store.clone()), AgentConfig::default());
    let session = first.agent.create_session().await.unwrap();
    let id = session.id().clone();
    let approval = session.send("pay").await.approval.unwrap();
    drop(session);
    drop(first);

    // Another agent on the same store: the process restarted.
    let second = fixture(
        vec![ScriptedReply::text("Paid after the restart.")],
        Some(store),
        AgentConfig::default(),
    );
    let session = second.agent.open_session(&id).await.unwrap();
    assert_eq!(session.pending_approval(), Some(approval.clone()));
    let call = approval.calls[0].call_id.clone();
    let outcome = session
        .resolve_approval(&approval.id, [(call, ApprovalDecision::approve())])
        .unwrap()
        .await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert_eq!(*second.ran.lock().unwrap(), vec!["pay 7"]);
    let messages = messages_of(&session).await;
    assert_transcript_valid(&messages);
    // Reopened once more: nothing pending, nothing repaired, nothing run again.
    let again = second.agent.open_session(&id).await.unwrap();
    assert!(again.pending_approval().is_none());
    assert_eq!(second.ran.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn calls_after_the_parked_one_wait_and_run_in_order() {
    let replies = vec![
        ScriptedReply::text("")
            .with_call("note", json!({}))
            .with_call("pay", json!({"amount": 9}))
            .with_call("note", json!({"again": true})),
        ScriptedReply::text("done"),
    ];
    let f = fixture(replies, None, AgentConfig::default());
    let session = f.agent.create_session().await.unwrap();
    let outcome = session.send("go").await;
    assert_eq!(outcome.status, OutcomeStatus::AwaitingApproval);
    assert_eq!(
        *f.ran.lock().unwrap(),
        vec!["note"],
        "the call before the parked one ran"
    );
    assert_eq!(
        outcome.approval.as_ref().unwrap().message,
        None,
        "no text in that message"
    );
    let approval = outcome.approval.unwrap();
    let call = approval.calls[0].call_id.clone();
    let outcome = session
        .resolve_approval(&approval.id, [(call, ApprovalDecision::approve())])
        .unwrap()
        .await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    assert_eq!(*f.ran.lock().unwrap(), vec!["note", "pay 9", "note"]);
    assert_transcript_valid(&messages_of(&session).await);
}
