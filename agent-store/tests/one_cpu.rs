#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! The writer on a single CPU: there it is not woken for every write nobody waits for (each
//! wake-up would cost two context switches), and sleeps until its group is due. The test runs
//! itself again pinned to one CPU (`taskset`, util-linux) so that this path runs on any
//! machine, and checks that many concurrent turns lose nothing, in order, after a reopen.

use std::process::Command;

use agent_core::{Agent, OutcomeStatus, ScriptedProvider, ToolContext, ToolError, tool_fn};
use agent_store::SqliteStore;

const INNER: &str = "AGENT_STORE_TEST_ON_ONE_CPU";

#[test]
fn concurrent_turns_on_one_cpu_are_all_stored_in_order() {
    if std::env::var_os(INNER).is_some() {
        return on_one_cpu();
    }
    let exe = std::env::current_exe().unwrap();
    let status = Command::new("taskset")
        .args(["-c", "0"])
        .arg(exe)
        .args([
            "--exact",
            "concurrent_turns_on_one_cpu_are_all_stored_in_order",
            "--nocapture",
        ])
        .env(INNER, "1")
        .status()
        .expect("taskset (util-linux) runs the test pinned to one CPU");
    assert!(status.success(), "the pinned run failed: {status}");
}

fn on_one_cpu() {
    assert_eq!(
        std::thread::available_parallelism().unwrap().get(),
        1,
        "the inner run must see one CPU"
    );
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("profile.db");
            let steps = 5;
            let ids = {
                let store = SqliteStore::open(&path).await.unwrap();
                // A result of its own per call: five identical calls with one answer would
                // (rightly) trip the loop guard.
                let count = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
                let step = tool_fn("step", "One step.", move |_: serde_json::Value, _cx: ToolContext| {
                    let n = count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    async move { Ok::<_, ToolError>(format!("ok {n}")) }
                });
                let agent = std::sync::Arc::new(
                    Agent::builder()
                        .provider(ScriptedProvider::repeat_tool_then_answer(
                            "step",
                            serde_json::json!({}),
                            steps,
                            "Done.",
                        ))
                        .tool(step)
                        .store(store)
                        .build()
                        .unwrap(),
                );
                let turns: Vec<_> = (0..200)
                    .map(|_| {
                        let agent = agent.clone();
                        tokio::spawn(async move {
                            let session = agent.create_session().await.unwrap();
                            let outcome = session.send("go").await;
                            assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
                            session.id().clone()
                        })
                    })
                    .collect();
                let mut ids = Vec::new();
                for turn in turns {
                    ids.push(turn.await.unwrap());
                }
                ids
            };
            // Reopened: every turn's messages are there, numbered in order.
            let store = SqliteStore::open(&path).await.unwrap();
            let agent = Agent::builder()
                .provider(ScriptedProvider::new([]))
                .store(store)
                .build()
                .unwrap();
            for id in ids {
                let messages = agent.open_session(&id).await.unwrap().messages().await.unwrap();
                // The task, each (call, result) pair, and the answer.
                assert_eq!(messages.len(), 2 + 2 * steps, "session {id}");
                let seqs: Vec<u64> = messages.iter().map(|m| m.seq).collect();
                assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>(), "session {id}");
            }
        });
}
