//! insta snapshots: the event sequence of a two-iteration run, what the model is sent, and JSON
//! compression of nested, long-array and long-string inputs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::Arc;

use agent_core::{
    Agent, AllowAll, CompressionConfig, MemoryStore, ScriptedProvider, ScriptedReply, SessionId, ToolContext,
    ToolError, compress_json, tool_fn,
};
use common::collect_events;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct LookupArgs {
    /// What to look up.
    query: String,
}

#[tokio::test]
async fn event_sequence_of_a_two_iteration_run() {
    let lookup = tool_fn(
        "lookup",
        "Looks something up.",
        |a: LookupArgs, _cx: ToolContext| async move { Ok::<_, ToolError>(json!({"query": a.query, "answer": 42})) },
    )
    .parallel_safe(true);
    let provider = Arc::new(
        ScriptedProvider::new([
            ScriptedReply::tool_call("lookup", json!({"query": "meaning"}))
                .with_text("Checking. ")
                .with_reasoning("The user wants the meaning.")
                .into(),
            ScriptedReply::text("The answer is 42.").into(),
        ])
        .record_requests(),
    );
    let agent = Agent::builder()
        .provider_arc(provider.clone())
        .tool(lookup)
        .store(MemoryStore::new())
        .gate(AllowAll)
        .system_prompt("You are a test agent.")
        .build()
        .unwrap();
    let id = SessionId::parse("00000000-0000-4000-8000-000000000001").unwrap();
    let session = agent.create_session_with_id(id).await.unwrap();
    let run = session.send("What is the meaning?");
    let events = collect_events(&run).await;
    insta::assert_json_snapshot!("two_iteration_events", events, {
        "[].run_id" => "[run_id]",
        "[].duration_ms" => "[duration]",
    });
    // What the model saw on its second call: system prompt, history with the tool result, tools.
    insta::assert_json_snapshot!("second_request", provider.requests()[1]);
}

#[test]
fn compression_of_nested_objects() {
    let input = json!({"a": {"b": {"c": {"d": {"e": {"f": {"g": 1}}, "e2": 2}}}}, "keep": true});
    insta::assert_json_snapshot!("compress_nested", compress_json(&input, &CompressionConfig::default()));
}

#[test]
fn compression_of_long_arrays() {
    let input = json!({"short": [1, 2, 3, 4, 5], "long": (0..13).collect::<Vec<_>>(), "objects": (0..7).map(|i| json!({"id": i})).collect::<Vec<_>>()});
    insta::assert_json_snapshot!("compress_arrays", compress_json(&input, &CompressionConfig::default()));
}

#[test]
fn compression_of_long_strings() {
    let long: String = (0..700).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
    let unicode = "é".repeat(600);
    let input = json!({"long": long, "unicode": unicode, "short": "hello", "n": 3.5, "b": false, "z": null});
    insta::assert_json_snapshot!("compress_strings", compress_json(&input, &CompressionConfig::default()));
}
