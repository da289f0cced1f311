//! The loop writes every message and tool-call state through the store as it is produced; a
//! second writer to the same session gets a conflict, never an interleaving.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use agent_core::{
    Agent, AgentConfig, MemoryStore, Message, OutcomeStatus, Role, ScriptStep, ScriptedProvider, ScriptedReply, Store,
    ToolCallState, ToolContext, ToolError, tool_fn,
};
use common::assert_transcript_valid;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

#[tokio::test]
async fn messages_and_tool_states_are_stored_as_they_happen() {
    let started = Arc::new(tokio::sync::Notify::new());
    let release = Arc::new(tokio::sync::Notify::new());
    let (s, r) = (started.clone(), release.clone());
    let slow = tool_fn("slow", "Waits for the test.", move |_a: NoArgs, _cx: ToolContext| {
        let (s, r) = (s.clone(), r.clone());
        async move {
            s.notify_one();
            r.notified().await;
            Ok::<_, ToolError>(json!({"rows": (0..20).collect::<Vec<_>>()}))
        }
    });
    let store = Arc::new(MemoryStore::new());
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([
            ScriptedReply::tool_call("slow", json!({})).into(),
            ScriptedReply::text("done").into(),
        ]))
        .tool(slow)
        .store_arc(store.clone())
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let run = session.send("go");
    started.notified().await;
    // While the tool runs, the user message and the assistant's call are already stored.
    let stored = store.load_messages(session.id(), 0).await.unwrap();
    assert_eq!(stored.iter().map(|m| m.seq).collect::<Vec<_>>(), vec![1, 2]);
    assert_eq!(stored[1].message.tool_calls.len(), 1);
    let records = store.tool_calls(session.id()).await.unwrap();
    assert_eq!(records[0].state, ToolCallState::Running);
    release.notify_one();
    assert_eq!(run.outcome().await.status, OutcomeStatus::Done);
    let records = store.tool_calls(session.id()).await.unwrap();
    assert_eq!(records[0].state, ToolCallState::Succeeded);
    assert!(records[0].raw_result.as_deref().unwrap().contains("19"));
    let compressed: serde_json::Value = serde_json::from_str(records[0].compressed_result.as_deref().unwrap()).unwrap();
    assert_eq!(compressed["rows"]["_count"], 20);
    let stored: Vec<Message> = store
        .load_messages(session.id(), 0)
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.message)
        .collect();
    assert_eq!(stored.len(), 4);
    assert_eq!(stored[3].role, Role::Assistant);
    assert_transcript_valid(&stored);
}

#[tokio::test]
async fn a_second_writer_gets_a_conflict() {
    let started = Arc::new(tokio::sync::Notify::new());
    let release = Arc::new(tokio::sync::Notify::new());
    let (s, r) = (started.clone(), release.clone());
    let slow = tool_fn("slow", "Waits.", move |_a: NoArgs, _cx: ToolContext| {
        let (s, r) = (s.clone(), r.clone());
        async move {
            s.notify_one();
            r.notified().await;
            Ok::<_, ToolError>("ok")
        }
    });
    let store = Arc::new(MemoryStore::new());
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([
            ScriptedReply::tool_call("slow", json!({})).into()
        ]))
        .tool(slow)
        .store_arc(store.clone())
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let run = session.send("go");
    started.notified().await;
    // Another writer appends seq 3 behind the loop's back.
    store
        .append_messages(session.id(), 3, &[Message::user("intruder")])
        .await
        .unwrap();
    release.notify_one();
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, OutcomeStatus::Error);
    assert_eq!(outcome.error_kind, Some(agent_core::ErrorKind::Store));
    assert!(outcome.error.unwrap().contains("sequence conflict"));
    // Nothing was interleaved: the intruder's message is seq 3 and nothing followed it.
    let stored = store.load_messages(session.id(), 0).await.unwrap();
    assert_eq!(stored.len(), 3);
    assert_eq!(stored[2].message.text(), "intruder");
}

#[tokio::test]
async fn the_model_call_timeout_ends_the_turn_with_an_error() {
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([ScriptStep::Delay(
            Duration::from_secs(3600),
            Box::new(ScriptedReply::text("late").into()),
        )]))
        .config(AgentConfig {
            model_timeout: Duration::from_millis(50),
            ..AgentConfig::default()
        })
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let outcome = session.send("hi").await;
    assert_eq!(outcome.status, OutcomeStatus::Error);
    assert_eq!(
        outcome.error_kind,
        Some(agent_core::ErrorKind::Provider(agent_core::ProviderErrorKind::Timeout))
    );
}

#[tokio::test]
async fn a_truncated_stream_is_an_error_not_an_answer() {
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([ScriptStep::Events(vec![Ok(
            agent_core::StreamEvent::TextDelta {
                text: "half an ans".into(),
            },
        )])]))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let outcome = session.send("hi").await;
    assert_eq!(outcome.status, OutcomeStatus::Error);
    assert_eq!(
        outcome.error_kind,
        Some(agent_core::ErrorKind::Provider(
            agent_core::ProviderErrorKind::Malformed
        ))
    );
    let stored = session.messages().await.unwrap();
    assert_eq!(stored.len(), 1, "the partial answer is not stored");
}

#[tokio::test]
async fn sessions_reopen_with_their_history() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let first = Agent::builder()
        .provider(ScriptedProvider::new([ScriptedReply::text("first answer").into()]))
        .store_arc(store.clone())
        .build()
        .unwrap();
    let session = first.create_session().await.unwrap();
    session.send("first question").await;
    let id = session.id().clone();
    drop((session, first));
    let provider = Arc::new(ScriptedProvider::new([ScriptedReply::text("second answer").into()]).record_requests());
    let second = Agent::builder()
        .provider_arc(provider.clone())
        .store_arc(store)
        .build()
        .unwrap();
    let session = second.open_session(&id).await.unwrap();
    session.send("second question").await;
    let seen: Vec<String> = provider.requests()[0].messages.iter().map(Message::text).collect();
    assert_eq!(seen, vec!["first question", "first answer", "second question"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn turns_sent_back_to_back_run_in_the_order_they_were_sent() {
    let provider = ScriptedProvider::from_fn(|req: &agent_core::ModelRequest| {
        let last = req.messages.last().map(Message::text).unwrap_or_default();
        ScriptStep::Reply(ScriptedReply::text(format!("answer to {last}")))
    });
    let agent = Agent::builder()
        .provider(provider)
        .store(MemoryStore::new())
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let runs: Vec<_> = (0..30).map(|i| session.send(format!("message {i}"))).collect();
    for run in runs {
        assert_eq!(run.outcome().await.status, OutcomeStatus::Done);
    }
    let users: Vec<String> = session
        .messages()
        .await
        .unwrap()
        .into_iter()
        .filter(|m| m.message.role == Role::User)
        .map(|m| m.message.text())
        .collect();
    assert_eq!(users, (0..30).map(|i| format!("message {i}")).collect::<Vec<_>>());
}
