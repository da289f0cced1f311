//! Compaction through the loop: the trigger under and over the budget, the cursor, the
//! summary the model sees, the summary failing three times, the summary request not fitting,
//! and `ContextOverflow` from the provider. insta snapshots show exactly what the model sees
//! before and after a compaction.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::{Arc, Mutex};

use agent_core::{
    Agent, AgentConfig, AgentEvent, CompactionConfig, EventKind, MemoryStore, Message, ModelRequest, OutcomeStatus,
    ProviderError, Role, ScriptStep, ScriptedProvider, ScriptedReply, Store, TokenEstimator, ToolContext, ToolError,
    tool_fn,
};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct FetchArgs {
    /// Which page.
    page: String,
}

/// A plain-text page of about 600 characters (plain text is not JSON-compressed).
fn page_text(page: &str) -> String {
    let mut text = format!("Page {page}: ");
    while text.len() < 600 {
        text.push_str(&format!("line {} of page {page}. ", text.len() / 20));
    }
    text
}

fn is_summary_request(request: &ModelRequest) -> bool {
    request
        .system
        .as_deref()
        .is_some_and(|s| s.starts_with("You compact conversations"))
}

/// `value` as JSON with every untrusted-content nonce replaced by `[nonce]`, for snapshots.
fn without_nonces(value: &impl serde::Serialize) -> serde_json::Value {
    fn walk(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::String(s) => {
                let mut out = String::with_capacity(s.len());
                let mut rest = s.as_str();
                while let Some(i) = rest.find("nonce=\"") {
                    let (head, tail) = rest.split_at(i + 7);
                    out.push_str(head);
                    out.push_str("[nonce]");
                    rest = &tail[tail.find('"').unwrap_or(0)..];
                }
                out.push_str(rest);
                *s = out;
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(walk),
            serde_json::Value::Object(map) => map.values_mut().for_each(walk),
            _ => {}
        }
    }
    let mut json = serde_json::to_value(value).unwrap();
    walk(&mut json);
    json
}

#[derive(Clone, Copy)]
enum SummaryBehaviour {
    Works,
    Fails,
}

/// The model: for a user message, fetch the page it names; after the result, answer. Summary
/// requests get a fixed summary, or an error.
fn answer(summary: SummaryBehaviour, request: &ModelRequest) -> ScriptStep {
    if is_summary_request(request) {
        return match summary {
            SummaryBehaviour::Works => {
                ScriptedReply::text("The person asked to fetch pages 1, 2 and 3; each was fetched and read.").into()
            }
            SummaryBehaviour::Fails => ScriptStep::Error(ProviderError::Transport("connection reset".into())),
        };
    }
    let last = request.messages.last().unwrap();
    match last.role {
        Role::User => {
            let page = last.text().rsplit(' ').next().unwrap().to_owned();
            ScriptedReply::tool_call("fetch", serde_json::json!({ "page": page })).into()
        }
        _ => ScriptedReply::text(format!("Read {}.", last.tool_name.clone().unwrap_or_default())).into(),
    }
}

fn model(summary: SummaryBehaviour) -> ScriptedProvider {
    ScriptedProvider::from_fn(move |request: &ModelRequest| answer(summary, request)).record_requests()
}

fn config(max_input_tokens: u64) -> AgentConfig {
    AgentConfig {
        compaction: CompactionConfig {
            max_input_tokens: Some(max_input_tokens),
            // Small windows for small tests: room for the summary request.
            summary_max_tokens: 100,
            ..CompactionConfig::default()
        },
        ..AgentConfig::default()
    }
}

struct Harness {
    agent: Agent,
    provider: Arc<ScriptedProvider>,
    store: Arc<MemoryStore>,
    events: Arc<Mutex<Vec<AgentEvent>>>,
}

fn harness(summary: SummaryBehaviour, max_input_tokens: u64) -> Harness {
    let provider = Arc::new(model(summary));
    let store = Arc::new(MemoryStore::new());
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let fetch = tool_fn(
        "fetch",
        "Fetches a page.",
        |a: FetchArgs, _cx: ToolContext| async move { Ok::<_, ToolError>(page_text(&a.page)) },
    );
    let agent = Agent::builder()
        .provider_arc(provider.clone())
        .store_arc(store.clone())
        .tool(fetch)
        .system_prompt("You fetch pages.")
        .config(config(max_input_tokens))
        .on_event(move |e| sink.lock().unwrap().push(e.clone()))
        .build()
        .unwrap();
    Harness {
        agent,
        provider,
        store,
        events,
    }
}

fn compaction_events(events: &Mutex<Vec<AgentEvent>>) -> Vec<EventKind> {
    events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::CompactionRunning { .. } | EventKind::CompactionCompleted { .. }
            )
        })
        .map(|e| e.kind.clone())
        .collect()
}

fn estimate(request: &ModelRequest) -> u64 {
    TokenEstimator::default().request(request)
}

/// Every tool call in the request has exactly one result right after it.
fn assert_calls_answered(messages: &[Message]) {
    for (i, m) in messages.iter().enumerate() {
        for call in &m.tool_calls {
            let answers = messages[i + 1..]
                .iter()
                .take_while(|r| r.role == Role::Tool)
                .filter(|r| r.tool_call_id.as_deref() == Some(call.id.as_str()))
                .count();
            assert_eq!(answers, 1, "call {} separated from its result", call.id);
        }
        if m.role == Role::Tool {
            assert!(
                i > 0 && (messages[i - 1].role == Role::Tool || !messages[i - 1].tool_calls.is_empty()),
                "orphan tool result at {i}"
            );
        }
    }
    assert_eq!(
        messages.first().map(|m| m.role),
        Some(Role::User),
        "starts with a user message"
    );
}

#[tokio::test]
async fn under_the_budget_nothing_is_compacted() {
    let h = harness(SummaryBehaviour::Works, 100_000);
    let session = h.agent.create_session().await.unwrap();
    for n in 1..=4 {
        assert_eq!(
            session.send(format!("Fetch page {n}")).await.status,
            OutcomeStatus::Done
        );
    }
    assert!(compaction_events(&h.events).is_empty());
    assert!(h.provider.requests().iter().all(|r| !is_summary_request(r)));
    assert!(h.store.latest_compaction(session.id()).await.unwrap().is_none());
    assert_eq!(h.provider.requests().last().unwrap().messages.len(), 15);
}

#[tokio::test]
async fn over_the_budget_older_turns_are_summarised_and_the_cursor_recorded() {
    // Four turns of ~180 tokens each; the budget is 0.7 x 1000 = 700 tokens.
    let h = harness(SummaryBehaviour::Works, 1_000);
    let session = h.agent.create_session().await.unwrap();
    for n in 1..=4 {
        let outcome = session.send(format!("Fetch page {n}")).await;
        assert_eq!(outcome.status, OutcomeStatus::Done, "{outcome:?}");
    }
    let requests = h.provider.requests();
    let summary_at = requests
        .iter()
        .position(is_summary_request)
        .expect("a summary was requested");
    assert_eq!(requests.iter().filter(|r| is_summary_request(r)).count(), 1);

    // Before: the last request sent in full. After: the first request after the summary.
    let before = &requests[summary_at - 1];
    let after = &requests[summary_at + 1];
    let budget = 700;
    assert!(estimate(before) <= budget, "the request before was under the budget");
    assert!(estimate(after) <= budget, "the request after fits: {}", estimate(after));
    insta::assert_json_snapshot!("model_sees_before_compaction", before.messages);
    insta::assert_json_snapshot!("summary_request", without_nonces(&requests[summary_at]));
    insta::assert_json_snapshot!("model_sees_after_compaction", after.messages);
    assert_calls_answered(&after.messages);
    assert!(after.messages[0].text().contains("The person asked to fetch pages"));

    // The cursor: turns 1 to 3 (4 messages each) are covered, turn 4 is kept in full.
    let compaction = h.store.latest_compaction(session.id()).await.unwrap().unwrap();
    assert_eq!(compaction.cursor, 12);
    assert_eq!(after.messages.len(), 1 + 3, "summary + the current turn so far");
    assert_eq!(after.messages[1].text(), "Fetch page 4");

    // Everything stays stored and visible to the person.
    let all = session.messages().await.unwrap();
    assert_eq!(all.len(), 16);
    assert!(all.iter().all(|m| m.message.visibility.user));

    let events = compaction_events(&h.events);
    assert!(
        matches!(events[0], EventKind::CompactionRunning { budget_tokens: 700, .. }),
        "{events:?}"
    );
    assert!(
        matches!(&events[1], EventKind::CompactionCompleted { method, .. } if method == "summary"),
        "{events:?}"
    );

    // A new process (a new agent on the same store) resumes from the summary and the cursor.
    let provider = Arc::new(ScriptedProvider::new([ScriptedReply::text("ok").into()]).record_requests());
    let resumed = Agent::builder()
        .provider_arc(provider.clone())
        .store_arc(h.store.clone())
        .config(config(1_000))
        .build()
        .unwrap();
    let again = resumed.open_session(session.id()).await.unwrap();
    assert_eq!(again.send("Anything else?").await.status, OutcomeStatus::Done);
    let seen = &provider.requests()[0].messages;
    insta::assert_json_snapshot!("model_sees_after_resume", seen);
    assert!(seen[0].text().starts_with(agent_core::SUMMARY_PREFIX));
    assert_eq!(seen.len(), 1 + 4 + 1, "summary, turn 4, the new message");
}

#[tokio::test]
async fn summary_failing_three_times_falls_back_to_the_trim() {
    let h = harness(SummaryBehaviour::Fails, 1_000);
    let session = h.agent.create_session().await.unwrap();
    for n in 1..=5 {
        let outcome = session.send(format!("Fetch page {n}")).await;
        assert_eq!(
            outcome.status,
            OutcomeStatus::Done,
            "the conversation is never bricked: {outcome:?}"
        );
    }
    let requests = h.provider.requests();
    let summaries = requests.iter().filter(|r| is_summary_request(r)).count();
    // Three attempts in turn 4, never more. In turn 5 the transcript of four turns (each result
    // wrapped as untrusted data) no longer fits beside the summary's output budget, so the
    // trim works alone without asking.
    assert_eq!(summaries, 3);
    for r in requests.iter().filter(|r| !is_summary_request(r)) {
        assert!(estimate(r) <= 700, "every request fits: {}", estimate(r));
        assert_calls_answered(&r.messages);
    }
    assert!(
        h.store.latest_compaction(session.id()).await.unwrap().is_none(),
        "no cursor without a summary"
    );
    let events = compaction_events(&h.events);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, EventKind::CompactionCompleted { method, .. } if method == "trim"))
    );
    let last = requests.iter().rev().find(|r| !is_summary_request(r)).unwrap();
    insta::assert_json_snapshot!("model_sees_after_trim", last.messages);
}

#[tokio::test]
async fn a_summary_request_that_would_not_fit_falls_back_to_the_trim() {
    // A window so small that the summary request itself (transcript + 150 output tokens)
    // cannot fit: the model is never asked, the trim does the job.
    let h = harness(SummaryBehaviour::Works, 400);
    let session = h.agent.create_session().await.unwrap();
    for n in 1..=3 {
        let outcome = session.send(format!("Fetch page {n}")).await;
        assert_eq!(outcome.status, OutcomeStatus::Done, "{outcome:?}");
    }
    let requests = h.provider.requests();
    assert!(
        requests.iter().all(|r| !is_summary_request(r)),
        "no summary request was sent"
    );
    for r in &requests {
        assert!(estimate(r) <= 280, "fits 0.7 x 400: {}", estimate(r));
        assert_calls_answered(&r.messages);
    }
    assert!(
        compaction_events(&h.events)
            .iter()
            .any(|e| matches!(e, EventKind::CompactionCompleted { method, .. } if method == "trim"))
    );
}

#[tokio::test]
async fn context_overflow_from_the_provider_shrinks_and_retries() {
    // The configured window is huge, but the "real" model refuses anything over 500 tokens.
    let refusals = Arc::new(Mutex::new(0u32));
    let counter = refusals.clone();
    let provider = Arc::new(
        ScriptedProvider::from_fn(move |request: &ModelRequest| {
            if !is_summary_request(request) && estimate(request) > 500 {
                *counter.lock().unwrap() += 1;
                return ScriptStep::Error(ProviderError::ContextOverflow("prompt is too long".into()));
            }
            answer(SummaryBehaviour::Fails, request)
        })
        .record_requests(),
    );
    let fetch = tool_fn(
        "fetch",
        "Fetches a page.",
        |a: FetchArgs, _cx: ToolContext| async move { Ok::<_, ToolError>(page_text(&a.page)) },
    );
    let agent = Agent::builder()
        .provider_arc(provider.clone())
        .store(MemoryStore::new())
        .tool(fetch)
        .config(config(1_000_000))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    for n in 1..=5 {
        let outcome = session.send(format!("Fetch page {n}")).await;
        assert_eq!(outcome.status, OutcomeStatus::Done, "turn {n}: {outcome:?}");
    }
    assert!(*refusals.lock().unwrap() >= 1, "the provider refused at least once");
    let last = provider
        .requests()
        .into_iter()
        .rev()
        .find(|r| !is_summary_request(r))
        .unwrap();
    assert!(estimate(&last) <= 500);
    assert_calls_answered(&last.messages);
}
