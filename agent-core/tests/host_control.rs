//! What hosts that poll see and control: `RunStatus::last_message` follows the streamed text,
//! the host dismisses a pending question, and the tool-call cap (12 per turn by default, `null`
//! for unlimited) ends the turn with its own message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::{
    Agent, AgentConfig, AgentEvent, ClarificationError, DEFAULT_MAX_TOOL_CALLS, EventKind, MemoryStore, OutcomeStatus,
    Role, RunState, ScriptStep, ScriptedProvider, ScriptedReply, ToolContext, ToolError, tool_fn,
};
use common::{assert_transcript_valid, messages_of, tool_results};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

fn counting(counter: Arc<AtomicUsize>) -> impl agent_core::Tool {
    tool_fn("step", "Does one step.", move |_: NoArgs, _cx: ToolContext| {
        let counter = counter.clone();
        async move {
            // Each step's result differs, so the loop guard sees progress, not a repeat.
            let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
            Ok::<_, ToolError>(format!("stepped {n}"))
        }
    })
}

/// `n` model replies that each call the tool once, then a final text.
fn steps(n: usize) -> Vec<ScriptStep> {
    (0..n)
        .map(|_| ScriptedReply::tool_call("step", json!({})).into())
        .chain([ScriptedReply::text("all steps done").into()])
        .collect()
}

#[tokio::test]
async fn last_message_follows_the_text_while_it_streams() {
    let provider = ScriptedProvider::new([
        ScriptedReply::text("First I look.").with_call("step", json!({})).into(),
        ScriptStep::Hang("The answer is growing word by word".into()),
    ]);
    let agent = Agent::builder()
        .provider(provider)
        .tool(counting(Arc::default()))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let run = session.send("go");
    // The second model call streams its words and never finishes: a host polling the status
    // sees the text so far, not the first call's message.
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let status = run.status();
        if let Some(text) = status.last_message.clone()
            && seen.last() != Some(&text)
        {
            seen.push(text);
        }
        if seen.last().map(String::as_str) == Some("The answer is growing word by word") {
            assert_eq!(status.state, RunState::Thinking);
            assert_eq!(status.iteration, 2);
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the status never showed the streamed text: {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    // Every value polled is the first message or a prefix of the streamed one: the new call's
    // first piece replaced the old message, later pieces were appended.
    for text in &seen {
        assert!(
            text == "First I look." || "The answer is growing word by word".starts_with(text.as_str()),
            "{seen:?}"
        );
    }
    run.cancel();
    assert_eq!(run.outcome().await.status, OutcomeStatus::Cancelled);
}

#[tokio::test]
async fn last_message_is_the_final_text_once_the_turn_is_done() {
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([ScriptedReply::text("Done and dusted.").into()]))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let run = session.send("go");
    run.outcome().await;
    assert_eq!(run.status().last_message.as_deref(), Some("Done and dusted."));
}

#[tokio::test]
async fn the_default_tool_call_cap_is_12_and_ends_with_its_own_message() {
    assert_eq!(AgentConfig::default().max_tool_calls, Some(12));
    assert_eq!(DEFAULT_MAX_TOOL_CALLS, 12);
    let counter = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder()
        .provider(ScriptedProvider::new(steps(13)))
        .tool(counting(counter.clone()))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let run = session.send("take many steps");
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, OutcomeStatus::Capped);
    assert_eq!(counter.load(Ordering::SeqCst), 12);
    let message = "Reached maximum tool call limit (12 per turn)";
    assert_eq!(outcome.final_text.as_deref(), Some(message));
    assert_eq!(run.status().last_message.as_deref(), Some(message));
    let messages = messages_of(&session).await;
    assert_eq!(messages.last().unwrap().role, Role::Assistant);
    assert_eq!(messages.last().unwrap().text(), message);
    assert!(!messages.iter().any(|m| m.text() == "Reached maximum iteration limit"));
    assert!(tool_results(&messages).last().unwrap().0.contains("tool-call cap"));
    assert_transcript_valid(&messages);
}

#[tokio::test]
async fn a_null_tool_call_cap_is_unlimited() {
    let config: AgentConfig = serde_json::from_value(json!({"max_tool_calls": null})).unwrap();
    assert_eq!(config.max_tool_calls, None);
    let defaulted: AgentConfig = serde_json::from_value(json!({})).unwrap();
    assert_eq!(defaulted.max_tool_calls, Some(12));
    let counter = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder()
        .provider(ScriptedProvider::new(steps(20)))
        .tool(counting(counter.clone()))
        .config(config)
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let outcome = session.send("take many steps").await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    assert_eq!(counter.load(Ordering::SeqCst), 20);
    assert_eq!(outcome.final_text.as_deref(), Some("all steps done"));
}

#[tokio::test]
async fn the_iteration_cap_keeps_its_own_message() {
    let agent = Agent::builder()
        .provider(ScriptedProvider::new(steps(5)))
        .tool(counting(Arc::default()))
        .config(AgentConfig {
            max_iterations: 3,
            ..AgentConfig::default()
        })
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let outcome = session.send("go").await;
    assert_eq!(outcome.status, OutcomeStatus::Capped);
    assert_eq!(outcome.final_text.as_deref(), Some("Reached maximum iteration limit"));
}

#[tokio::test]
async fn the_host_dismisses_a_pending_question() {
    let provider = Arc::new(
        ScriptedProvider::new([
            ScriptedReply::tool_call(
                "ask_clarification",
                json!({"kind": "choice", "question": "Which file?", "options": ["a.txt", "b.txt"]}),
            )
            .into(),
            ScriptedReply::text("Fine, I will not open either.").into(),
        ])
        .record_requests(),
    );
    let observed: Arc<Mutex<Vec<AgentEvent>>> = Arc::default();
    let o = observed.clone();
    let agent = Agent::builder()
        .provider_arc(provider.clone())
        .store(MemoryStore::new())
        .clarification(true)
        .on_event(move |e| o.lock().unwrap().push(e.clone()))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let outcome = session.send("open the file").await;
    assert_eq!(outcome.status, OutcomeStatus::AwaitingUser);
    let question = outcome.clarification.unwrap();

    assert!(matches!(
        session.dismiss_clarification("not-a-question").await,
        Err(ClarificationError::NotPending(_))
    ));
    assert!(
        session.pending_clarification().is_some(),
        "a wrong id dismisses nothing"
    );
    session.dismiss_clarification(&question.id).await.unwrap();
    assert!(session.pending_clarification().is_none());
    assert!(observed.lock().unwrap().iter().any(|e| matches!(
        &e.kind,
        EventKind::ClarificationDismissed { clarification_id, reason }
            if *clarification_id == question.id && reason == "dismissed by the host"
    )));
    // Dismissed means gone: neither an answer nor a second dismissal is accepted.
    assert!(matches!(
        session.answer_clarification(&question.id, "a.txt"),
        Err(ClarificationError::NotPending(_))
    ));
    assert!(matches!(
        session.dismiss_clarification(&question.id).await,
        Err(ClarificationError::NotPending(_))
    ));
    let messages = messages_of(&session).await;
    assert_transcript_valid(&messages);

    // The next message is sent as usual; the model reads the dismissal as the question's result.
    let outcome = session.send("never mind").await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    let seen = &provider.requests()[1];
    let result = seen.messages.iter().find(|m| m.role == Role::Tool).unwrap();
    assert_eq!(
        result.text(),
        "[Clarification dismissed]: the person dismissed the question without answering"
    );
    assert!(result.is_error);
}

/// A tool that always says the same thing, like a search that finds nothing.
fn same_answer(counter: Arc<AtomicUsize>) -> impl agent_core::Tool {
    tool_fn("search", "Searches.", move |_: NoArgs, _cx: ToolContext| {
        let counter = counter.clone();
        async move {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok::<_, ToolError>("no results")
        }
    })
}

#[tokio::test]
async fn a_call_repeated_with_the_same_result_gets_a_note_then_ends_the_turn_capped() {
    assert_eq!(AgentConfig::default().max_repeated_calls, 3);
    let counter = Arc::new(AtomicUsize::new(0));
    let calls: Vec<ScriptStep> = (0..6)
        .map(|_| ScriptedReply::tool_call("search", json!({})).into())
        .chain([ScriptedReply::text("never reached").into()])
        .collect();
    let provider = Arc::new(ScriptedProvider::new(calls).record_requests());
    let agent = Agent::builder()
        .provider_arc(provider.clone())
        .tool(same_answer(counter.clone()))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let run = session.send("find it");
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, OutcomeStatus::Capped);
    let message =
        "Stopped: search was called with the same arguments 4 times in a row and got the same result each time";
    assert_eq!(outcome.final_text.as_deref(), Some(message));
    assert_eq!(run.status().last_message.as_deref(), Some(message));
    assert_eq!(counter.load(Ordering::SeqCst), 4);
    assert_eq!(provider.call_count(), 4);
    // The model read the note with the third result, before it repeated the call again.
    let seen = provider.requests();
    let third = seen[3].messages.last().unwrap();
    assert!(third.text().starts_with("no results"), "{}", third.text());
    assert!(
        third
            .text()
            .contains("[note from the runtime: you called search with the same arguments 3 times")
    );
    let messages = messages_of(&session).await;
    assert_eq!(messages.last().unwrap().text(), message);
    assert_transcript_valid(&messages);
}

#[tokio::test]
async fn the_loop_guard_can_be_turned_off() {
    let counter = Arc::new(AtomicUsize::new(0));
    let calls: Vec<ScriptStep> = (0..6)
        .map(|_| ScriptedReply::tool_call("search", json!({})).into())
        .chain([ScriptedReply::text("gave up").into()])
        .collect();
    let config: AgentConfig = serde_json::from_value(json!({"max_repeated_calls": 0})).unwrap();
    let agent = Agent::builder()
        .provider(ScriptedProvider::new(calls))
        .tool(same_answer(counter.clone()))
        .config(config)
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let outcome = session.send("find it").await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    assert_eq!(counter.load(Ordering::SeqCst), 6);
    let messages = messages_of(&session).await;
    assert!(!messages.iter().any(|m| m.text().contains("note from the runtime")));
}
