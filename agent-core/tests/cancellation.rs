//! Cancellation: while the provider streams forever, while a tool sleeps, while the gate waits.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use agent_core::{
    Agent, GateDecision, GateRequest, Message, OutcomeStatus, RunState, ScriptStep, ScriptedProvider, ScriptedReply,
    ToolCallState, ToolContext, ToolError, gate_fn, tool_fn,
};
use common::{assert_transcript_valid, messages_of, tool_results};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

/// Sets its flag when dropped: proves the tool's future was dropped, not left running.
struct DropGuard(Arc<AtomicBool>);
impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn cancel_while_the_provider_streams_forever() {
    let provider = Arc::new(ScriptedProvider::new([ScriptStep::Hang("thinking about it ".into())]));
    let agent = Agent::builder().provider_arc(provider.clone()).build().unwrap();
    let session = agent.create_session().await.unwrap();
    let run = session.send("hi");
    // Wait until the stream is live.
    while provider.live_streams() == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let started = Instant::now();
    run.cancel();
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, OutcomeStatus::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(provider.live_streams(), 0, "the model stream was dropped");
    assert_eq!(run.status().state, RunState::Cancelled);
    let messages = messages_of(&session).await;
    assert_eq!(
        messages.len(),
        1,
        "only the user message: nothing half-streamed is stored"
    );
    assert_transcript_valid(&messages);
}

#[tokio::test]
async fn cancel_while_a_tool_sleeps_drops_the_tool_future() {
    let dropped = Arc::new(AtomicBool::new(false));
    let started = Arc::new(tokio::sync::Notify::new());
    let (d, s) = (dropped.clone(), started.clone());
    let sleeper = tool_fn("sleep", "Sleeps.", move |_a: NoArgs, _cx: ToolContext| {
        let guard = DropGuard(d.clone());
        let s = s.clone();
        async move {
            let _guard = guard;
            s.notify_one();
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok::<_, ToolError>("woke")
        }
    });
    let store = Arc::new(agent_core::MemoryStore::new());
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([ScriptedReply::tool_call("sleep", json!({}))
            .with_call("sleep", json!({}))
            .into()]))
        .tool(sleeper)
        .store_arc(store.clone())
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let run = session.send("sleep");
    started.notified().await;
    let t = Instant::now();
    run.cancel();
    let outcome = run.outcome().await;
    assert!(t.elapsed() < Duration::from_secs(5));
    assert_eq!(outcome.status, OutcomeStatus::Cancelled);
    assert!(dropped.load(Ordering::SeqCst), "the tool future was dropped");
    let messages = messages_of(&session).await;
    assert_transcript_valid(&messages);
    let results = tool_results(&messages);
    assert!(results[0].0.starts_with("cancelled"), "{results:?}");
    assert!(results[1].0.starts_with("not run"), "{results:?}");
    let records = agent_core::Store::tool_calls(store.as_ref(), session.id())
        .await
        .unwrap();
    assert!(
        records.iter().all(|r| r.state == ToolCallState::Cancelled),
        "{records:?}"
    );
}

#[tokio::test]
async fn cancel_while_the_gate_waits() {
    let gated = tool_fn("rm", "Deletes.", |_a: NoArgs, _cx: ToolContext| async move {
        Ok::<_, ToolError>("deleted")
    })
    .gated(true);
    let asked = Arc::new(tokio::sync::Notify::new());
    let a = asked.clone();
    let agent = Agent::builder()
        .provider(ScriptedProvider::new(
            [ScriptedReply::tool_call("rm", json!({})).into()],
        ))
        .tool(gated)
        .gate(gate_fn(move |_r: &GateRequest| {
            a.notify_one();
            async move {
                std::future::pending::<()>().await;
                GateDecision::Allow
            }
        }))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let run = session.send("rm");
    asked.notified().await;
    run.cancel();
    assert_eq!(run.outcome().await.status, OutcomeStatus::Cancelled);
    let messages = messages_of(&session).await;
    assert_transcript_valid(&messages);
    assert!(tool_results(&messages)[0].0.contains("cancelled"));
}

#[tokio::test]
async fn an_already_cancelled_token_ends_the_turn_at_once() {
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([ScriptedReply::text("never").into()]))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let token = agent_core::CancellationToken::new();
    token.cancel();
    let run = session.send_with_cancel(Message::user("hi"), token);
    assert_eq!(run.outcome().await.status, OutcomeStatus::Cancelled);
}

#[tokio::test]
async fn the_session_stays_usable_after_a_cancel() {
    let provider = ScriptedProvider::new([ScriptStep::Hang(String::new()), ScriptedReply::text("second").into()]);
    let agent = Agent::builder().provider(provider).build().unwrap();
    let session = agent.create_session().await.unwrap();
    let run = session.send("one");
    tokio::time::sleep(Duration::from_millis(20)).await;
    run.cancel();
    assert_eq!(run.outcome().await.status, OutcomeStatus::Cancelled);
    let outcome = session.send("two").await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    assert_eq!(outcome.final_text.as_deref(), Some("second"));
}
