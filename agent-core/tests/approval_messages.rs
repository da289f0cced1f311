//! Every gated call of one message is asked at once: the person answers them together, the
//! gate is asked once per call (what it decided for a call it did not ask about is applied when
//! the turn resumes), and the calls run in the model's order.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::{Arc, Mutex};

use agent_core::{
    Agent, AgentConfig, ApprovalDecision, ApprovalError, DenialPolicy, GateDecision, MemoryStore, OutcomeStatus,
    ScriptedProvider, ScriptedReply, Store, ToolContext, ToolError, gate_fn, tool_fn,
};
use common::{assert_transcript_valid, messages_of, tool_results};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct PayArgs {
    amount: u32,
}

struct Fixture {
    agent: Agent,
    ran: Arc<Mutex<Vec<String>>>,
    gate_asked: Arc<Mutex<Vec<u32>>>,
}

/// A gated `pay` tool and an ungated `note`; the gate allows amounts below 10, denies 13 and
/// asks the person about the rest.
fn fixture(replies: Vec<ScriptedReply>, store: Option<Arc<dyn Store>>, config: AgentConfig) -> Fixture {
    let ran: Arc<Mutex<Vec<String>>> = Arc::default();
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
    let gate_asked: Arc<Mutex<Vec<u32>>> = Arc::default();
    let g = gate_asked.clone();
    let gate = gate_fn(move |request| {
        let amount = request.arguments["amount"].as_u64().unwrap_or_default() as u32;
        g.lock().unwrap().push(amount);
        async move {
            match amount {
                13 => GateDecision::deny("unlucky"),
                a if a < 10 => GateDecision::Allow,
                _ => GateDecision::ask(format!("Pay {amount}?")),
            }
        }
    });
    let mut builder = Agent::builder()
        .provider(ScriptedProvider::new(replies.into_iter().map(Into::into)))
        .tool(pay)
        .tool(note)
        .config(config)
        .gate(gate);
    if let Some(store) = store {
        builder = builder.store_arc(store);
    }
    Fixture {
        agent: builder.build().unwrap(),
        ran,
        gate_asked,
    }
}

fn pays(amounts: &[u32]) -> ScriptedReply {
    amounts.iter().fold(ScriptedReply::text("Paying."), |reply, amount| {
        reply.with_call("pay", json!({ "amount": amount }))
    })
}

#[tokio::test]
async fn two_asked_calls_of_one_message_are_answered_together() {
    let f = fixture(
        vec![pays(&[20, 30]), ScriptedReply::text("done")],
        None,
        AgentConfig::default(),
    );
    let session = f.agent.create_session().await.unwrap();
    let approval = session.send("pay").await.approval.unwrap();
    let asked: Vec<_> = approval
        .calls
        .iter()
        .map(|c| (c.tool.as_str(), c.arguments.clone()))
        .collect();
    assert_eq!(
        asked,
        vec![("pay", json!({"amount": 20})), ("pay", json!({"amount": 30}))]
    );
    assert_eq!(approval.calls[1].prompt.as_deref(), Some("Pay 30?"));
    assert!(f.ran.lock().unwrap().is_empty());

    // Both need an answer.
    let first = approval.calls[0].call_id.clone();
    let second = approval.calls[1].call_id.clone();
    assert!(matches!(
        session.resolve_approval(&approval.id, [(first.clone(), ApprovalDecision::approve())]),
        Err(ApprovalError::MissingDecision(id)) if id == second
    ));
    let outcome = session
        .resolve_approval(
            &approval.id,
            [
                (first, ApprovalDecision::reject("not that one")),
                (second, ApprovalDecision::approve()),
            ],
        )
        .unwrap()
        .await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert_eq!(*f.ran.lock().unwrap(), vec!["pay 30"]);
    assert_eq!(
        *f.gate_asked.lock().unwrap(),
        vec![20, 30],
        "the gate is asked once per call"
    );
    let messages = messages_of(&session).await;
    assert_transcript_valid(&messages);
    let results = tool_results(&messages);
    assert!(results[0].0.contains("not that one"), "{results:?}");
    assert_eq!(results[1].0, "paid 30");
}

#[tokio::test]
async fn what_the_gate_decided_for_the_others_is_applied_in_order_when_the_turn_resumes() {
    let replies = vec![
        ScriptedReply::text("")
            .with_call("pay", json!({"amount": 50}))
            .with_call("note", json!({}))
            .with_call("pay", json!({"amount": 5}))
            .with_call("pay", json!({"amount": 13})),
        ScriptedReply::text("done"),
    ];
    let config = AgentConfig {
        on_denial: DenialPolicy::TellModel,
        ..AgentConfig::default()
    };
    let f = fixture(replies, None, config);
    let session = f.agent.create_session().await.unwrap();
    let approval = session.send("go").await.approval.unwrap();
    assert_eq!(approval.calls.len(), 1, "only the asked call is the person's to answer");
    assert_eq!(approval.calls[0].arguments, json!({"amount": 50}));
    assert!(
        f.ran.lock().unwrap().is_empty(),
        "nothing after the asked call runs before the answer"
    );
    let call = approval.calls[0].call_id.clone();
    let outcome = session
        .resolve_approval(&approval.id, [(call, ApprovalDecision::approve())])
        .unwrap()
        .await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert_eq!(*f.ran.lock().unwrap(), vec!["pay 50", "note", "pay 5"]);
    assert_eq!(
        *f.gate_asked.lock().unwrap(),
        vec![50, 5, 13],
        "not asked again on resume"
    );
    let results = tool_results(&messages_of(&session).await);
    assert!(results[3].0.contains("unlucky"), "{results:?}");
}

#[tokio::test]
async fn a_denial_that_ends_the_turn_still_ends_it_after_the_answer_and_a_restart() {
    // The default denial policy ends the turn.
    let config = AgentConfig::default();
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let first = fixture(vec![pays(&[40, 13, 60])], Some(store.clone()), config.clone());
    let session = first.agent.create_session().await.unwrap();
    let id = session.id().clone();
    let approval = session.send("pay").await.approval.unwrap();
    let amounts: Vec<_> = approval.calls.iter().map(|c| c.arguments["amount"].clone()).collect();
    assert_eq!(
        amounts,
        vec![json!(40)],
        "60 is not asked: the denial of 13 ends the turn before it"
    );
    drop(session);
    drop(first);

    let second = fixture(vec![], Some(store), config);
    let session = second.agent.open_session(&id).await.unwrap();
    let decisions = approval
        .calls
        .iter()
        .map(|c| (c.call_id.clone(), ApprovalDecision::approve()));
    let outcome = session.resolve_approval(&approval.id, decisions).unwrap().await;
    assert_eq!(outcome.status, OutcomeStatus::Denied, "{:?}", outcome.error);
    assert_eq!(
        *second.ran.lock().unwrap(),
        vec!["pay 40"],
        "the denial ends the turn before 60"
    );
    assert!(
        second.gate_asked.lock().unwrap().is_empty(),
        "the gate decided before the restart"
    );
    assert_transcript_valid(&messages_of(&session).await);
}
