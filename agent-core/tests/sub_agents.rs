//! Sub-agents: an agent offered to another as a tool answers with its final text, what it
//! spent is in the calling turn's outcome (usage and a breakdown per tool), it acts for whoever
//! started the calling turn, cancelling the calling turn cancels it, and depth is capped.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::{
    Agent, CancellationToken, GateDecision, GateRequest, Message, ModelRequest, OutcomeStatus, Role, ScriptStep,
    ScriptedProvider, ScriptedReply, ToolContext, ToolError, TurnOrigin, Usage, agent_tool, gate_fn, tool_fn,
};
use serde_json::json;

/// Calls `tool` once with `task`, then answers with what it returned.
fn caller(tool: &'static str, task: &'static str) -> ScriptedProvider {
    ScriptedProvider::from_fn(move |req: &ModelRequest| {
        match req.messages.iter().rev().find(|m| m.role == Role::Tool) {
            None => ScriptStep::Reply(ScriptedReply::tool_call(tool, json!({ "task": task }))),
            Some(result) => ScriptStep::Reply(ScriptedReply::text(format!("heard: {}", result.text()))),
        }
    })
}

fn answering(text: &'static str, input_tokens: u64) -> ScriptedProvider {
    ScriptedProvider::from_fn(move |_req: &ModelRequest| {
        let mut reply = ScriptedReply::text(text);
        reply.usage = Some(Usage {
            input_tokens,
            output_tokens: 1,
            ..Usage::default()
        });
        ScriptStep::Reply(reply)
    })
}

#[tokio::test]
async fn a_sub_agent_answers_and_its_usage_is_in_the_callers_outcome() {
    let researcher = Agent::builder().provider(answering("Paris", 100)).build().unwrap();
    let lead = Agent::builder()
        .provider(caller("ask_researcher", "capital of France?"))
        .tool(agent_tool("ask_researcher", "Ask the researcher.", researcher))
        .build()
        .unwrap();
    let outcome = lead.create_session().await.unwrap().send("go").await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{outcome:?}");
    assert_eq!(outcome.final_text.as_deref(), Some("heard: Paris"));
    assert_eq!(outcome.sub_agents.len(), 1);
    let spent = &outcome.sub_agents[0];
    assert_eq!(
        (spent.tool.as_str(), spent.calls, spent.iterations),
        ("ask_researcher", 1, 1)
    );
    assert_eq!(spent.usage.input_tokens, 100);
    assert!(
        outcome.usage.input_tokens >= 100,
        "the sub-agent's tokens count in the turn's usage"
    );
    let json = serde_json::to_value(&outcome).unwrap();
    assert_eq!(json["sub_agents"][0]["tool"], "ask_researcher");
}

#[tokio::test]
async fn sub_agents_nest_only_as_deep_as_allowed() {
    let leaf = Agent::builder().provider(answering("leaf", 1)).build().unwrap();
    let middle = Agent::builder()
        .provider(caller("leaf", "go on"))
        .tool(agent_tool("leaf", "The leaf.", leaf).max_depth(1))
        .build()
        .unwrap();
    let top = Agent::builder()
        .provider(caller("middle", "go"))
        .tool(agent_tool("middle", "The middle.", middle))
        .build()
        .unwrap();
    let outcome = top.create_session().await.unwrap().send("go").await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{outcome:?}");
    let text = outcome.final_text.unwrap();
    assert!(
        text.contains("leaf was not run: sub-agents nest at most 1 levels deep, and this call would be level 2"),
        "{text}"
    );
}

#[tokio::test]
async fn the_sub_agent_acts_for_whoever_started_the_turn() {
    let origins: Arc<Mutex<Vec<TurnOrigin>>> = Arc::default();
    let seen = origins.clone();
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct NoArgs {}
    let act = tool_fn("act", "Acts.", |_: NoArgs, _cx: ToolContext| async {
        Ok::<_, ToolError>("acted")
    })
    .gated(true);
    let worker = Agent::builder()
        .provider(caller("act", "x"))
        .tool(act)
        .gate(gate_fn(move |req: &GateRequest| {
            seen.lock().unwrap().push(req.origin.clone());
            std::future::ready(GateDecision::Allow)
        }))
        .build()
        .unwrap();
    let lead = Agent::builder()
        .provider(caller("worker", "do it"))
        .tool(agent_tool("worker", "The worker.", worker))
        .build()
        .unwrap();
    let from_tab = TurnOrigin::Tab {
        tab_id: Some("t-1".into()),
        handle: Some("ab12".into()),
    };
    let session = lead.create_session().await.unwrap();
    let outcome = session
        .send_from(Message::user("go"), from_tab.clone(), CancellationToken::new())
        .await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{outcome:?}");
    assert_eq!(
        *origins.lock().unwrap(),
        [from_tab],
        "the worker's gate sees the tab, not the person"
    );
}

#[tokio::test]
async fn cancelling_the_caller_cancels_the_sub_agent() {
    let slow = Arc::new(ScriptedProvider::new([ScriptStep::Hang("thinking".into())]));
    let worker = Agent::builder().provider_arc(slow.clone()).build().unwrap();
    let lead = Agent::builder()
        .provider(caller("worker", "think"))
        .tool(agent_tool("worker", "The worker.", worker))
        .build()
        .unwrap();
    let cancel = CancellationToken::new();
    let run = lead
        .create_session()
        .await
        .unwrap()
        .send_with_cancel(Message::user("go"), cancel.clone());
    tokio::time::timeout(Duration::from_secs(5), async {
        while slow.live_streams() == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the sub-agent started its model call");
    cancel.cancel();
    let outcome = tokio::time::timeout(Duration::from_secs(5), run).await.unwrap();
    assert_eq!(outcome.status, OutcomeStatus::Cancelled);
    tokio::time::timeout(Duration::from_secs(5), async {
        while slow.live_streams() > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the sub-agent's model call was dropped");
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)] // only its schema is used
struct City {
    name: String,
    population: u64,
}

/// A lead agent that asks `researcher`, offered as a typed `city` tool, once; its outcome.
async fn ask_for_a_city(researcher: Agent) -> agent_core::Outcome {
    let lead = Agent::builder()
        .provider(caller("city", "the capital of Norway?"))
        .tool(agent_tool("city", "Finds a city.", researcher).typed::<City>())
        .build()
        .unwrap();
    lead.create_session().await.unwrap().send("go").await
}

#[tokio::test]
async fn a_typed_sub_agent_answers_with_its_checked_json() {
    let reply = ScriptedReply::json(json!({"name": "Oslo", "population": 709000}));
    let provider = Arc::new(ScriptedProvider::new([reply.into()]).record_requests());
    let researcher = Agent::builder().provider_arc(provider.clone()).build().unwrap();
    let outcome = ask_for_a_city(researcher).await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{outcome:?}");
    let text = outcome.final_text.unwrap();
    let answer: serde_json::Value = serde_json::from_str(text.strip_prefix("heard: ").unwrap()).unwrap();
    assert_eq!(answer, json!({"name": "Oslo", "population": 709000}));
    let asked = provider.requests()[0].output_schema.clone().unwrap();
    assert_eq!(asked.name, "City");
}

#[tokio::test]
async fn a_typed_sub_agent_that_cannot_answer_in_shape_is_an_error_for_the_caller() {
    // Twice not a City: the corrective retry fails too.
    let wrong = || ScriptStep::Reply(ScriptedReply::json(json!({"name": 3})));
    let researcher = Agent::builder()
        .provider(ScriptedProvider::new([wrong(), wrong()]))
        .build()
        .unwrap();
    let outcome = ask_for_a_city(researcher).await;
    let text = outcome.final_text.unwrap();
    assert!(
        text.starts_with("heard: error: city failed: the final answer does not match the schema"),
        "{text}"
    );
}
