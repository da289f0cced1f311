//! The cost a session keeps: its spend is stored, so a session opened again (by another agent
//! on the same store, as after a restart) reports and budgets what it had spent; a session
//! that was never priced reopens as unknown (the record's rules: `session_spend`'s unit tests). The summaries compaction asks for count in the
//! turn's usage and cost, and one that could pass a budget is not asked for (the request is
//! trimmed instead).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::{Arc, Mutex};

use agent_core::{
    Agent, AgentConfig, AgentEvent, CompactionConfig, EventKind, MemoryStore, ModelPrice, ModelRequest, OutcomeStatus,
    PriceTable, Role, ScriptStep, ScriptedProvider, ScriptedReply, Store, ToolContext, ToolError, Usage,
    session_key_prefix, tool_fn,
};
use common::{assert_transcript_valid, messages_of};
use schemars::JsonSchema;
use serde::Deserialize;

/// $0.01 per output token, input free.
fn prices() -> PriceTable {
    PriceTable::new().with("scripted", ModelPrice::new(0.0, 10_000.0))
}

fn output_tokens(n: u64) -> Usage {
    // No input tokens reported: compaction then estimates requests by their characters alone.
    Usage {
        output_tokens: n,
        ..Usage::default()
    }
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

fn answering(text: &'static str) -> ScriptedProvider {
    ScriptedProvider::from_fn(move |_: &ModelRequest| {
        ScriptStep::Reply(ScriptedReply::text(text).with_usage(output_tokens(10)))
    })
}

fn agent_on(store: &Arc<MemoryStore>, provider: ScriptedProvider, priced: bool, config: AgentConfig) -> Agent {
    let mut builder = Agent::builder()
        .provider(provider)
        .store_arc(store.clone())
        .config(config);
    if priced {
        builder = builder.prices(prices());
    }
    builder.build().unwrap()
}

fn session_budget(usd: f64) -> AgentConfig {
    AgentConfig {
        max_session_cost_usd: Some(usd),
        max_output_tokens: Some(1),
        ..AgentConfig::default()
    }
}

#[tokio::test]
async fn a_reopened_session_goes_on_from_what_it_spent() {
    let store = Arc::new(MemoryStore::new());
    let first = agent_on(&store, answering("one"), true, session_budget(0.105));
    let session = first.create_session().await.unwrap();
    let id = session.id().clone();
    assert_eq!(session.send("a").await.status, OutcomeStatus::Done);
    assert!(close(session.cost_usd(), 0.1));
    drop((session, first));

    // Another agent on the same store: the session's spend and its budget carry on.
    let second = agent_on(&store, answering("never"), true, session_budget(0.105));
    let session = second.open_session(&id).await.unwrap();
    assert!(close(session.cost_usd(), 0.1));
    let outcome = session.send("b").await;
    assert_eq!(outcome.status, OutcomeStatus::Capped);
    assert_eq!(outcome.iterations, 0);
    assert!(close(outcome.session_cost_usd, 0.1));
    assert_eq!(
        outcome.final_text.as_deref(),
        Some(
            "Stopped: the next model call (estimated $0.0100) would pass the session's budget of $0.105 ($0.1000 spent)"
        )
    );
    assert_transcript_valid(&messages_of(&session).await);

    // Deleting the session deletes its record.
    let key = format!("{}spend", session_key_prefix(&id));
    assert!(store.kv_get(&key).await.unwrap().is_some());
    store.delete_session(&id).await.unwrap();
    assert_eq!(store.kv_get(&key).await.unwrap(), None);
}

#[tokio::test]
async fn a_session_never_priced_reopens_unknown_and_writes_no_record() {
    let store = Arc::new(MemoryStore::new());
    let first = agent_on(&store, answering("hi"), false, AgentConfig::default());
    let answered = first.create_session().await.unwrap();
    assert_eq!(answered.send("a").await.status, OutcomeStatus::Done);
    let untouched = first.create_session().await.unwrap();
    let key = format!("{}spend", session_key_prefix(answered.id()));
    assert_eq!(
        store.kv_get(&key).await.unwrap(),
        None,
        "nothing priced, nothing written"
    );

    let second = agent_on(&store, answering("hi"), true, AgentConfig::default());
    assert_eq!(second.open_session(answered.id()).await.unwrap().cost_usd(), None);
    assert_eq!(second.open_session(untouched.id()).await.unwrap().cost_usd(), Some(0.0));
}

#[derive(Deserialize, JsonSchema)]
struct FetchArgs {
    page: String,
}

fn is_summary_request(request: &ModelRequest) -> bool {
    request
        .system
        .as_deref()
        .is_some_and(|s| s.starts_with("You compact conversations"))
}

/// Fetches the page a user message names, then answers; a summary costs 5 output tokens, any
/// other call 10.
fn fetching_model() -> ScriptedProvider {
    ScriptedProvider::from_fn(|request: &ModelRequest| {
        if is_summary_request(request) {
            return ScriptedReply::text("Pages were fetched and read.")
                .with_usage(output_tokens(5))
                .into();
        }
        let last = request.messages.last().unwrap();
        let reply = match last.role {
            Role::User => {
                let page = last.text().rsplit(' ').next().unwrap().to_owned();
                ScriptedReply::tool_call("fetch", serde_json::json!({ "page": page }))
            }
            _ => ScriptedReply::text("Read it."),
        };
        reply.with_usage(output_tokens(10)).into()
    })
    .record_requests()
}

/// Four turns that fetch a ~600-character page each, in a 1 000-token window: the fourth
/// compacts. Returns each turn's outcome and events, and the requests the model saw.
async fn four_fetching_turns(config: AgentConfig) -> (Vec<(agent_core::Outcome, Vec<AgentEvent>)>, Vec<ModelRequest>) {
    let provider = Arc::new(fetching_model());
    let fetch = tool_fn(
        "fetch",
        "Fetches a page.",
        |a: FetchArgs, _cx: ToolContext| async move {
            Ok::<_, ToolError>(format!("Page {}: {}", a.page, "words of the page. ".repeat(32)))
        },
    );
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let agent = Agent::builder()
        .provider_arc(provider.clone())
        .store_arc(Arc::new(MemoryStore::new()))
        .tool(fetch)
        .prices(prices())
        .config(AgentConfig {
            compaction: CompactionConfig {
                max_input_tokens: Some(1_000),
                summary_max_tokens: 100,
                ..CompactionConfig::default()
            },
            ..config
        })
        .on_event(move |e| sink.lock().unwrap().push(e.clone()))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let mut turns = Vec::new();
    for n in 1..=4 {
        let outcome = session.send(format!("Fetch page {n}")).await;
        assert_eq!(outcome.status, OutcomeStatus::Done, "{outcome:?}");
        turns.push((outcome, std::mem::take(&mut *events.lock().unwrap())));
    }
    (turns, provider.requests())
}

fn compaction_method(events: &[AgentEvent]) -> Option<String> {
    events.iter().find_map(|e| match &e.kind {
        EventKind::CompactionCompleted { method, .. } => Some(method.clone()),
        _ => None,
    })
}

#[tokio::test]
async fn compaction_summaries_count_in_the_turns_usage_and_cost() {
    let (turns, requests) = four_fetching_turns(AgentConfig::default()).await;
    assert_eq!(requests.iter().filter(|r| is_summary_request(r)).count(), 1);
    let (summarised, plain): (Vec<_>, Vec<_>) = turns
        .iter()
        .partition(|(_, events)| compaction_method(events).as_deref() == Some("summary"));
    assert_eq!(summarised.len(), 1, "one turn summarised");
    // Two calls of the turn ($0.20) and the summary ($0.05).
    let (outcome, _) = summarised[0];
    assert!(close(outcome.cost_usd, 0.25), "{:?}", outcome.cost_usd);
    assert_eq!(outcome.usage.output_tokens, 25);
    for (outcome, _) in plain {
        assert!(close(outcome.cost_usd, 0.2));
        assert_eq!(outcome.usage.output_tokens, 20);
    }
    let last = &turns[3].0;
    assert!(close(last.session_cost_usd, 0.85));
}

#[tokio::test]
async fn a_summary_that_could_pass_the_budget_is_not_asked_for() {
    // A summary may answer with 100 tokens ($1.00): past the run's $0.50. Each turn's own
    // calls (estimated at $0.01 each with max_output_tokens 1, costing $0.10) fit.
    let config = AgentConfig {
        max_run_cost_usd: Some(0.5),
        max_output_tokens: Some(1),
        ..AgentConfig::default()
    };
    let (turns, requests) = four_fetching_turns(config).await;
    assert!(requests.iter().all(|r| !is_summary_request(r)));
    let methods: Vec<_> = turns
        .iter()
        .filter_map(|(_, events)| compaction_method(events))
        .collect();
    assert!(!methods.is_empty(), "the window was exceeded");
    assert!(methods.iter().all(|m| m == "trim"), "{methods:?}");
    for (outcome, _) in &turns {
        assert!(close(outcome.cost_usd, 0.2));
    }
}
