//! Cost and budgets: each model call's cost is in its `model_call_completed` event, the turn's
//! in the outcome (sub-agents included), the session's in the outcome and on the session; an
//! unknown price is `None`; a run or session budget ends the turn `capped`, with its own
//! message, before a call that could pass it (estimated from the request), and a budget
//! without a price refuses to build.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::{Arc, Mutex};

use agent_core::{
    Agent, AgentConfig, AgentError, EventKind, Message, ModelPrice, ModelRequest, OutcomeStatus, PriceTable, Role,
    ScriptStep, ScriptedProvider, ScriptedReply, ToolContext, ToolError, Usage, agent_tool, tool_fn,
};
use common::{assert_transcript_valid, messages_of};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// $0.01 per output token, input free: a call that reports 10 output tokens costs $0.10, and
/// the budget's estimate of a call with `max_output_tokens: 1` is exactly $0.01.
fn prices() -> PriceTable {
    PriceTable::new().with("scripted", ModelPrice::new(0.0, 10_000.0))
}

fn ten_tokens() -> Usage {
    Usage {
        input_tokens: 50,
        output_tokens: 10,
        ..Usage::default()
    }
}

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    text: String,
}

fn echo() -> impl agent_core::Tool {
    tool_fn("echo", "Echoes text.", |args: EchoArgs, _cx: ToolContext| async move {
        Ok::<_, ToolError>(args.text)
    })
}

/// Calls `echo` with a new text each time (so the repeat guard stays quiet), reporting ten
/// output tokens per call.
fn echoing_forever() -> ScriptedProvider {
    ScriptedProvider::from_fn(|req: &ModelRequest| {
        let n = req.messages.iter().filter(|m| m.role == Role::Tool).count();
        ScriptStep::Reply(
            ScriptedReply::tool_call("echo", json!({ "text": format!("hi {n}") })).with_usage(ten_tokens()),
        )
    })
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

fn budget(run: Option<f64>, session: Option<f64>) -> AgentConfig {
    AgentConfig {
        max_run_cost_usd: run,
        max_session_cost_usd: session,
        max_output_tokens: Some(1),
        ..AgentConfig::default()
    }
}

#[tokio::test]
async fn each_call_the_run_and_the_session_carry_their_cost() {
    let provider = ScriptedProvider::new([
        ScriptedReply::tool_call("echo", json!({"text": "a"}))
            .with_usage(ten_tokens())
            .into(),
        ScriptedReply::text("done").with_usage(ten_tokens()).into(),
        ScriptedReply::text("again").with_usage(ten_tokens()).into(),
    ]);
    let costs = Arc::new(Mutex::new(Vec::new()));
    let seen = costs.clone();
    let agent = Agent::builder()
        .provider(provider)
        .tool(echo())
        .prices(prices())
        .on_event(move |event| {
            if let EventKind::ModelCallCompleted { cost_usd, .. } = &event.kind {
                seen.lock().unwrap().push(*cost_usd);
            }
        })
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    assert_eq!(session.cost_usd(), Some(0.0));
    let first = session.send("go").await;
    assert_eq!(first.status, OutcomeStatus::Done);
    assert!(close(first.cost_usd, 0.2), "{:?}", first.cost_usd);
    assert!(close(first.session_cost_usd, 0.2));
    let second = session.send("more").await;
    assert!(close(second.cost_usd, 0.1));
    assert!(close(second.session_cost_usd, 0.3));
    assert!(close(session.cost_usd(), 0.3));
    let costs = costs.lock().unwrap().clone();
    assert_eq!(costs.len(), 3);
    assert!(costs.iter().all(|c| close(*c, 0.1)), "{costs:?}");
    // As data, the outcome and the event carry `cost_usd`.
    let json = serde_json::to_value(&second).unwrap();
    assert!((json["cost_usd"].as_f64().unwrap() - 0.1).abs() < 1e-9);
    assert!((json["session_cost_usd"].as_f64().unwrap() - 0.3).abs() < 1e-9);
}

#[tokio::test]
async fn an_unknown_price_is_none_never_a_guess() {
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([ScriptedReply::text("hi")
            .with_usage(ten_tokens())
            .into()]))
        .build()
        .unwrap();
    assert!(agent.prices().price("scripted").is_none());
    assert!(agent.prices().price("gpt-4o").is_some(), "the built-in table is there");
    let session = agent.create_session().await.unwrap();
    let run = session.send("go");
    let events = common::collect_events(&run).await;
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    assert_eq!(outcome.cost_usd, None);
    assert_eq!(outcome.session_cost_usd, None);
    assert_eq!(session.cost_usd(), None);
    let completed = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ModelCallCompleted { cost_usd, .. } => Some(*cost_usd),
            _ => None,
        })
        .unwrap();
    assert_eq!(completed, None);
    let json = serde_json::to_value(&outcome).unwrap();
    assert!(json["cost_usd"].is_null());
}

#[tokio::test]
async fn a_run_budget_stops_before_the_call_that_could_pass_it() {
    let agent = Agent::builder()
        .provider(echoing_forever())
        .tool(echo())
        .prices(prices())
        .config(budget(Some(0.205), None))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let run = session.send("go");
    let events = common::collect_events(&run).await;
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, OutcomeStatus::Capped);
    // Two calls ($0.20); a third could cost $0.01 more: past $0.205.
    assert_eq!(outcome.iterations, 2);
    assert!(close(outcome.cost_usd, 0.2));
    let message =
        "Stopped: the next model call (estimated $0.0100) would pass the run's budget of $0.205 ($0.2000 spent)";
    assert_eq!(outcome.final_text.as_deref(), Some(message));
    assert_eq!(outcome.error, None);
    assert!(matches!(events.last().unwrap().kind, EventKind::RunCapped { .. }));
    assert_eq!(run.status().last_message.as_deref(), Some(message));
    // Every call has its result, and the budget's message ends the transcript.
    let messages = messages_of(&session).await;
    assert_transcript_valid(&messages);
    let last = messages.last().unwrap();
    assert_eq!(last.role, Role::Assistant);
    assert_eq!(last.text(), message);
    // The session goes on: the next turn has a budget of its own.
    let next = session.send("go on").await;
    assert_eq!(next.status, OutcomeStatus::Capped);
    assert!(close(next.session_cost_usd, 0.4));
}

#[tokio::test]
async fn a_session_budget_counts_earlier_turns() {
    let provider = ScriptedProvider::new([
        ScriptedReply::text("one").with_usage(ten_tokens()).into(),
        ScriptedReply::text("never").with_usage(ten_tokens()).into(),
    ]);
    let agent = Agent::builder()
        .provider(provider)
        .prices(prices())
        .config(budget(None, Some(0.105)))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let first = session.send("a").await;
    assert_eq!(first.status, OutcomeStatus::Done);
    let second = session.send("b").await;
    assert_eq!(second.status, OutcomeStatus::Capped);
    assert_eq!(second.iterations, 0);
    assert!(close(second.cost_usd, 0.0));
    assert!(close(second.session_cost_usd, 0.1));
    assert_eq!(
        second.final_text.as_deref(),
        Some(
            "Stopped: the next model call (estimated $0.0100) would pass the session's budget of $0.105 ($0.1000 spent)"
        )
    );
    assert_transcript_valid(&messages_of(&session).await);
    // Another session of the same agent starts from nothing.
    let other = agent.create_session().await.unwrap();
    let outcome = other.send("c").await;
    assert_eq!(outcome.final_text.as_deref(), Some("never"));
}

#[tokio::test]
async fn the_estimate_grows_with_the_request() {
    // $0.001 per input token, output free: a request of about 1000 tokens is about $1.
    let provider = || ScriptedProvider::new([ScriptedReply::text("ok").into()]);
    let config = AgentConfig {
        max_run_cost_usd: Some(0.5),
        ..AgentConfig::default()
    };
    let table = PriceTable::new().with("scripted", ModelPrice::new(1000.0, 0.0));
    let agent = Agent::builder()
        .provider(provider())
        .prices(table.clone())
        .config(config.clone())
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let long = session.send_message(Message::user("word ".repeat(800))).await;
    assert_eq!(long.status, OutcomeStatus::Capped);
    assert!(
        long.final_text
            .unwrap()
            .starts_with("Stopped: the next model call (estimated $")
    );
    let agent = Agent::builder()
        .provider(provider())
        .prices(table)
        .config(config)
        .build()
        .unwrap();
    let short = agent.create_session().await.unwrap().send("hi").await;
    assert_eq!(short.status, OutcomeStatus::Done);
}

#[tokio::test]
async fn a_budget_without_a_price_refuses_to_build() {
    let error = Agent::builder()
        .provider(ScriptedProvider::new([]))
        .config(budget(Some(1.0), None))
        .build()
        .unwrap_err();
    assert!(
        matches!(&error, AgentError::Unpriced(model) if model == "scripted"),
        "{error}"
    );
    assert!(error.to_string().contains("price of model \"scripted\" is unknown"));
    // As data: prices and budgets are options like any other.
    let config: AgentConfig = serde_json::from_value(json!({
        "max_run_cost_usd": 1.0,
        "prices": {"scripted": {"input": 1.0, "output": 2.0}}
    }))
    .unwrap();
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([]))
        .config(config)
        .build()
        .unwrap();
    assert_eq!(agent.prices().price("scripted"), Some(&ModelPrice::new(1.0, 2.0)));
}

#[tokio::test]
async fn a_sub_agents_cost_is_in_the_callers_outcome() {
    let researcher = Agent::builder()
        .provider(ScriptedProvider::from_fn(|_req: &ModelRequest| {
            ScriptStep::Reply(ScriptedReply::text("Paris").with_usage(ten_tokens()))
        }))
        .prices(prices())
        .build()
        .unwrap();
    let lead_provider = ScriptedProvider::from_fn(|req: &ModelRequest| {
        if req.messages.iter().any(|m| m.role == Role::Tool) {
            ScriptStep::Reply(ScriptedReply::text("It is Paris.").with_usage(ten_tokens()))
        } else {
            ScriptStep::Reply(
                ScriptedReply::tool_call("ask", json!({"task": "capital of France"})).with_usage(ten_tokens()),
            )
        }
    });
    let lead = Agent::builder()
        .provider(lead_provider)
        .tool(agent_tool("ask", "Ask the researcher.", researcher))
        .prices(PriceTable::new().with("scripted", ModelPrice::new(0.0, 20_000.0)))
        .build()
        .unwrap();
    let session = lead.create_session().await.unwrap();
    let outcome = session.send("capital?").await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    // Two lead calls at $0.20 and one sub-agent call at $0.10, priced by each agent's table.
    assert!(close(outcome.cost_usd, 0.5), "{:?}", outcome.cost_usd);
    assert!(close(outcome.sub_agents[0].cost_usd, 0.1));
    assert!(close(session.cost_usd(), 0.5));
}
