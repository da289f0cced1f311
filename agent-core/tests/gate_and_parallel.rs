//! The consent gate (allow, deny, absent, tell-the-model) and parallel tool execution.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_core::{
    Agent, AgentConfig, AllowAll, DenialPolicy, GateDecision, GateRequest, OutcomeStatus, ScriptedProvider,
    ScriptedReply, ToolContext, ToolError, gate_fn, tool_fn,
};
use common::{Log, assert_transcript_valid, collect_events, messages_of, names, tool_results};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct PathArgs {
    /// The file to delete.
    path: String,
}

fn delete_tool(effects: Log) -> impl agent_core::Tool {
    tool_fn(
        "fs_delete",
        "Deletes a file.",
        move |args: PathArgs, _cx: ToolContext| {
            let effects = effects.clone();
            async move {
                effects.push(format!("deleted {}", args.path));
                Ok::<_, ToolError>("deleted")
            }
        },
    )
    .gated(true)
}

fn script() -> ScriptedProvider {
    ScriptedProvider::new([
        ScriptedReply::tool_call("fs_delete", json!({"path": "/tmp/x"})).into(),
        ScriptedReply::text("done").into(),
    ])
}

#[tokio::test]
async fn gate_allows() {
    let effects = Log::default();
    let seen = Log::default();
    let s = seen.clone();
    let agent = Agent::builder()
        .provider(script())
        .tool(delete_tool(effects.clone()))
        .gate(gate_fn(move |r: &GateRequest| {
            s.push(format!("{} {}", r.tool, r.arguments));
            async { GateDecision::Allow }
        }))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    assert_eq!(session.send("delete").await.status, OutcomeStatus::Done);
    assert_eq!(effects.entries(), vec!["deleted /tmp/x"]);
    assert_eq!(seen.entries(), vec![r#"fs_delete {"path":"/tmp/x"}"#]);
}

#[tokio::test]
async fn gate_denies_and_the_side_effect_never_happens() {
    let effects = Log::default();
    let agent = Agent::builder()
        .provider(script())
        .tool(delete_tool(effects.clone()))
        .gate(gate_fn(|_r: &GateRequest| async { GateDecision::deny("not today") }))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let run = session.send("delete");
    let events = collect_events(&run).await;
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, OutcomeStatus::Denied);
    assert!(outcome.error.unwrap().contains("not today"));
    assert!(effects.entries().is_empty());
    assert!(names(&events).contains(&"tool_call_denied"));
    let messages = messages_of(&session).await;
    assert_transcript_valid(&messages);
    assert!(tool_results(&messages)[0].0.starts_with("denied"));
}

#[tokio::test]
async fn no_gate_means_gated_tools_never_run() {
    let effects = Log::default();
    let agent = Agent::builder()
        .provider(script())
        .tool(delete_tool(effects.clone()))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let outcome = session.send("delete").await;
    assert_eq!(outcome.status, OutcomeStatus::Denied);
    assert!(effects.entries().is_empty());
    assert!(outcome.error.unwrap().contains("no consent gate"));
}

#[tokio::test]
async fn tell_model_policy_lets_the_model_continue() {
    let effects = Log::default();
    let agent = Agent::builder()
        .provider(script())
        .tool(delete_tool(effects.clone()))
        .config(AgentConfig {
            on_denial: DenialPolicy::TellModel,
            ..AgentConfig::default()
        })
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let outcome = session.send("delete").await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    assert!(effects.entries().is_empty());
}

#[tokio::test]
async fn free_tools_do_not_ask_the_gate() {
    let asked = Arc::new(AtomicUsize::new(0));
    let a = asked.clone();
    let free = tool_fn("fs_read", "Reads.", |_a: PathArgs, _cx: ToolContext| async move {
        Ok::<_, ToolError>("x")
    });
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([
            ScriptedReply::tool_call("fs_read", json!({"path": "a"})).into(),
            ScriptedReply::text("ok").into(),
        ]))
        .tool(free)
        .gate(gate_fn(move |_r: &GateRequest| {
            a.fetch_add(1, Ordering::SeqCst);
            async { GateDecision::deny("no") }
        }))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    assert_eq!(session.send("read").await.status, OutcomeStatus::Done);
    assert_eq!(asked.load(Ordering::SeqCst), 0);
}

#[derive(Deserialize, JsonSchema)]
struct SlowArgs {
    /// Which call this is.
    n: u32,
    /// How long to sleep, in ms.
    ms: u64,
}

#[derive(Default)]
struct Concurrency {
    now: AtomicUsize,
    peak: AtomicUsize,
}

fn slow_tool(name: &'static str, parallel: bool, c: Arc<Concurrency>) -> impl agent_core::Tool {
    tool_fn(
        name,
        "Sleeps, then returns its number.",
        move |a: SlowArgs, _cx: ToolContext| {
            let c = c.clone();
            async move {
                let now = c.now.fetch_add(1, Ordering::SeqCst) + 1;
                c.peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(a.ms)).await;
                c.now.fetch_sub(1, Ordering::SeqCst);
                Ok::<_, ToolError>(format!("result {}", a.n))
            }
        },
    )
    .parallel_safe(parallel)
}

#[tokio::test]
async fn five_parallel_safe_tools_run_at_most_three_at_once_in_call_order() {
    let c = Arc::new(Concurrency::default());
    // Later calls are faster, so completion order differs from call order.
    let mut reply = ScriptedReply::default();
    for n in 0..5u32 {
        reply = reply.with_call("slow", json!({"n": n, "ms": 150 - 25 * n as u64}));
    }
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([reply.into(), ScriptedReply::text("ok").into()]))
        .tool(slow_tool("slow", true, c.clone()))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    assert_eq!(session.send("go").await.status, OutcomeStatus::Done);
    assert_eq!(c.peak.load(Ordering::SeqCst), 3, "limit 3 reached but never exceeded");
    let messages = messages_of(&session).await;
    let results: Vec<String> = tool_results(&messages).into_iter().map(|r| r.0).collect();
    assert_eq!(results, (0..5).map(|n| format!("result {n}")).collect::<Vec<_>>());
    assert_transcript_valid(&messages);
}

#[tokio::test]
async fn sequential_tools_run_one_at_a_time() {
    let c = Arc::new(Concurrency::default());
    let mut reply = ScriptedReply::default();
    for n in 0..3u32 {
        reply = reply.with_call("slow", json!({"n": n, "ms": 30}));
    }
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([reply.into(), ScriptedReply::text("ok").into()]))
        .tool(slow_tool("slow", false, c.clone()))
        .gate(AllowAll)
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    assert_eq!(session.send("go").await.status, OutcomeStatus::Done);
    assert_eq!(c.peak.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn replaced_tools_are_offered_and_dispatched_on_the_next_model_call() {
    let provider = Arc::new(
        ScriptedProvider::new([
            ScriptedReply::text("no tools yet").into(),
            ScriptedReply::tool_call("added", json!({"path": "p"})).into(),
            ScriptedReply::text("used the new tool").into(),
        ])
        .record_requests(),
    );
    let agent = Agent::builder()
        .provider_arc(provider.clone())
        .clarification(true)
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    session.send("one").await;
    let mut tools = agent_core::ToolSet::new();
    tools
        .register(tool_fn(
            "added",
            "Added later.",
            |a: PathArgs, _cx: ToolContext| async move { Ok::<_, ToolError>(format!("read {}", a.path)) },
        ))
        .unwrap();
    agent.replace_tools(tools).unwrap();
    let outcome = session.send("two").await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    let offered = |i: usize| {
        provider.requests()[i]
            .tools
            .iter()
            .map(|t| t.name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(offered(0), vec!["ask_clarification"]);
    assert_eq!(offered(1), vec!["added", "ask_clarification"]);
    let messages = messages_of(&session).await;
    assert_eq!(tool_results(&messages), vec![("read p".to_owned(), false)]);
}
