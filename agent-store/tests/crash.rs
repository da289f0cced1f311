#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! Crash repair with a real child process: `examples/crash_child.rs` runs a scripted agent
//! with a slow tool against a SQLite file and is killed with SIGKILL at random points, 50
//! times. After every kill, everything the child reported as committed must be in the file,
//! and after reopening (which repairs the interrupted turn) the transcript must be valid:
//! every tool call has exactly one result, and the next turn is sendable.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use agent_core::{Agent, Message, OutcomeStatus, Role, ScriptedProvider, ScriptedReply, SessionId, Store};
use agent_store::SqliteStore;
use common::child_binary;
use transcript::assert_valid_transcript;

mod common;
#[path = "common/transcript.rs"]
mod transcript;
use rand::Rng;

const ITERATIONS: usize = 50;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_at_random_points_loses_nothing_committed_and_repairs_the_turn() {
    let child = child_binary();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crash.db");
    let id = SessionId::new_random();
    let mut rng = rand::rng();
    let mut repaired_turns = 0;
    let mut max_committed = 0;

    for iteration in 0..ITERATIONS {
        let mut process = Command::new(&child)
            .arg(&db)
            .arg(id.as_str())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = process.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
                .collect::<Vec<String>>()
        });
        let wait = Duration::from_millis(rng.random_range(5..400));
        tokio::time::sleep(wait).await;
        process.kill().unwrap(); // SIGKILL on Unix
        let status = process.wait().unwrap();
        assert!(!status.success());
        let lines = reader.join().unwrap();

        let committed: Vec<(u64, Message)> = lines
            .iter()
            .filter_map(|l| l.strip_prefix("committed "))
            .map(|rest| {
                let (seq, json) = rest.split_once(' ').unwrap();
                (seq.parse().unwrap(), serde_json::from_str(json).unwrap())
            })
            .collect();

        // Nothing the child saw committed is lost, and it is stored exactly as written.
        let store = SqliteStore::open(&db).await.unwrap();
        if store.session(&id).await.unwrap().is_none() {
            assert!(
                committed.is_empty(),
                "iteration {iteration}: commits reported for a missing session"
            );
            continue;
        }
        let stored = store.load_messages(&id, 0).await.unwrap();
        for (seq, message) in &committed {
            let found = stored.iter().find(|m| m.seq == *seq);
            assert_eq!(
                found.map(|m| &m.message),
                Some(message),
                "iteration {iteration}: committed message {seq} lost or changed"
            );
        }
        let seqs: Vec<u64> = stored.iter().map(|m| m.seq).collect();
        assert_eq!(seqs, (1..=stored.len() as u64).collect::<Vec<_>>(), "gapless sequence");
        max_committed = max_committed.max(stored.len());

        // Reopening repairs the interrupted turn into a valid transcript.
        let agent = Agent::builder()
            .provider(ScriptedProvider::new([]))
            .store(store.clone())
            .build()
            .unwrap();
        let session = agent.open_session(&id).await.unwrap();
        let after: Vec<Message> = session
            .messages()
            .await
            .unwrap()
            .into_iter()
            .map(|m| m.message)
            .collect();
        if after.len() > stored.len() {
            repaired_turns += 1;
            assert!(
                after[stored.len()..]
                    .iter()
                    .all(|m| m.role == Role::Tool && m.is_error && m.text().starts_with("interrupted")),
                "iteration {iteration}: repair adds only 'interrupted' results"
            );
        }
        assert_eq!(
            &after[..stored.len()],
            &stored.iter().map(|m| m.message.clone()).collect::<Vec<_>>()[..]
        );
        assert_valid_transcript(&after);
        assert!(
            store.open_tool_calls(&id).await.unwrap().is_empty(),
            "iteration {iteration}: a tool call is still pending or running after repair"
        );
    }

    // The next turn is sendable, and the model sees a valid history.
    let store = SqliteStore::open(&db).await.unwrap();
    let provider =
        std::sync::Arc::new(ScriptedProvider::new([ScriptedReply::text("back again").into()]).record_requests());
    let agent = Agent::builder()
        .provider_arc(provider.clone())
        .store(store.clone())
        .build()
        .unwrap();
    let session = agent.open_session(&id).await.unwrap();
    let outcome = session.send("Are you still there?").await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{outcome:?}");
    let requests = provider.requests();
    assert_eq!(requests.len(), 1);
    assert_valid_transcript(&requests[0].messages);

    eprintln!(
        "crash test: {ITERATIONS} SIGKILLs, {repaired_turns} interrupted turns repaired, {max_committed} messages committed"
    );
    assert!(
        max_committed > 20,
        "the child made progress across kills ({max_committed})"
    );
    assert!(repaired_turns > 0, "at least one kill landed inside a turn");
}
