//! A question parked by `ask_clarification` survives dropping the agent and the store: reopen
//! the SQLite file, answer, and the turn finishes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::Arc;

use agent_core::{Agent, OutcomeStatus, Role, ScriptedProvider, ScriptedReply, Store};
use agent_store::SqliteStore;
use serde_json::json;

#[tokio::test]
async fn a_parked_question_survives_reopening_the_sqlite_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.sqlite");
    let (session_id, question_id) = {
        let store = SqliteStore::open(&path).await.unwrap();
        let agent = Agent::builder()
            .provider(ScriptedProvider::new([ScriptedReply::tool_call(
                "ask_clarification",
                json!({"kind": "choice", "question": "Which file?", "options": ["a.txt", "b.txt"]}),
            )
            .into()]))
            .store(store)
            .clarification(true)
            .build()
            .unwrap();
        let session = agent.create_session().await.unwrap();
        let outcome = session.send("open the file").await;
        assert_eq!(outcome.status, OutcomeStatus::AwaitingUser);
        (session.id().clone(), outcome.clarification.unwrap().id)
        // The agent, the session and the store are dropped here.
    };

    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&path).await.unwrap());
    let provider = Arc::new(ScriptedProvider::new([ScriptedReply::text("Opened b.txt.").into()]).record_requests());
    let agent = Agent::builder()
        .provider_arc(provider.clone())
        .store_arc(store.clone())
        .clarification(true)
        .build()
        .unwrap();
    let session = agent.open_session(&session_id).await.unwrap();
    assert_eq!(session.pending_clarification().unwrap().id, question_id);
    // A wrong answer is refused and the question stays pending.
    assert!(session.answer_clarification(&question_id, "c.txt").is_err());
    let outcome = session
        .answer_clarification(&question_id, "b.txt")
        .unwrap()
        .outcome()
        .await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    assert_eq!(outcome.final_text.as_deref(), Some("Opened b.txt."));
    let seen = &provider.requests()[0];
    let answer = seen.messages.iter().find(|m| m.role == Role::Tool).unwrap();
    assert_eq!(answer.text(), "[User Response to Clarification]: b.txt");
    assert!(store.parked_run(&session_id).await.unwrap().is_none());
}

#[tokio::test]
async fn a_parked_question_is_dismissed_after_reopening_the_sqlite_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.sqlite");
    let (session_id, question_id) = {
        let store = SqliteStore::open(&path).await.unwrap();
        let agent = Agent::builder()
            .provider(ScriptedProvider::new([ScriptedReply::tool_call(
                "ask_clarification",
                json!({"kind": "confirm", "question": "Delete the draft?"}),
            )
            .into()]))
            .store(store)
            .clarification(true)
            .build()
            .unwrap();
        let session = agent.create_session().await.unwrap();
        let outcome = session.send("tidy up").await;
        assert_eq!(outcome.status, OutcomeStatus::AwaitingUser);
        (session.id().clone(), outcome.clarification.unwrap().id)
    };

    let reopen = || async {
        let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&path).await.unwrap());
        let provider =
            Arc::new(ScriptedProvider::new([ScriptedReply::text("Left it alone.").into()]).record_requests());
        let agent = Agent::builder()
            .provider_arc(provider.clone())
            .store_arc(store.clone())
            .clarification(true)
            .build()
            .unwrap();
        (store, provider, agent)
    };
    {
        let (store, _, agent) = reopen().await;
        let session = agent.open_session(&session_id).await.unwrap();
        assert_eq!(session.pending_clarification().unwrap().id, question_id);
        session.dismiss_clarification(&question_id).await.unwrap();
        assert!(session.pending_clarification().is_none());
        assert!(store.parked_run(&session_id).await.unwrap().is_none());
        let record = store
            .tool_calls(&session_id)
            .await
            .unwrap()
            .into_iter()
            .find(|r| r.name == "ask_clarification")
            .unwrap();
        assert_eq!(record.state, agent_core::ToolCallState::Cancelled);
        store.flush(&session_id).await.unwrap();
    }

    // Reopened once more, the dismissal held: nothing is pending and the next turn is sendable.
    let (_, provider, agent) = reopen().await;
    let session = agent.open_session(&session_id).await.unwrap();
    assert!(session.pending_clarification().is_none());
    let outcome = session.send("ok").await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    let seen = &provider.requests()[0];
    let results: Vec<_> = seen.messages.iter().filter(|m| m.role == Role::Tool).collect();
    assert_eq!(results.len(), 1);
    assert_eq!(
        results[0].text(),
        "[Clarification dismissed]: the person dismissed the question without answering"
    );
}
