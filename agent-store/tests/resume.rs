#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! The loop end to end with SqliteStore: a first process (examples/crash_child) runs turns
//! against a database file and exits; this process resumes the session and checks exactly
//! what the model is sent: earlier tool results compressed, the latest turn in full, and after
//! a compaction the summary followed by the messages after its cursor.

use std::process::Command;
use std::sync::Arc;

use agent_core::{Agent, Compaction, OutcomeStatus, Role, ScriptedProvider, ScriptedReply, SessionId, Store};
use agent_store::SqliteStore;
use common::child_binary;

mod common;

#[tokio::test]
async fn a_session_resumes_in_a_new_process_with_the_right_history() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("profile.db");
    let id = SessionId::new_random();
    let status = Command::new(child_binary())
        .arg(&db)
        .arg(id.as_str())
        .args(["--turns", "2"])
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());

    let store = SqliteStore::open(&db).await.unwrap();
    let stored = store.load_messages(&id, 0).await.unwrap();
    // Two turns: user, (assistant + 2 results), 3 x (assistant + result), answer = 11 each.
    assert_eq!(stored.len(), 22);
    let records = store.tool_calls(&id).await.unwrap();
    assert_eq!(records.len(), 10);
    assert!(records.iter().all(|r| r.state == agent_core::ToolCallState::Succeeded));
    assert!(
        records
            .iter()
            .all(|r| r.raw_result.is_some() && r.started_at_ms.is_some())
    );

    let provider = Arc::new(ScriptedProvider::new([ScriptedReply::text("Resumed.").into()]).record_requests());
    let agent = Agent::builder()
        .provider_arc(provider.clone())
        .store(store.clone())
        .build()
        .unwrap();
    let session = agent.open_session(&id).await.unwrap();
    let outcome = session.send("What did you do?").await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    let seen = &provider.requests()[0].messages;
    assert_eq!(seen.len(), 23);
    for (i, (sent, kept)) in seen.iter().zip(&stored).enumerate() {
        if kept.message.role == Role::Tool && kept.message.compressed.is_some() {
            // An earlier turn's tool result is replayed compressed.
            assert_eq!(Some(sent.text()), kept.message.compressed.clone(), "message {i}");
            assert!(sent.text().contains("_count"), "the 40-item array was compressed");
        } else {
            assert_eq!(sent, &kept.message, "message {i} is sent as stored");
        }
    }
    assert!(stored.iter().any(|m| m.message.compressed.is_some()));
    assert_eq!(seen[22].text(), "What did you do?");

    // After a compaction, a new process sends the summary, then only what follows the cursor,
    // while the person still sees every message.
    store
        .add_compaction(&Compaction {
            session_id: id.clone(),
            cursor: 11,
            summary: "Turn 0 did five pieces of work.".into(),
            created_at_ms: 1,
        })
        .await
        .unwrap();
    drop(session);
    drop(agent);
    let provider = Arc::new(ScriptedProvider::new([ScriptedReply::text("Again.").into()]).record_requests());
    let agent = Agent::builder()
        .provider_arc(provider.clone())
        .store(SqliteStore::open(&db).await.unwrap())
        .build()
        .unwrap();
    let session = agent.open_session(&id).await.unwrap();
    assert_eq!(session.send("And now?").await.status, OutcomeStatus::Done);
    let seen = &provider.requests()[0].messages;
    assert!(seen[0].text().ends_with("Turn 0 did five pieces of work."));
    assert!(!seen[0].visibility.user);
    assert_eq!(seen[1].text(), "Please do piece of work number 1.");
    assert_eq!(seen.len(), 1 + (24 - 11) + 1);
    assert_eq!(
        session.messages().await.unwrap().len(),
        26,
        "the person sees the whole conversation"
    );
}
