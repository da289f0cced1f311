//! ask_clarification: confirm, choice and input answered; bad answers refused; TTL expiry on
//! a controllable (paused) clock; cancel and a new message dismiss; restart from the store.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::{
    Agent, AgentEvent, ClarificationError, ClarificationKind, MemoryStore, OutcomeStatus, Role, RunState,
    ScriptedProvider, ScriptedReply, Store,
};
use common::{assert_transcript_valid, collect_events, messages_of, names};
use serde_json::json;

fn asking(kind: &str, extra: serde_json::Value) -> ScriptedReply {
    let mut args = json!({"kind": kind, "title": "Check", "question": "Proceed?"});
    if let (Some(a), Some(e)) = (args.as_object_mut(), extra.as_object()) {
        a.extend(e.clone());
    }
    ScriptedReply::tool_call("ask_clarification", args)
}

struct Fixture {
    agent: Agent,
    provider: Arc<ScriptedProvider>,
    observed: Arc<Mutex<Vec<AgentEvent>>>,
}

fn fixture(replies: Vec<ScriptedReply>, store: Arc<dyn Store>) -> Fixture {
    let provider = Arc::new(ScriptedProvider::new(replies.into_iter().map(Into::into)).record_requests());
    let observed = Arc::new(Mutex::new(Vec::new()));
    let o = observed.clone();
    let agent = Agent::builder()
        .provider_arc(provider.clone())
        .store_arc(store)
        .clarification(true)
        .on_event(move |e| o.lock().unwrap().push(e.clone()))
        .build()
        .unwrap();
    Fixture {
        agent,
        provider,
        observed,
    }
}

async fn answered(kind: &str, extra: serde_json::Value, answer: &str, expected: &str) {
    let f = fixture(
        vec![asking(kind, extra), ScriptedReply::text("Thanks, proceeding.")],
        Arc::new(MemoryStore::new()),
    );
    let session = f.agent.create_session().await.unwrap();
    let run = session.send("do it");
    let events = collect_events(&run).await;
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, OutcomeStatus::AwaitingUser);
    assert_eq!(run.status().state, RunState::AwaitingUser);
    assert!(names(&events).contains(&"clarification_pending"));
    let question = outcome.clarification.expect("the outcome carries the question");
    assert_eq!(session.pending_clarification().unwrap().id, question.id);

    let resumed = session.answer_clarification(&question.id, answer).unwrap();
    let events = collect_events(&resumed).await;
    let outcome = resumed.outcome().await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    assert!(names(&events).contains(&"clarification_responded"));
    let seen = &f.provider.requests()[1];
    let result = seen.messages.iter().find(|m| m.role == Role::Tool).unwrap();
    assert_eq!(result.text(), format!("[User Response to Clarification]: {expected}"));
    assert!(session.pending_clarification().is_none());
    assert_transcript_valid(&messages_of(&session).await);
}

#[tokio::test]
async fn confirm_is_answered() {
    answered("confirm", json!({}), "Yes", "yes").await;
}

#[tokio::test]
async fn choice_is_answered() {
    answered("choice", json!({"options": ["red", "blue"]}), "blue", "blue").await;
}

#[tokio::test]
async fn input_is_answered() {
    answered("input", json!({}), "  the north door ", "the north door").await;
}

#[tokio::test]
async fn a_bad_answer_is_refused_and_the_question_stays_pending() {
    let f = fixture(
        vec![
            asking("choice", json!({"options": ["red", "blue"]})),
            ScriptedReply::text("ok"),
        ],
        Arc::new(MemoryStore::new()),
    );
    let session = f.agent.create_session().await.unwrap();
    let question = session.send("pick").await.clarification.unwrap();
    assert_eq!(question.kind, ClarificationKind::Choice);
    let err = session.answer_clarification(&question.id, "green").unwrap_err();
    assert!(
        matches!(err, ClarificationError::InvalidAnswer(ref m) if m.contains("red, blue")),
        "{err}"
    );
    assert!(session.pending_clarification().is_some());
    let err = session.answer_clarification("not-an-id", "red").unwrap_err();
    assert!(matches!(err, ClarificationError::NotPending(_)));
    assert_eq!(
        session
            .answer_clarification(&question.id, "red")
            .unwrap()
            .outcome()
            .await
            .status,
        OutcomeStatus::Done
    );
}

#[tokio::test]
async fn a_choice_without_options_is_an_error_for_the_model() {
    let f = fixture(
        vec![
            asking("choice", json!({"options": ["only"]})),
            ScriptedReply::text("ok, no question"),
        ],
        Arc::new(MemoryStore::new()),
    );
    let session = f.agent.create_session().await.unwrap();
    let outcome = session.send("pick").await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    assert_transcript_valid(&messages_of(&session).await);
}

#[tokio::test(start_paused = true)]
async fn the_question_expires_after_its_ttl() {
    let f = fixture(vec![asking("confirm", json!({}))], Arc::new(MemoryStore::new()));
    let session = f.agent.create_session().await.unwrap();
    let question = session.send("do it").await.clarification.unwrap();
    // The paused clock jumps forward: no real waiting.
    tokio::time::sleep(Duration::from_secs(29 * 60)).await;
    assert!(session.pending_clarification().is_some(), "not yet expired at 29 min");
    tokio::time::sleep(Duration::from_secs(2 * 60)).await;
    tokio::task::yield_now().await;
    assert!(session.pending_clarification().is_none());
    let observed = f.observed.lock().unwrap().clone();
    assert!(observed.iter().any(|e| e.kind.name() == "clarification_expired"));
    let messages = messages_of(&session).await;
    assert!(messages.last().unwrap().text().starts_with("[Clarification expired]"));
    assert_transcript_valid(&messages);
    assert!(matches!(
        session.answer_clarification(&question.id, "yes"),
        Err(ClarificationError::NotPending(_))
    ));
}

#[tokio::test]
async fn cancelling_the_parked_run_dismisses_the_question() {
    let f = fixture(vec![asking("confirm", json!({}))], Arc::new(MemoryStore::new()));
    let session = f.agent.create_session().await.unwrap();
    let run = session.send("do it");
    assert_eq!(run.outcome().await.status, OutcomeStatus::AwaitingUser);
    run.cancel();
    for _ in 0..100 {
        if session.pending_clarification().is_none() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(session.pending_clarification().is_none());
    assert!(
        f.observed
            .lock()
            .unwrap()
            .iter()
            .any(|e| e.kind.name() == "clarification_dismissed")
    );
    assert_transcript_valid(&messages_of(&session).await);
}

#[tokio::test]
async fn a_new_message_dismisses_the_question_first() {
    let f = fixture(
        vec![asking("confirm", json!({})), ScriptedReply::text("new topic handled")],
        Arc::new(MemoryStore::new()),
    );
    let session = f.agent.create_session().await.unwrap();
    session.send("do it").await;
    let run = session.send("never mind, something else");
    let events = collect_events(&run).await;
    assert_eq!(run.outcome().await.status, OutcomeStatus::Done);
    assert!(names(&events).contains(&"clarification_dismissed"));
    assert!(session.pending_clarification().is_none());
    let messages = messages_of(&session).await;
    assert_transcript_valid(&messages);
    let seen = &f.provider.requests()[1];
    assert!(
        seen.messages
            .iter()
            .any(|m| m.text().starts_with("[Clarification dismissed]"))
    );
    assert_eq!(seen.messages.last().unwrap().text(), "never mind, something else");
}

#[tokio::test]
async fn a_parked_question_survives_a_restart() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let id;
    let question;
    {
        let f = fixture(vec![asking("confirm", json!({}))], store.clone());
        let session = f.agent.create_session().await.unwrap();
        id = session.id().clone();
        question = session.send("do it").await.clarification.unwrap();
        // The first agent and everything it held in memory go away.
    }
    let f = fixture(vec![ScriptedReply::text("Done after restart.")], store.clone());
    let session = f.agent.open_session(&id).await.unwrap();
    let pending = session.pending_clarification().expect("restored from the store");
    assert_eq!(pending.id, question.id);
    // The parked call was not "repaired" as interrupted.
    let messages = messages_of(&session).await;
    assert!(!messages.iter().any(|m| m.text().starts_with("interrupted")));
    let outcome = session
        .answer_clarification(&question.id, "yes")
        .unwrap()
        .outcome()
        .await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    assert_eq!(outcome.final_text.as_deref(), Some("Done after restart."));
    assert!(store.parked_run(&id).await.unwrap().is_none());
    assert_transcript_valid(&messages_of(&session).await);
}

#[tokio::test]
async fn a_question_cut_by_the_tool_call_cap_still_gets_a_result() {
    let provider = ScriptedProvider::new([asking("confirm", json!({}))
        .with_call("ask_clarification", json!({"kind": "input", "question": "And?"}))
        .into()]);
    let agent = Agent::builder()
        .provider(provider)
        .clarification(true)
        .config(agent_core::AgentConfig {
            max_tool_calls: Some(1),
            ..agent_core::AgentConfig::default()
        })
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let outcome = session.send("ask twice").await;
    assert_eq!(outcome.status, OutcomeStatus::Capped);
    assert!(session.pending_clarification().is_none());
    assert_transcript_valid(&messages_of(&session).await);
}
