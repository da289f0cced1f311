#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! The write-behind queue: what a caller sees of writes it did not wait for. Reads see them,
//! a failure is reported once (by the session's next write or its flush), dropping the store
//! commits what is queued, and a full disk ends a turn with a clear error that loses nothing
//! already committed and leaves a session that resumes.

use agent_core::{
    Agent, Message, OutcomeStatus, Role, ScriptedProvider, ScriptedReply, SessionId, SessionInfo, Store, StoreError,
    ToolCallRecord, ToolCallState, ToolContext, ToolError, tool_fn,
};
use agent_store::{SqliteOptions, SqliteStore};
use schemars::JsonSchema;
use serde::Deserialize;
use sessions::{session, texts};
use transcript::assert_valid_transcript;

#[path = "common/sessions.rs"]
mod sessions;
#[path = "common/transcript.rs"]
mod transcript;

#[tokio::test]
async fn reads_see_writes_that_are_still_queued() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("profile.db")).await.unwrap();
    let id = session(&store).await;
    for seq in 1..=50u64 {
        store
            .append_messages(&id, seq, &[Message::user(format!("m{seq}"))])
            .await
            .unwrap();
        let mut record = ToolCallRecord::pending(id.clone(), format!("call_{seq}"), "t", "{}");
        record.state = ToolCallState::Running;
        store.upsert_tool_call(&record).await.unwrap();
    }
    // No flush: the reads themselves wait for what this process queued.
    let messages = store.load_messages(&id, 0).await.unwrap();
    assert_eq!(messages.len(), 50);
    assert_eq!(messages.last().unwrap().message.text(), "m50");
    assert_eq!(store.open_tool_calls(&id).await.unwrap().len(), 50);
    assert_eq!(store.last_seq(&id).await.unwrap(), 50);
}

#[tokio::test]
async fn a_queued_write_that_fails_is_reported_once_by_flush() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("profile.db")).await.unwrap();
    let id = session(&store).await;
    let mut record = ToolCallRecord::pending(id.clone(), "call_1", "fs_read", "{}");
    record.state = ToolCallState::Succeeded;
    store.upsert_tool_call(&record).await.unwrap();
    store.flush(&id).await.unwrap();

    // Another final state is refused; the write was queued, so flush says so.
    record.state = ToolCallState::Failed;
    store.upsert_tool_call(&record).await.unwrap();
    assert_eq!(
        store.flush(&id).await.unwrap_err(),
        StoreError::InvalidTransition {
            call_id: "call_1".into(),
            from: "succeeded",
            to: "failed"
        }
    );
    // Reported once; the stored record is untouched.
    store.flush(&id).await.unwrap();
    assert_eq!(store.tool_calls(&id).await.unwrap()[0].state, ToolCallState::Succeeded);

    // After a failure the session's next write waits for its own answer...
    assert!(matches!(
        store.upsert_tool_call(&record).await,
        Err(StoreError::InvalidTransition { .. })
    ));
    // ...and once it succeeded, writes are queued again; a queued failure is then reported
    // by the session's next write, which is not queued.
    store.append_messages(&id, 1, &[Message::user("first")]).await.unwrap();
    store.upsert_tool_call(&record).await.unwrap();
    store.flush(&SessionId::new_random()).await.unwrap(); // another session's flush: not its failure
    let next = store.append_messages(&id, 2, &[Message::user("second")]).await;
    assert!(matches!(next, Err(StoreError::InvalidTransition { .. })), "{next:?}");
    assert_eq!(store.load_messages(&id, 0).await.unwrap().len(), 1);
    store.append_messages(&id, 2, &[Message::user("second")]).await.unwrap();
    store.flush(&id).await.unwrap();
    assert_eq!(store.last_seq(&id).await.unwrap(), 2);
}

#[tokio::test]
async fn a_generated_session_is_created_behind_like_an_append() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([ScriptedReply::text("hi").into()]))
        .store(store.clone())
        .build()
        .unwrap();
    let id = agent.create_session().await.unwrap().id().clone();
    // Queued, not waited for: reads see it all the same, and so does the next process.
    assert!(store.session(&id).await.unwrap().is_some());
    store.append_messages(&id, 1, &[Message::user("first")]).await.unwrap();
    drop(agent);
    drop(store);
    let store = SqliteStore::open(&path).await.unwrap();
    assert_eq!(store.load_messages(&id, 0).await.unwrap()[0].message.text(), "first");

    // A queued creation that fails (this id is taken, which a random id never is) is
    // reported like any queued write: by the session's flush.
    store
        .create_generated_session(&SessionInfo::new(id.clone()))
        .await
        .unwrap();
    assert_eq!(
        store.flush(&id).await.unwrap_err(),
        StoreError::AlreadyExists(id.clone())
    );
    assert_eq!(store.last_seq(&id).await.unwrap(), 1, "the session is untouched");
}

/// Under a steady stream of writes the write-ahead log still starts over after each
/// checkpoint, instead of growing with everything ever written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_stays_bounded_under_a_steady_stream_of_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let id = session(&store).await;
    let body = "x".repeat(2_000);
    // About 60 MB written in small groups, with a flush now and then as the loop does.
    for seq in 1..=30_000u64 {
        store
            .append_messages(&id, seq, &[Message::assistant(body.clone())])
            .await
            .unwrap();
        if seq % 20 == 0 {
            store.flush(&id).await.unwrap();
        }
    }
    store.flush(&id).await.unwrap();
    let log = std::fs::metadata(dir.path().join("profile.db-wal")).unwrap().len();
    let database = std::fs::metadata(&path).unwrap().len();
    assert!(database > 50_000_000, "the messages are in the file: {database} bytes");
    // A checkpoint is due every ~4 MB of log; one slowed down by the disk lets it grow for a
    // while, but nowhere near everything written (which it was: 165 MB for these 60).
    assert!(log < 30_000_000, "the log grew to {log} bytes");
}

#[tokio::test]
async fn dropping_the_store_commits_what_is_queued() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.db");
    let id = {
        let store = SqliteStore::open(&path).await.unwrap();
        let id = session(&store).await;
        for seq in 1..=200u64 {
            store
                .append_messages(&id, seq, &[Message::assistant(format!("m{seq}"))])
                .await
                .unwrap();
        }
        id
    };
    let store = SqliteStore::open(&path).await.unwrap();
    assert_eq!(store.last_seq(&id).await.unwrap(), 200);
}

#[tokio::test]
async fn waiting_for_every_write_is_an_option() {
    let dir = tempfile::tempdir().unwrap();
    let options = SqliteOptions {
        write_behind: false,
        group_commit_delay: std::time::Duration::ZERO,
        ..SqliteOptions::default()
    };
    let store = SqliteStore::open_with(dir.path().join("profile.db"), options)
        .await
        .unwrap();
    let id = session(&store).await;
    store.append_messages(&id, 1, &[Message::user("a")]).await.unwrap();
    // A gap is refused by the call itself.
    let gap = store.append_messages(&id, 5, &[Message::user("b")]).await;
    assert!(
        matches!(
            gap,
            Err(StoreError::Conflict {
                expected: 5,
                actual: 2,
                ..
            })
        ),
        "{gap:?}"
    );
}

/// A caller that waits is answered at once, whatever the group-commit delay: the group is
/// committed for it (an open tool-call state included, which is otherwise kept for the
/// commit).
#[tokio::test]
async fn a_waiting_write_does_not_wait_for_the_group_commit_delay() {
    let dir = tempfile::tempdir().unwrap();
    let options = SqliteOptions {
        write_behind: false,
        group_commit_delay: std::time::Duration::from_secs(3600),
        ..SqliteOptions::default()
    };
    let store = SqliteStore::open_with(dir.path().join("profile.db"), options)
        .await
        .unwrap();
    let writes = async {
        let id = session(&store).await;
        store.append_messages(&id, 1, &[Message::user("a")]).await.unwrap();
        let mut record = ToolCallRecord::pending(id.clone(), "call_1", "t", "{}");
        store.upsert_tool_call(&record).await.unwrap();
        record.state = ToolCallState::Running;
        store.upsert_tool_call(&record).await.unwrap();
        record.state = ToolCallState::Succeeded;
        store.upsert_tool_call(&record).await.unwrap();
    };
    tokio::time::timeout(std::time::Duration::from_secs(60), writes)
        .await
        .expect("a waiting write was held back by the group-commit delay");
}

/// "Commit only when asked": the longest possible delay is a setting, not a crash.
#[tokio::test]
async fn the_longest_group_commit_delay_commits_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let options = SqliteOptions {
        group_commit_delay: std::time::Duration::MAX,
        ..SqliteOptions::default()
    };
    let store = SqliteStore::open_with(dir.path().join("profile.db"), options)
        .await
        .unwrap();
    let id = session(&store).await;
    for seq in 1..=5u64 {
        store
            .append_messages(&id, seq, &[Message::user(format!("m{seq}"))])
            .await
            .unwrap();
    }
    // Long enough for the writer to run out of jobs with the group open, and wait for more.
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    store.flush(&id).await.unwrap();
    assert_eq!(store.last_seq(&id).await.unwrap(), 5);
}

/// Another process (another handle on the file) deletes `id` and creates it again.
async fn created_again_elsewhere(path: &std::path::Path, id: &SessionId) {
    let other = SqliteStore::open(path).await.unwrap();
    other.delete_session(id).await.unwrap();
    other.create_session(&SessionInfo::new(id.clone())).await.unwrap();
}

/// A session deleted and created again under the same id, here or by another process, is a
/// new session: writes meant for the old one fail as "not found" (never land in the new one),
/// and the new one is written from sequence number 1.
#[tokio::test]
async fn a_session_deleted_and_created_again_is_a_new_session() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let id = session(&store).await;
    store
        .append_messages(&id, 1, &[Message::user("old 1"), Message::assistant("old 2")])
        .await
        .unwrap();
    store.flush(&id).await.unwrap();

    // Here: deleted, then created again with the same id.
    store.delete_session(&id).await.unwrap();
    store.create_session(&SessionInfo::new(id.clone())).await.unwrap();
    store.append_messages(&id, 1, &[Message::user("new 1")]).await.unwrap();
    store.flush(&id).await.unwrap();
    assert_eq!(texts(&store, &id).await, ["new 1"]);

    // By another process (another handle on the file), behind this one's back.
    created_again_elsewhere(&path, &id).await;
    let mut record = ToolCallRecord::pending(id.clone(), "call_1", "t", "{}");
    record.state = ToolCallState::Succeeded;
    store.upsert_tool_call(&record).await.unwrap();
    assert_eq!(
        store.flush(&id).await.unwrap_err(),
        StoreError::SessionNotFound(id.clone())
    );
    // Once that is reported, the id means the new session: it takes writes from 1.
    let stale = store.append_messages(&id, 2, &[Message::assistant("old 2")]).await;
    assert!(
        matches!(
            stale,
            Err(StoreError::Conflict {
                expected: 2,
                actual: 1,
                ..
            })
        ),
        "{stale:?}"
    );
    store
        .append_messages(&id, 1, &[Message::user("newer 1")])
        .await
        .unwrap();
    store.upsert_tool_call(&record).await.unwrap();
    store.flush(&id).await.unwrap();
    assert_eq!(texts(&store, &id).await, ["newer 1"]);
    assert_eq!(store.tool_calls(&id).await.unwrap().len(), 1);

    // Again behind this one's back; this time an append is the first to find out.
    created_again_elsewhere(&path, &id).await;
    store
        .append_messages(&id, 2, &[Message::assistant("newer 2")])
        .await
        .unwrap();
    assert_eq!(
        store.flush(&id).await.unwrap_err(),
        StoreError::SessionNotFound(id.clone())
    );
    assert!(store.load_messages(&id, 0).await.unwrap().is_empty());
}

#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

/// A gated tool runs only once the message that asked for it is committed: the tool itself
/// looks through a second handle on the file (its own connections) and finds it there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gated_tool_runs_only_after_the_call_is_durable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let probe_path = path.clone();
    let look = tool_fn("look", "Looks at the file.", move |_: NoArgs, cx: ToolContext| {
        let path = probe_path.clone();
        async move {
            let other = SqliteStore::open(&path)
                .await
                .map_err(|e| ToolError::fatal(e.to_string()))?;
            let stored = other
                .load_messages(&cx.session_id, 0)
                .await
                .map_err(|e| ToolError::fatal(e.to_string()))?;
            let asked = stored
                .last()
                .is_some_and(|m| m.message.tool_calls.iter().any(|c| c.id == cx.call_id));
            Ok::<_, ToolError>(if asked { "durable" } else { "not yet on disk" })
        }
    })
    .gated(true);
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([
            ScriptedReply::tool_call("look", serde_json::json!({})).into(),
            ScriptedReply::text("done").into(),
        ]))
        .tool(look)
        .gate(agent_core::AllowAll)
        .store(store.clone())
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let outcome = session.send("look").await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    let stored = store.load_messages(session.id(), 0).await.unwrap();
    let result = stored.iter().find(|m| m.message.role == Role::Tool).unwrap();
    assert_eq!(result.message.text(), "durable");
}

/// Each turn: two calls of a tool that returns 6 KB, then an answer.
fn bulky_agent(store: &SqliteStore) -> Agent {
    let bulky = tool_fn("bulky", "Returns a lot.", |_: NoArgs, _cx: ToolContext| async move {
        Ok::<_, ToolError>("x".repeat(6_000))
    });
    Agent::builder()
        .provider(ScriptedProvider::repeat_tool_then_answer(
            "bulky",
            serde_json::json!({}),
            2,
            "done",
        ))
        .tool(bulky)
        .store(store.clone())
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_ends_the_turn_with_a_clear_error_and_loses_nothing_committed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.db");
    // Room for the schema and a few turns, not for many.
    let schema_bytes = {
        let store = SqliteStore::open(&path).await.unwrap();
        store.checkpoint().await.unwrap();
        std::fs::metadata(&path).unwrap().len()
    };
    let capped = SqliteOptions {
        max_size_bytes: Some(schema_bytes + 160 * 1024),
        ..SqliteOptions::default()
    };
    let store = SqliteStore::open_with(&path, capped).await.unwrap();
    let agent = bulky_agent(&store);
    let session = agent.create_session().await.unwrap();
    let id = session.id().clone();

    let mut done_turns = 0;
    let failed = loop {
        let outcome = session.send(format!("turn {done_turns}")).await;
        match outcome.status {
            OutcomeStatus::Done => done_turns += 1,
            _ => break outcome,
        }
        assert!(done_turns < 100, "the size cap never took effect");
    };
    assert!(done_turns >= 2, "only {done_turns} turns fitted");
    assert_eq!(failed.status, OutcomeStatus::Error);
    assert_eq!(failed.error_kind, Some(agent_core::ErrorKind::Store));
    let error = failed.error.unwrap();
    assert!(error.contains("could not save the conversation"), "{error}");
    assert!(error.contains("full"), "{error}");

    // Still full: the next turn reloads the stored history and fails the same clear way,
    // never with a sequence conflict.
    let again = session.send("one more").await;
    assert_eq!(
        again.error_kind,
        Some(agent_core::ErrorKind::Store),
        "{:?}",
        again.error
    );
    assert!(again.error.unwrap().contains("full"));
    drop(session);
    drop(agent);
    drop(store);

    // With room again, everything the done turns wrote is there, the transcript is valid,
    // and the session goes on.
    let store = SqliteStore::open(&path).await.unwrap();
    let agent = bulky_agent(&store);
    let session = agent.open_session(&id).await.unwrap();
    let outcome = session.send("with room again").await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    let stored: Vec<Message> = store
        .load_messages(&id, 0)
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.message)
        .collect();
    assert_valid_transcript(&stored);
    let answers = stored
        .iter()
        .filter(|m| m.role == Role::Assistant && m.text() == "done")
        .count();
    assert!(
        answers > done_turns,
        "{answers} answers stored for {done_turns} + 1 done turns"
    );
    for turn in 0..done_turns {
        assert!(
            stored
                .iter()
                .any(|m| m.role == Role::User && m.text() == format!("turn {turn}")),
            "turn {turn} is missing"
        );
    }
}

/// The queue holds at most 1 024 jobs: past that a queued write waits for room (the path the
/// loop almost never takes), and every write still lands, in order, with each call's final
/// record the one read back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_past_a_full_queue_wait_for_room_and_all_land_in_order() {
    const ROUNDS: u64 = 1_500;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let id = session(&store).await;
    store.append_messages(&id, 1, &[Message::user("m1")]).await.unwrap();
    store.flush(&id).await.unwrap();
    // Another connection holds the write lock: the writer cannot begin its next group, so
    // what is queued stays queued.
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let writes = {
        let store = store.clone();
        let id = id.clone();
        tokio::spawn(async move {
            for seq in 2..=ROUNDS {
                let text = format!("m{seq}");
                store.append_messages(&id, seq, &[Message::user(text)]).await.unwrap();
                let mut record = ToolCallRecord::pending(id.clone(), format!("call_{seq}"), "t", "{}");
                record.state = ToolCallState::Running;
                store.upsert_tool_call(&record).await.unwrap();
                record.state = ToolCallState::Succeeded;
                record.raw_result = Some(format!("r{seq}"));
                store.upsert_tool_call(&record).await.unwrap();
            }
        })
    };
    // Three jobs a round: the queue is full long before the last round.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!writes.is_finished(), "the queue is bounded");
    other.execute_batch("COMMIT").unwrap();
    writes.await.unwrap();
    store.flush(&id).await.unwrap();

    let expected: Vec<String> = (1..=ROUNDS).map(|seq| format!("m{seq}")).collect();
    assert_eq!(texts(&store, &id).await, expected);
    let records = store.tool_calls(&id).await.unwrap();
    assert_eq!(records.len() as u64, ROUNDS - 1);
    for (record, seq) in records.iter().zip(2..) {
        assert_eq!(record.call_id, format!("call_{seq}"));
        assert_eq!(record.state, ToolCallState::Succeeded);
        assert_eq!(record.raw_result.as_deref(), Some(format!("r{seq}").as_str()));
    }
}

/// The scheduling policy of this process's threads whose name starts with `prefix` (as
/// `/proc` shows names: at most 15 bytes), by the policy field of each thread's `stat`.
#[cfg(target_os = "linux")]
fn thread_policies(prefix: &str) -> Vec<i64> {
    let mut policies = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        let task = task.unwrap().path();
        let Ok(name) = std::fs::read_to_string(task.join("comm")) else {
            continue; // the thread ended meanwhile
        };
        if !name.trim_end().starts_with(prefix) {
            continue;
        }
        policies.push(policy_of(&task));
    }
    policies
}

/// The scheduling policy of the thread whose `/proc` directory is `task`.
#[cfg(target_os = "linux")]
fn policy_of(task: &std::path::Path) -> i64 {
    let stat = std::fs::read_to_string(task.join("stat")).unwrap();
    // The fields after the name, which ends with the last ')': the third field is the first
    // of them, the policy the 41st.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..].split_whitespace().collect();
    fields[41 - 3].parse().unwrap()
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_stores_threads_run_as_batch_work_and_keep_working() {
    const SCHED_OTHER: i64 = 0;
    const SCHED_BATCH: i64 = 3;
    // Started from a thread with another policy (`chrt -f cargo test`), they keep that one.
    let inherited = policy_of(std::path::Path::new("/proc/thread-self"));
    let expected = if inherited == SCHED_OTHER {
        SCHED_BATCH
    } else {
        inherited
    };
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("profile.db")).await.unwrap();
    // A thread sets its policy once it runs, a moment after `open` (or another test's store)
    // started it; other tests' stores may be open in this process too, and every one must
    // become batch work.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let writers = thread_policies("agent-store wri");
        let checkpointers = thread_policies("agent-store che");
        let as_expected = writers.iter().chain(&checkpointers).all(|p| *p == expected);
        if !writers.is_empty() && !checkpointers.is_empty() && as_expected {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{writers:?} {checkpointers:?}");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // Writes still go through, queued and waited for.
    let id = session(&store).await;
    store.append_messages(&id, 1, &[Message::user("hello")]).await.unwrap();
    store.flush(&id).await.unwrap();
    assert_eq!(texts(&store, &id).await, ["hello"]);
}
