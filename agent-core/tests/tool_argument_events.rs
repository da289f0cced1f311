//! `tool_call_arguments_delta`: with `stream_tool_arguments` the pieces of a call's arguments
//! are events, in order, naming the call and its tool; without it (the default) there are none.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use agent_core::{Agent, AgentConfig, EventKind, ScriptedProvider, ScriptedReply, ToolContext, ToolError, tool_fn};
use common::collect_events;
use serde_json::json;

fn agent(stream_tool_arguments: bool) -> Agent {
    let echo = tool_fn(
        "echo",
        "Echoes.",
        |args: serde_json::Value, _cx: ToolContext| async move { Ok::<_, ToolError>(args.to_string()) },
    );
    Agent::builder()
        .provider(ScriptedProvider::new([
            ScriptedReply::tool_call("echo", json!({"text": "a fairly long argument", "n": 7})).into(),
            ScriptedReply::text("done").into(),
        ]))
        .tool(echo)
        .config(AgentConfig {
            stream_tool_arguments,
            ..AgentConfig::default()
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn argument_pieces_are_events_in_order_when_asked_for() {
    assert!(!AgentConfig::default().stream_tool_arguments);
    let session = agent(true).create_session().await.unwrap();
    let run = session.send("go");
    let events = collect_events(&run).await;
    let mut call = None;
    let mut text = String::new();
    for e in &events {
        if let EventKind::ToolCallArgumentsDelta { call_id, name, delta } = &e.kind {
            assert_eq!(name, "echo");
            assert!(call.get_or_insert_with(|| call_id.clone()) == call_id, "one call");
            text.push_str(delta);
        }
    }
    let pieces = events
        .iter()
        .filter(|e| e.kind.name() == "tool_call_arguments_delta")
        .count();
    assert!(pieces >= 2, "the scripted stream splits the arguments in two: {pieces}");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&text).unwrap(),
        json!({"text": "a fairly long argument", "n": 7})
    );
    // The deltas come before the call runs, with the id it runs under.
    let first_delta = events
        .iter()
        .position(|e| e.kind.name() == "tool_call_arguments_delta")
        .unwrap();
    let started = events
        .iter()
        .position(|e| e.kind.name() == "tool_call_started")
        .unwrap();
    assert!(first_delta < started);
    match &events[started].kind {
        EventKind::ToolCallStarted { call_id, .. } => assert_eq!(Some(call_id), call.as_ref()),
        other => panic!("{other:?}"),
    }
    assert_eq!(run.outcome().await.final_text.as_deref(), Some("done"));
}

#[tokio::test]
async fn there_are_none_by_default() {
    let session = agent(false).create_session().await.unwrap();
    let run = session.send("go");
    let events = collect_events(&run).await;
    assert!(!events.iter().any(|e| e.kind.name() == "tool_call_arguments_delta"));
}
