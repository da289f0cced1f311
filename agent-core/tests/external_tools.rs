//! External tools (run by the host, such as an AG-UI client's frontend tools): a call parks the
//! turn `awaiting_tools`, the host's results continue it; a message mixing an agent tool and an
//! external one runs the former and parks on the latter; results that do not fit are refused;
//! a new message dismisses the calls; a second agent on the same store picks them up.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::Arc;

use agent_core::{
    Agent, ExternalTool, ExternalToolError, ExternalToolResult, MemoryStore, Message, OutcomeStatus, RunState,
    ScriptedProvider, ScriptedReply, Store, ToolContext, ToolError, tool_fn,
};
use agent_core::{DriveOptions, TurnStart};
use common::{Log, assert_transcript_valid, collect_events, messages_of, names, tool_results};
use serde_json::json;

/// The client's tool: shows a confirmation dialog in the browser.
fn confirm_tool() -> ExternalTool {
    ExternalTool::new(
        "confirm_dialog",
        "Asks the person to confirm in the page.",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    )
}

/// An agent with one tool of its own (`note`, which logs), on `store`.
fn agent(provider: Arc<ScriptedProvider>, store: Arc<dyn Store>, log: &Log) -> Agent {
    let log = log.clone();
    let note = tool_fn("note", "Notes.", move |_: serde_json::Value, _cx: ToolContext| {
        let log = log.clone();
        async move {
            log.push("note");
            Ok::<_, ToolError>("noted")
        }
    });
    Agent::builder()
        .provider_arc(provider)
        .tool(note)
        .store_arc(store)
        .build()
        .unwrap()
}

fn provider(replies: Vec<ScriptedReply>) -> Arc<ScriptedProvider> {
    Arc::new(ScriptedProvider::new(replies.into_iter().map(Into::into)).record_requests())
}

#[tokio::test]
async fn a_call_of_an_external_tool_parks_the_turn_and_the_results_continue_it() {
    let p = provider(vec![
        ScriptedReply::text("Let me ask.").with_call("confirm_dialog", json!({"text": "Delete it?"})),
        ScriptedReply::text("Deleted, as confirmed."),
    ]);
    let log = Log::default();
    let agent = agent(p.clone(), Arc::new(MemoryStore::new()), &log);
    let session = agent.create_session().await.unwrap();
    let run = session
        .send_with_tools(Message::user("delete the draft"), vec![confirm_tool()])
        .unwrap();
    let events = collect_events(&run).await;
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, OutcomeStatus::AwaitingTools, "{:?}", outcome.error);
    assert_eq!(run.status().state, RunState::AwaitingTools);
    let pending = outcome
        .external_calls
        .clone()
        .map(|b| *b)
        .expect("the pending calls are in the outcome");
    assert_eq!(pending.calls.len(), 1);
    assert_eq!(pending.calls[0].name, "confirm_dialog");
    assert_eq!(pending.calls[0].arguments, json!({"text": "Delete it?"}));
    assert_eq!(session.pending_tool_calls(), Some(pending.clone()));
    // The call goes to the host as started, and nothing ends it in this run.
    assert!(names(&events).contains(&"tool_call_started"));
    assert!(!names(&events).contains(&"tool_call_succeeded"));
    // The model was offered the agent's tool and the external one.
    let offered: Vec<String> = p.requests()[0].tools.iter().map(|t| t.name.clone()).collect();
    assert_eq!(offered, vec!["note", "confirm_dialog"]);

    let call_id = pending.calls[0].call_id.clone();
    let resumed = session
        .submit_tool_results(&pending.id, [ExternalToolResult::ok(&call_id, "confirmed")])
        .unwrap();
    let events = collect_events(&resumed).await;
    let outcome = resumed.outcome().await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert_eq!(outcome.final_text.as_deref(), Some("Deleted, as confirmed."));
    assert!(names(&events).contains(&"tool_call_succeeded"));
    assert!(session.pending_tool_calls().is_none());
    // The continued turn offers the external tool again, and the model read the result.
    let second = &p.requests()[1];
    assert!(second.tools.iter().any(|t| t.name == "confirm_dialog"));
    assert_eq!(tool_results(&second.messages), vec![("confirmed".to_owned(), false)]);
    // Answered once: a second submission is refused.
    assert!(matches!(
        session.submit_tool_results(&pending.id, [ExternalToolResult::ok(&call_id, "again")]),
        Err(ExternalToolError::NotPending(_))
    ));
    assert_transcript_valid(&messages_of(&session).await);
}

#[tokio::test]
async fn a_message_with_an_agent_tool_and_an_external_one_runs_the_first_and_parks_on_the_second() {
    let p = provider(vec![
        ScriptedReply::tool_call("note", json!({})).with_call("confirm_dialog", json!({"text": "OK?"})),
        ScriptedReply::text("Done."),
    ]);
    let log = Log::default();
    let agent = agent(p.clone(), Arc::new(MemoryStore::new()), &log);
    let session = agent.create_session().await.unwrap();
    let run = session
        .send_with_tools(Message::user("note it and confirm"), vec![confirm_tool()])
        .unwrap();
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, OutcomeStatus::AwaitingTools, "{:?}", outcome.error);
    assert_eq!(log.entries(), vec!["note"], "the agent's own tool ran");
    let pending = *outcome.external_calls.unwrap();
    assert_eq!(pending.calls.len(), 1);
    assert_eq!(pending.calls[0].name, "confirm_dialog");
    // The agent tool's result is stored; the external call's waits.
    assert_eq!(
        tool_results(&messages_of(&session).await),
        vec![("noted".to_owned(), false)]
    );

    let call_id = pending.calls[0].call_id.clone();
    let outcome = session
        .submit_tool_results(
            &pending.id,
            [ExternalToolResult::error(&call_id, "the person closed the page")],
        )
        .unwrap()
        .outcome()
        .await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    let messages = messages_of(&session).await;
    assert_eq!(
        tool_results(&messages),
        vec![
            ("noted".to_owned(), false),
            ("the person closed the page".to_owned(), true)
        ]
    );
    assert_transcript_valid(&messages);
}

#[tokio::test]
async fn results_that_do_not_fit_are_refused_and_the_calls_stay_pending() {
    let p = provider(vec![
        ScriptedReply::tool_call("confirm_dialog", json!({"text": "A?"}))
            .with_call("confirm_dialog", json!({"text": "B?"})),
        ScriptedReply::text("Both answered."),
    ]);
    let agent = agent(p, Arc::new(MemoryStore::new()), &Log::default());
    let session = agent.create_session().await.unwrap();
    let outcome = session
        .send_with_tools(Message::user("confirm twice"), vec![confirm_tool()])
        .unwrap()
        .outcome()
        .await;
    let pending = *outcome.external_calls.unwrap();
    assert_eq!(pending.calls.len(), 2);
    let (a, b) = (pending.calls[0].call_id.clone(), pending.calls[1].call_id.clone());

    assert!(matches!(
        session.submit_tool_results(&pending.id, [ExternalToolResult::ok(&a, "yes")]),
        Err(ExternalToolError::MissingResult(id)) if id == b
    ));
    assert!(matches!(
        session.submit_tool_results(
            &pending.id,
            [
                ExternalToolResult::ok(&a, "yes"),
                ExternalToolResult::ok(&b, "yes"),
                ExternalToolResult::ok("stranger", "yes")
            ]
        ),
        Err(ExternalToolError::UnknownCall(id)) if id == "stranger"
    ));
    assert!(matches!(
        session.submit_tool_results(
            &pending.id,
            [ExternalToolResult::ok(&a, "yes"), ExternalToolResult::ok(&a, "no")]
        ),
        Err(ExternalToolError::DuplicateResult(_))
    ));
    assert!(matches!(
        session.submit_tool_results(
            "not-the-id",
            [ExternalToolResult::ok(&a, "yes"), ExternalToolResult::ok(&b, "no")]
        ),
        Err(ExternalToolError::NotPending(_))
    ));
    // Through drive too: an error outcome, no turn, the calls still pending.
    let refused = session
        .drive(
            TurnStart::ToolResults {
                pending_id: pending.id.clone(),
                results: Vec::new(),
            },
            DriveOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(refused.status, OutcomeStatus::Error);
    assert_eq!(refused.error_kind.map(|k| k.as_str()), Some("tool_results"));
    assert_eq!(session.pending_tool_calls(), Some(pending.clone()));

    // The fitting results, in any order, through drive.
    let outcome = session
        .drive(
            TurnStart::ToolResults {
                pending_id: pending.id.clone(),
                results: vec![ExternalToolResult::ok(&b, "no"), ExternalToolResult::ok(&a, "yes")],
            },
            DriveOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert_eq!(outcome.final_text.as_deref(), Some("Both answered."));
    let messages = messages_of(&session).await;
    // In the model's order.
    assert_eq!(
        tool_results(&messages),
        vec![("yes".to_owned(), false), ("no".to_owned(), false)]
    );
    assert_transcript_valid(&messages);
}

#[tokio::test]
async fn a_name_that_clashes_with_an_agent_tool_is_refused() {
    let agent = agent(provider(Vec::new()), Arc::new(MemoryStore::new()), &Log::default());
    let session = agent.create_session().await.unwrap();
    let clash = ExternalTool::new("note", "Mine.", json!({"type": "object"}));
    assert!(matches!(
        session.send_with_tools(Message::user("hi"), vec![clash]),
        Err(ExternalToolError::NameClash(name)) if name == "note"
    ));
    let twice = vec![confirm_tool(), confirm_tool()];
    assert!(matches!(
        session.send_with_tools(Message::user("hi"), twice),
        Err(ExternalToolError::NameClash(_))
    ));
    let bad = ExternalTool::new("bad", "Bad schema.", json!({"type": 12}));
    assert!(matches!(
        session.send_with_tools(Message::user("hi"), vec![bad]),
        Err(ExternalToolError::InvalidSchema { .. })
    ));
}

#[tokio::test]
async fn a_new_message_dismisses_the_pending_calls() {
    let p = provider(vec![
        ScriptedReply::tool_call("confirm_dialog", json!({"text": "OK?"})),
        ScriptedReply::text("Something else, then."),
    ]);
    let agent = agent(p.clone(), Arc::new(MemoryStore::new()), &Log::default());
    let session = agent.create_session().await.unwrap();
    let pending = session
        .send_with_tools(Message::user("confirm"), vec![confirm_tool()])
        .unwrap()
        .outcome()
        .await
        .external_calls
        .map(|b| *b)
        .unwrap();
    let run = session.send("never mind");
    let events = collect_events(&run).await;
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert!(names(&events).contains(&"tool_call_failed"));
    assert!(session.pending_tool_calls().is_none());
    let messages = messages_of(&session).await;
    let results = tool_results(&messages);
    assert_eq!(results.len(), 1);
    assert!(results[0].1);
    assert!(results[0].0.contains("not run"), "{}", results[0].0);
    assert_transcript_valid(&messages);
    // The new turn offers no external tools.
    assert!(!p.requests()[1].tools.iter().any(|t| t.name == "confirm_dialog"));
    assert!(matches!(
        session.submit_tool_results(&pending.id, [ExternalToolResult::ok(&pending.calls[0].call_id, "late")]),
        Err(ExternalToolError::NotPending(_))
    ));
}

#[tokio::test]
async fn the_pending_calls_survive_a_restart() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let first = agent(
        provider(vec![ScriptedReply::tool_call("confirm_dialog", json!({"text": "OK?"}))]),
        store.clone(),
        &Log::default(),
    );
    let session = first.create_session().await.unwrap();
    let id = session.id().clone();
    let pending = session
        .send_with_tools(Message::user("confirm"), vec![confirm_tool()])
        .unwrap()
        .outcome()
        .await
        .external_calls
        .map(|b| *b)
        .unwrap();
    drop(session);
    drop(first);

    // Another process on the same store.
    let p = provider(vec![
        ScriptedReply::text("Confirming again.").with_call("confirm_dialog", json!({"text": "Really?"})),
        ScriptedReply::text("Confirmed twice."),
    ]);
    let second = agent(p.clone(), store, &Log::default());
    let session = second.open_session(&id).await.unwrap();
    assert_eq!(session.pending_tool_calls(), Some(pending.clone()));
    let call_id = pending.calls[0].call_id.clone();
    let outcome = session
        .submit_tool_results(&pending.id, [ExternalToolResult::ok(&call_id, "yes")])
        .unwrap()
        .outcome()
        .await;
    // The continued turn still offers the external tool: the model calls it again.
    assert_eq!(outcome.status, OutcomeStatus::AwaitingTools, "{:?}", outcome.error);
    assert!(p.requests()[0].tools.iter().any(|t| t.name == "confirm_dialog"));
    let again = *outcome.external_calls.unwrap();
    assert_eq!(again.calls[0].arguments, json!({"text": "Really?"}));
    let outcome = session
        .submit_tool_results(&again.id, [ExternalToolResult::ok(&again.calls[0].call_id, "yes")])
        .unwrap()
        .outcome()
        .await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert_eq!(outcome.final_text.as_deref(), Some("Confirmed twice."));
    assert_transcript_valid(&messages_of(&session).await);
}

#[tokio::test]
async fn arguments_that_do_not_fit_the_schema_are_refused_to_the_model_not_parked() {
    let p = provider(vec![
        ScriptedReply::tool_call("confirm_dialog", json!({"wrong": 1})),
        ScriptedReply::text("Sorry."),
    ]);
    let agent = agent(p, Arc::new(MemoryStore::new()), &Log::default());
    let session = agent.create_session().await.unwrap();
    let outcome = session
        .send_with_tools(Message::user("confirm"), vec![confirm_tool()])
        .unwrap()
        .outcome()
        .await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert!(session.pending_tool_calls().is_none());
    let results = tool_results(&messages_of(&session).await);
    assert_eq!(results.len(), 1);
    assert!(results[0].1, "the model reads why the call was refused");
}

#[tokio::test]
async fn an_oversized_result_is_cut_to_the_result_cap_for_the_model() {
    let p = provider(vec![
        ScriptedReply::tool_call("confirm_dialog", json!({"text": "Read the page?"})),
        ScriptedReply::text("Read."),
    ]);
    let log = Log::default();
    let agent = agent(p.clone(), Arc::new(MemoryStore::new()), &log);
    let cap = agent.config().result_cap_chars;
    let session = agent.create_session().await.unwrap();
    let run = session
        .send_with_tools(Message::user("read it"), vec![confirm_tool()])
        .unwrap();
    let pending = run.outcome().await.external_calls.map(|b| *b).unwrap();
    // A client that answers with far more than any tool may hand the model.
    let flood = "x".repeat(cap * 3);
    let resumed = session
        .submit_tool_results(&pending.id, [ExternalToolResult::ok(&pending.calls[0].call_id, flood)])
        .unwrap();
    assert_eq!(resumed.outcome().await.status, OutcomeStatus::Done);
    let (seen, _) = tool_results(&p.requests()[1].messages).remove(0);
    assert!(
        seen.chars().count() < cap + 100,
        "{} characters reached the model",
        seen.chars().count()
    );
    assert!(seen.contains(&format!("[truncated: showing {cap} of {} characters]", cap * 3)));
}
