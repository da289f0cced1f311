//! What compaction does to a provider's prompt cache, which keys on the request's prefix
//! (tools, system prompt, then messages): the system prompt and tools are the same in every
//! request, and each request's messages start with the previous request's messages, except
//! right after a compaction summary (the one place where the loop rewrites the prefix).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::Arc;

use agent_core::{
    Agent, AgentConfig, CompactionConfig, ModelRequest, OutcomeStatus, Role, ScriptStep, ScriptedProvider,
    ScriptedReply, ToolContext, ToolError, tool_fn,
};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct FetchArgs {
    /// Which page.
    page: String,
}

/// About 600 characters of plain text.
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

/// For a user message, fetch the page it names; after the result, answer. A summary request
/// gets a fixed summary.
fn answer(request: &ModelRequest) -> ScriptStep {
    if is_summary_request(request) {
        return ScriptedReply::text("The person asked to fetch pages; each was fetched and read.").into();
    }
    let last = request.messages.last().unwrap();
    match last.role {
        Role::User => {
            let page = last.text().rsplit(' ').next().unwrap().to_owned();
            ScriptedReply::tool_call("fetch", serde_json::json!({ "page": page })).into()
        }
        _ => ScriptedReply::text("Read it.").into(),
    }
}

async fn requests_of_a_conversation(turns: usize, max_input_tokens: u64) -> Vec<ModelRequest> {
    let provider = Arc::new(ScriptedProvider::from_fn(answer).record_requests());
    let fetch = tool_fn(
        "fetch",
        "Fetches a page.",
        |a: FetchArgs, _cx: ToolContext| async move { Ok::<_, ToolError>(page_text(&a.page)) },
    );
    let agent = Agent::builder()
        .provider_arc(provider.clone())
        .tool(fetch)
        .system_prompt("You fetch pages.")
        .config(AgentConfig {
            compaction: CompactionConfig {
                max_input_tokens: Some(max_input_tokens),
                summary_max_tokens: 100,
                ..CompactionConfig::default()
            },
            ..AgentConfig::default()
        })
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    for n in 1..=turns {
        let outcome = session.send(format!("Fetch page {n}")).await;
        assert_eq!(outcome.status, OutcomeStatus::Done, "{outcome:?}");
    }
    provider.requests()
}

/// For each conversation request after the first: whether its messages start with the
/// previous conversation request's messages, and whether a summary request came between.
fn prefix_kept(requests: &[ModelRequest]) -> Vec<(bool, bool)> {
    let mut out = Vec::new();
    let mut previous: Option<&ModelRequest> = None;
    let mut summarised = false;
    for request in requests {
        if is_summary_request(request) {
            summarised = true;
            continue;
        }
        if let Some(previous) = previous {
            assert_eq!(request.system, previous.system, "the system prompt never changes");
            assert_eq!(request.tools, previous.tools, "the tools never change");
            let kept = request.messages.len() >= previous.messages.len()
                && request.messages[..previous.messages.len()] == previous.messages[..];
            out.push((kept, summarised));
        }
        previous = Some(request);
        summarised = false;
    }
    out
}

#[tokio::test]
async fn without_compaction_every_request_extends_the_previous_one() {
    let requests = requests_of_a_conversation(4, 100_000).await;
    let kept = prefix_kept(&requests);
    assert_eq!(kept.len(), 4 * 2 - 1);
    assert!(kept.iter().all(|&(kept, summarised)| kept && !summarised), "{kept:?}");
}

#[tokio::test]
async fn only_a_compaction_summary_rewrites_the_prefix() {
    // ~180 tokens a turn against a 700-token budget: summaries every few turns.
    let requests = requests_of_a_conversation(8, 1_000).await;
    let summaries = requests.iter().filter(|r| is_summary_request(r)).count();
    assert!(summaries >= 2, "{summaries} summaries");
    let kept = prefix_kept(&requests);
    // The prefix breaks exactly at the requests that follow a summary, and only there.
    for (i, &(kept, summarised)) in kept.iter().enumerate() {
        assert_eq!(kept, !summarised, "request {} of the conversation", i + 1);
    }
    // After a summary the prefix is the summary message, stable until the next one.
    let after: Vec<&ModelRequest> = requests.iter().filter(|r| !is_summary_request(r)).collect();
    let last = after.last().unwrap();
    assert!(last.messages[0].text().starts_with(agent_core::SUMMARY_PREFIX));
}
