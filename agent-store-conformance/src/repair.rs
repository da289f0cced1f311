//! Crash repair through the store: a turn that died mid-tool-call is repaired when its session
//! is opened again, whatever the store.

use std::sync::Arc;

use agent_core::{
    Agent, Message, OutcomeStatus, ScriptedProvider, ScriptedReply, ToolCall, ToolCallRecord, ToolCallState,
};
use serde_json::json;

use crate::fixture::Fixture;
use crate::kinds::{append_durably, assert_valid_transcript, session, upsert_durably};

/// What a process that died while a tool ran leaves behind: an assistant message with two
/// tool calls, one answered, one still running. Opening the session in a new process gives the
/// open call an "interrupted" result and marks its record cancelled, so the next turn is
/// sendable; the next turn then runs and is stored after it.
pub async fn an_interrupted_turn_is_repaired_when_its_session_is_opened(f: Fixture) {
    let store = f.store().as_ref();
    let id = session(store).await;
    let calls = vec![
        ToolCall::new("call_done", "page_read", &json!({})),
        ToolCall::new("call_open", "shell_exec", &json!({"command": "sleep 60"})),
    ];
    append_durably(
        store,
        &id,
        1,
        &[
            Message::user("check the page and run it"),
            Message::assistant_with_tools("", calls),
            Message::tool_result("call_done", "page_read", "the page", false),
        ],
    )
    .await
    .unwrap();
    let mut done = ToolCallRecord::pending(id.clone(), "call_done", "page_read", "{}");
    done.state = ToolCallState::Succeeded;
    upsert_durably(store, &done).await.unwrap();
    let mut open = ToolCallRecord::pending(id.clone(), "call_open", "shell_exec", "{}");
    open.state = ToolCallState::Running;
    open.started_at_ms = Some(1);
    upsert_durably(store, &open).await.unwrap();

    // A new process.
    let again = f.reopen().await;
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([ScriptedReply::text(
            "Sorry, it was interrupted.",
        )
        .into()]))
        .store_arc(Arc::clone(&again.store))
        .build()
        .unwrap();
    let session = agent.open_session(&id).await.unwrap();
    let stored: Vec<Message> = again
        .store
        .load_messages(&id, 0)
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.message)
        .collect();
    assert_eq!(stored.len(), 4, "one interrupted result was added");
    assert_valid_transcript(&stored);
    let repaired = &stored[3];
    assert_eq!(repaired.tool_call_id.as_deref(), Some("call_open"));
    assert!(repaired.is_error);
    assert!(repaired.text().contains("interrupted"), "{}", repaired.text());
    let records = again.store.tool_calls(&id).await.unwrap();
    assert_eq!(records[0].state, ToolCallState::Succeeded);
    assert_eq!(records[1].state, ToolCallState::Cancelled);
    assert!(records[1].finished_at_ms.is_some());

    let outcome = session.send("what happened?").await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{outcome:?}");
    again.store.flush(&id).await.unwrap();
    let after = again.store.load_messages(&id, 0).await.unwrap();
    assert_eq!(after.len(), 6);
    let messages: Vec<Message> = after.into_iter().map(|m| m.message).collect();
    assert_valid_transcript(&messages);
    assert_eq!(messages[5].text(), "Sorry, it was interrupted.");
}
