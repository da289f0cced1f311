#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! SqliteStore against real database files: schema, migrations, round trips, conflicts,
//! concurrency, tool-call state machine, compactions, parked runs, key-value, deletion.

use std::sync::Arc;

use agent_core::{
    Compaction, ContentPart, ImageSource, Message, Reasoning, SessionId, SessionInfo, Store, StoreError, ToolCall,
    ToolCallRecord, ToolCallState, Visibility,
};
use agent_store::{SqliteOptions, SqliteStore, migrations};
use rusqlite::{Connection, OptionalExtension};
use serde_json::json;
use sessions::{session, texts};

#[path = "common/sessions.rs"]
mod sessions;

async fn fresh() -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("profile.db")).await.unwrap();
    (dir, store)
}

/// One message of every kind the loop produces.
fn every_kind() -> Vec<Message> {
    let mut hidden = Message::user("an old turn, summarised");
    hidden.visibility = Visibility::USER_ONLY;
    let mut summary = Message::user("Summary: the person asked about cats.");
    summary.visibility = Visibility::MODEL_ONLY;
    let mut with_reasoning = Message::assistant_with_tools(
        "Let me look.",
        vec![
            ToolCall::new("call_1", "page_read", &json!({"tab": 1})),
            ToolCall {
                id: "call_2".into(),
                name: "broken".into(),
                arguments: "{not json".into(),
                signature: Some("sig-abc".into()),
            },
        ],
    );
    with_reasoning.reasoning = Some(Reasoning {
        text: "thinking about cats".into(),
        signature: Some("rs-1".into()),
        opaque: vec![json!({"type": "redacted_thinking", "data": "xyz"})],
    });
    let mut compressed = Message::tool_result("call_1", "page_read", r#"{"items":[1,2,3,4,5,6,7]}"#, false);
    compressed.compressed = Some(r#"{"items":{"_count":7,"_showing":3,"items":[1,2,3]}}"#.into());
    vec![
        Message::system("You are helpful. ünïcödé ✓"),
        Message::user("Hello"),
        Message::user_parts(vec![
            ContentPart::text("What is in this picture?"),
            ContentPart::Image {
                media_type: "image/png".into(),
                source: ImageSource::Base64 {
                    data: "iVBORw0KGgo=".into(),
                },
            },
            ContentPart::Image {
                media_type: "image/jpeg".into(),
                source: ImageSource::Url {
                    url: "https://example.invalid/cat.jpg".into(),
                },
            },
        ]),
        with_reasoning,
        compressed,
        Message::tool_result("call_2", "broken", "invalid arguments: expected JSON", true),
        Message::assistant(""),
        Message::assistant("Cats."),
        hidden,
        summary,
    ]
}

#[tokio::test]
async fn every_message_kind_round_trips() {
    let (_dir, store) = fresh().await;
    let id = session(&store).await;
    let messages = every_kind();
    store.append_messages(&id, 1, &messages).await.unwrap();
    let loaded = store.load_messages(&id, 0).await.unwrap();
    assert_eq!(loaded.len(), messages.len());
    for (i, (stored, original)) in loaded.iter().zip(&messages).enumerate() {
        assert_eq!(stored.seq, i as u64 + 1);
        assert_eq!(&stored.message, original, "message {i} changed in the round trip");
        assert!(stored.created_at_ms > 0);
    }
    // after_seq skips the first ones.
    let tail = store.load_messages(&id, 7).await.unwrap();
    assert_eq!(tail.iter().map(|m| m.seq).collect::<Vec<_>>(), vec![8, 9, 10]);
    assert_eq!(store.last_seq(&id).await.unwrap(), 10);
}

#[tokio::test]
async fn history_survives_reopening_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.db");
    let id = {
        let store = SqliteStore::open(&path).await.unwrap();
        let id = session(&store).await;
        store.append_messages(&id, 1, &every_kind()).await.unwrap();
        store.set_title(&id, "Cats").await.unwrap();
        id
    };
    let store = SqliteStore::open(&path).await.unwrap();
    assert_eq!(store.load_messages(&id, 0).await.unwrap().len(), every_kind().len());
    assert_eq!(
        store.session(&id).await.unwrap().unwrap().title.as_deref(),
        Some("Cats")
    );
}

#[tokio::test]
async fn stale_sequence_number_is_a_conflict_and_writes_nothing() {
    let (_dir, store) = fresh().await;
    let id = session(&store).await;
    store
        .append_messages(&id, 1, &[Message::user("a"), Message::assistant("b")])
        .await
        .unwrap();
    // A second writer that still believes the session is empty.
    let err = store
        .append_messages(&id, 1, &[Message::user("stale"), Message::assistant("stale")])
        .await
        .unwrap_err();
    assert_eq!(
        err,
        StoreError::Conflict {
            session: id.clone(),
            expected: 1,
            actual: 3
        }
    );
    // Skipping ahead is a conflict too.
    let err = store
        .append_messages(&id, 5, &[Message::user("gap")])
        .await
        .unwrap_err();
    assert!(matches!(
        err,
        StoreError::Conflict {
            expected: 5,
            actual: 3,
            ..
        }
    ));
    assert_eq!(texts(&store, &id).await, vec!["a", "b"]);
    assert!(err.to_string().contains("another writer appended first"));
}

#[tokio::test]
async fn two_store_handles_on_one_file_cannot_interleave() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.db");
    let a = SqliteStore::open(&path).await.unwrap();
    let b = SqliteStore::open(&path).await.unwrap();
    let id = session(&a).await;
    // Both writers race for the same next seq many times; exactly one wins each round. An
    // append may be queued (write-behind), so a lost race is reported by the append or, at
    // the latest, by the flush that makes it durable.
    async fn append_durably(store: &SqliteStore, id: &SessionId, seq: u64, text: String) -> Result<(), StoreError> {
        store.append_messages(id, seq, &[Message::user(text)]).await?;
        store.flush(id).await
    }
    for round in 0..20u64 {
        let next = round + 1;
        let (ra, rb) = tokio::join!(
            append_durably(&a, &id, next, format!("a{round}")),
            append_durably(&b, &id, next, format!("b{round}"))
        );
        assert!(ra.is_ok() ^ rb.is_ok(), "round {round}: {ra:?} {rb:?}");
        let loser = if ra.is_err() { ra } else { rb };
        assert!(matches!(loser, Err(StoreError::Conflict { .. })));
    }
    let seqs: Vec<u64> = b.load_messages(&id, 0).await.unwrap().iter().map(|m| m.seq).collect();
    assert_eq!(seqs, (1..=20).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_sessions_written_from_parallel_tasks() {
    let (_dir, store) = fresh().await;
    let store = Arc::new(store);
    let mut tasks = Vec::new();
    for s in 0..50 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let id = SessionId::new_random();
            store.create_session(&SessionInfo::new(id.clone())).await.unwrap();
            let mut seq = 1;
            for i in 0..20 {
                let batch = if i % 2 == 0 {
                    vec![Message::user(format!("s{s} m{i}"))]
                } else {
                    vec![
                        Message::assistant(format!("s{s} m{i}a")),
                        Message::assistant(format!("s{s} m{i}b")),
                    ]
                };
                store.append_messages(&id, seq, &batch).await.unwrap();
                seq += batch.len() as u64;
                // Interleave reads with the writes.
                assert_eq!(store.last_seq(&id).await.unwrap(), seq - 1);
            }
            (s, id)
        }));
    }
    for task in tasks {
        let (s, id) = task.await.unwrap();
        let loaded = store.load_messages(&id, 0).await.unwrap();
        assert_eq!(loaded.len(), 30);
        for (i, m) in loaded.iter().enumerate() {
            assert_eq!(m.seq, i as u64 + 1);
            assert!(
                m.message.text().starts_with(&format!("s{s} ")),
                "foreign message in session {s}"
            );
        }
    }
    assert_eq!(store.list_sessions().await.unwrap().len(), 50);
}

#[tokio::test]
async fn sessions_are_listed_renamed_and_deleted() {
    let (_dir, store) = fresh().await;
    let first = SessionId::new_random();
    let mut info = SessionInfo::new(first.clone());
    info.updated_at_ms -= 10_000;
    store.create_session(&info).await.unwrap();
    // Both in the past, so that renaming below makes `first` the newest even within the
    // same millisecond.
    let second = SessionId::new_random();
    let mut info = SessionInfo::new(second.clone());
    info.updated_at_ms -= 5_000;
    store.create_session(&info).await.unwrap();
    assert_eq!(
        store
            .create_session(&SessionInfo::new(second.clone()))
            .await
            .unwrap_err(),
        StoreError::AlreadyExists(second.clone())
    );
    let ids: Vec<SessionId> = store.list_sessions().await.unwrap().into_iter().map(|s| s.id).collect();
    assert_eq!(ids, vec![second.clone(), first.clone()], "most recently updated first");

    store.set_title(&first, "Renamed").await.unwrap();
    let listed = store.list_sessions().await.unwrap();
    assert_eq!(listed[0].id, first, "renaming counts as an update");
    assert_eq!(listed[0].title.as_deref(), Some("Renamed"));

    store.append_messages(&first, 1, &[Message::user("x")]).await.unwrap();
    store
        .upsert_tool_call(&ToolCallRecord::pending(first.clone(), "c1", "t", "{}"))
        .await
        .unwrap();
    store
        .add_compaction(&Compaction {
            session_id: first.clone(),
            cursor: 1,
            summary: "s".into(),
            created_at_ms: 1,
        })
        .await
        .unwrap();
    store.set_parked_run(&first, Some(&json!({"q": 1}))).await.unwrap();
    // The session's own key-value entries go with it; another session's and shared ones stay.
    let own_key = format!("{}spend", agent_core::session_key_prefix(&first));
    let other_key = format!("{}spend", agent_core::session_key_prefix(&SessionId::new_random()));
    for key in [own_key.as_str(), other_key.as_str(), "shared"] {
        store.kv_set(key, "1").await.unwrap();
    }
    Store::delete_session(&store, &first).await.unwrap();
    assert_eq!(store.kv_get(&own_key).await.unwrap(), None);
    assert!(store.kv_get(&other_key).await.unwrap().is_some());
    assert!(store.kv_get("shared").await.unwrap().is_some());
    assert!(store.session(&first).await.unwrap().is_none());
    assert_eq!(
        store.load_messages(&first, 0).await.unwrap_err(),
        StoreError::SessionNotFound(first.clone())
    );
    assert_eq!(
        store.delete_session(&first).await.unwrap_err(),
        StoreError::SessionNotFound(first.clone())
    );
    // Re-creating the id starts empty: nothing was left behind.
    store.create_session(&SessionInfo::new(first.clone())).await.unwrap();
    assert!(store.load_messages(&first, 0).await.unwrap().is_empty());
    assert!(store.tool_calls(&first).await.unwrap().is_empty());
    assert!(store.latest_compaction(&first).await.unwrap().is_none());
    assert!(store.parked_run(&first).await.unwrap().is_none());
}

#[tokio::test]
async fn missing_sessions_are_reported() {
    let (_dir, store) = fresh().await;
    let ghost = SessionId::new_random();
    assert_eq!(
        store
            .append_messages(&ghost, 1, &[Message::user("x")])
            .await
            .unwrap_err(),
        StoreError::SessionNotFound(ghost.clone())
    );
    assert_eq!(
        store.set_title(&ghost, "x").await.unwrap_err(),
        StoreError::SessionNotFound(ghost.clone())
    );
    assert_eq!(
        store
            .upsert_tool_call(&ToolCallRecord::pending(ghost.clone(), "c", "t", "{}"))
            .await
            .unwrap_err(),
        StoreError::SessionNotFound(ghost.clone())
    );
    assert!(store.session(&ghost).await.unwrap().is_none());
}

#[tokio::test]
async fn tool_call_state_machine_is_enforced() {
    // Every write waits for its commit here, so each error comes back from its own call.
    let dir = tempfile::tempdir().unwrap();
    let options = SqliteOptions {
        write_behind: false,
        ..SqliteOptions::default()
    };
    let store = SqliteStore::open_with(dir.path().join("profile.db"), options)
        .await
        .unwrap();
    let id = session(&store).await;
    let mut record = ToolCallRecord::pending(id.clone(), "call_1", "fs_read", r#"{"path":"a"}"#);
    store.upsert_tool_call(&record).await.unwrap();
    assert_eq!(store.open_tool_calls(&id).await.unwrap().len(), 1);

    record.state = ToolCallState::Running;
    record.started_at_ms = Some(10);
    store.upsert_tool_call(&record).await.unwrap();
    // Repeating a write is allowed.
    store.upsert_tool_call(&record).await.unwrap();

    record.state = ToolCallState::Succeeded;
    record.raw_result = Some("raw ".repeat(100));
    record.compressed_result = Some("raw...".into());
    record.finished_at_ms = Some(20);
    store.upsert_tool_call(&record).await.unwrap();
    assert!(store.open_tool_calls(&id).await.unwrap().is_empty());

    let mut back = record.clone();
    back.state = ToolCallState::Running;
    assert_eq!(
        store.upsert_tool_call(&back).await.unwrap_err(),
        StoreError::InvalidTransition {
            call_id: "call_1".into(),
            from: "succeeded",
            to: "running"
        }
    );
    let mut denied = ToolCallRecord::pending(id.clone(), "call_2", "fs_delete", "{}");
    store.upsert_tool_call(&denied).await.unwrap();
    denied.state = ToolCallState::Denied;
    denied.error = Some("the person said no".into());
    store.upsert_tool_call(&denied).await.unwrap();
    let mut resurrect = denied.clone();
    resurrect.state = ToolCallState::Pending;
    assert!(matches!(
        store.upsert_tool_call(&resurrect).await,
        Err(StoreError::InvalidTransition { .. })
    ));

    // The same call id in another session is a different call.
    let other = session(&store).await;
    store
        .upsert_tool_call(&ToolCallRecord::pending(other.clone(), "call_1", "fs_read", "{}"))
        .await
        .unwrap();

    let records = store.tool_calls(&id).await.unwrap();
    assert_eq!(records, vec![record, denied]);
    assert_eq!(store.tool_calls(&other).await.unwrap().len(), 1);
}

#[tokio::test]
async fn compactions_parked_runs_and_key_values() {
    let (_dir, store) = fresh().await;
    let id = session(&store).await;
    assert!(store.latest_compaction(&id).await.unwrap().is_none());
    for cursor in [4, 9] {
        store
            .add_compaction(&Compaction {
                session_id: id.clone(),
                cursor,
                summary: format!("up to {cursor}"),
                created_at_ms: 100 + cursor as i64,
            })
            .await
            .unwrap();
    }
    let latest = store.latest_compaction(&id).await.unwrap().unwrap();
    assert_eq!((latest.cursor, latest.summary.as_str()), (9, "up to 9"));

    let parked = json!({"clarification_id": "q1", "question": {"text": "Which file?"}});
    store.set_parked_run(&id, Some(&parked)).await.unwrap();
    assert_eq!(store.parked_run(&id).await.unwrap(), Some(parked));
    store.set_parked_run(&id, None).await.unwrap();
    assert_eq!(store.parked_run(&id).await.unwrap(), None);

    assert_eq!(store.kv_get("theme").await.unwrap(), None);
    store.kv_set("theme", "dark").await.unwrap();
    store.kv_set("theme", "light").await.unwrap();
    assert_eq!(store.kv_get("theme").await.unwrap().as_deref(), Some("light"));
    store.kv_delete("theme").await.unwrap();
    store.kv_delete("theme").await.unwrap();
    assert_eq!(store.kv_get("theme").await.unwrap(), None);
}

fn table_names(conn: &Connection) -> Vec<String> {
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap();
    stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

#[tokio::test]
async fn schema_is_wal_versioned_and_indexed() {
    let (dir, store) = fresh().await;
    assert_eq!(
        store.schema_version().await.unwrap(),
        SqliteStore::latest_schema_version()
    );
    let conn = Connection::open(dir.path().join("profile.db")).unwrap();
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
    let tables = table_names(&conn);
    for t in [
        "api_keys",
        "compactions",
        "key_value",
        "messages",
        "runs",
        "sessions",
        "tool_calls",
    ] {
        assert!(tables.contains(&t.to_owned()), "missing table {t}: {tables:?}");
    }
    // The hot paths use their indexes.
    let plan = |sql: &str| -> String {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        stmt.query_map([], |r| r.get::<_, String>(3))
            .unwrap()
            .map(Result::unwrap)
            .collect::<Vec<_>>()
            .join("; ")
    };
    let history = plan("SELECT * FROM messages WHERE session_key = 1 AND seq > 0 ORDER BY seq");
    assert!(history.contains("messages_session_seq"), "{history}");
    assert!(!history.contains("TEMP B-TREE"), "history must not sort: {history}");
    let open = plan("SELECT * FROM tool_calls WHERE session_key = 1 AND state IN ('pending', 'running')");
    assert!(open.contains("tool_calls_open"), "{open}");
}

#[tokio::test]
async fn migrates_forward_from_version_3() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    // The last version whose rows referred to their session by its id.
    let previous = 3;
    let id = SessionId::new_random();
    let other = SessionId::new_random();
    {
        // A file written by the previous version of the schema, with data in it.
        let mut conn = Connection::open(&path).unwrap();
        assert_eq!(migrations::migrate_to(&mut conn, previous).unwrap(), previous);
        conn.execute(
            "INSERT INTO sessions (id, title, created_at, updated_at) VALUES (?1, 'old', 1, 2)",
            [id.as_str()],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO messages (session_id, seq, role, content, created_at)
             VALUES (?1, 1, 'user', '[{\"type\":\"text\",\"text\":\"from the old version\"}]', 3)",
            [id.as_str()],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO tool_calls (session_id, call_id, name, arguments, state, started_at, created_at)
             VALUES (?1, 'old-call', 'fs_read', '{}', 'running', 4, 4)",
            [id.as_str()],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO compactions (session_id, cursor, summary, created_at) VALUES (?1, 1, 'earlier', 5)",
            [id.as_str()],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO runs (session_id, state, updated_at) VALUES (?1, '{\"parked\":true}', 6)",
            [id.as_str()],
        )
        .unwrap();
        // A second session, so keys are not all 1.
        conn.execute(
            "INSERT INTO sessions (id, title, created_at, updated_at) VALUES (?1, 'other', 1, 1)",
            [other.as_str()],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO messages (session_id, seq, role, content, created_at)
             VALUES (?1, 1, 'user', '[{\"type\":\"text\",\"text\":\"other session\"}]', 3)",
            [other.as_str()],
        )
        .unwrap();
        conn.execute("INSERT INTO key_value (key, value) VALUES ('k', 'v')", [])
            .unwrap();
    }
    let store = SqliteStore::open(&path).await.unwrap();
    assert_eq!(
        store.schema_version().await.unwrap(),
        SqliteStore::latest_schema_version()
    );
    let info = store.session(&id).await.unwrap().unwrap();
    assert_eq!(info.title.as_deref(), Some("old"));
    // The last change is the newest message's (written at 3), later than the row's 2.
    assert_eq!((info.created_at_ms, info.updated_at_ms), (1, 3));
    let messages = store.load_messages(&id, 0).await.unwrap();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].message.text(), "from the old version");
    assert_eq!(
        store.load_messages(&other, 0).await.unwrap()[0].message.text(),
        "other session"
    );
    let open = store.open_tool_calls(&id).await.unwrap();
    assert_eq!(open.len(), 1);
    assert_eq!(
        (open[0].call_id.as_str(), open[0].state),
        ("old-call", ToolCallState::Running)
    );
    assert_eq!(open[0].session_id, id);
    let compaction = store.latest_compaction(&id).await.unwrap().unwrap();
    assert_eq!((compaction.cursor, compaction.summary.as_str()), (1, "earlier"));
    assert_eq!(
        store.parked_run(&id).await.unwrap(),
        Some(serde_json::json!({"parked": true}))
    );
    assert_eq!(store.kv_get("k").await.unwrap().as_deref(), Some("v"));
    // What the new version added works on the migrated file.
    store
        .upsert_tool_call(&ToolCallRecord::pending(id.clone(), "c", "t", "{}"))
        .await
        .unwrap();
    store
        .append_messages(&id, 2, &[Message::assistant("new")])
        .await
        .unwrap();
    // Foreign keys are on again: a stale sequence number still conflicts, and deleting a
    // session still takes everything of it along.
    let stale = store.append_messages(&id, 2, &[Message::assistant("again")]).await;
    assert!(
        matches!(stale, Err(StoreError::Conflict { actual: 3, .. })),
        "{stale:?}"
    );
    // Opening again is a no-op.
    drop(store);
    let again = SqliteStore::open(&path).await.unwrap();
    assert_eq!(again.load_messages(&id, 0).await.unwrap().len(), 2);
    again.delete_session(&other).await.unwrap();
    drop(again);
    let conn = Connection::open(&path).unwrap();
    let foreign_keys: i64 = conn
        .query_row("PRAGMA foreign_key_check", [], |_| Ok(1))
        .optional()
        .unwrap()
        .unwrap_or(0);
    assert_eq!(foreign_keys, 0, "no row may refer to a missing one");
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(
        count("SELECT COUNT(*) FROM messages"),
        2,
        "the deleted session's message went with it"
    );
    assert_eq!(count("SELECT COUNT(*) FROM sessions"), 1);
}

/// Version 4 -> 5 rebuilds `tool_calls` (its state check without `IN`) and drops
/// `sessions_updated`: every record survives with its state, the check still refuses an
/// unknown state, and sessions are still listed by their last change.
#[tokio::test]
async fn migrates_forward_from_version_4() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v4.db");
    let (id, other) = (SessionId::new_random(), SessionId::new_random());
    {
        let mut conn = Connection::open(&path).unwrap();
        assert_eq!(migrations::migrate_to(&mut conn, 4).unwrap(), 4);
        for (sid, updated) in [(&id, 10), (&other, 20)] {
            conn.execute(
                "INSERT INTO sessions (id, title, created_at, updated_at) VALUES (?1, NULL, 1, ?2)",
                rusqlite::params![sid.as_str(), updated],
            )
            .unwrap();
        }
        let key: i64 = conn
            .query_row("SELECT key FROM sessions WHERE id = ?1", [id.as_str()], |r| r.get(0))
            .unwrap();
        // `id` got a message after `other` was last updated: it is the most recent.
        conn.execute(
            "INSERT INTO messages (session_key, seq, role, content, created_at)
             VALUES (?1, 1, 'user', '[{\"type\":\"text\",\"text\":\"hi\"}]', 30)",
            [key],
        )
        .unwrap();
        for (call, state) in [("a", "pending"), ("b", "running"), ("c", "succeeded"), ("d", "denied")] {
            conn.execute(
                "INSERT INTO tool_calls (session_key, call_id, name, arguments, state, raw_result, created_at)
                 VALUES (?1, ?2, 'fs_read', '{\"path\":\"x\"}', ?3, 'out', 5)",
                rusqlite::params![key, call, state],
            )
            .unwrap();
        }
    }
    let store = SqliteStore::open(&path).await.unwrap();
    assert_eq!(store.schema_version().await.unwrap(), 5);
    let records = store.tool_calls(&id).await.unwrap();
    let states: Vec<(&str, ToolCallState)> = records.iter().map(|r| (r.call_id.as_str(), r.state)).collect();
    assert_eq!(
        states,
        vec![
            ("a", ToolCallState::Pending),
            ("b", ToolCallState::Running),
            ("c", ToolCallState::Succeeded),
            ("d", ToolCallState::Denied),
        ]
    );
    assert_eq!(records[2].raw_result.as_deref(), Some("out"));
    assert_eq!(records[2].arguments, r#"{"path":"x"}"#);
    assert_eq!(store.open_tool_calls(&id).await.unwrap().len(), 2);
    // The state machine still holds on the rebuilt table.
    let mut done = records[1].clone();
    done.state = ToolCallState::Failed;
    store.upsert_tool_call(&done).await.unwrap();
    let mut back = records[1].clone();
    back.state = ToolCallState::Pending;
    assert!(matches!(
        store.upsert_tool_call(&back).await,
        Err(StoreError::InvalidTransition { .. })
    ));
    let listed: Vec<(SessionId, i64)> = store
        .list_sessions()
        .await
        .unwrap()
        .into_iter()
        .map(|s| (s.id, s.updated_at_ms))
        .collect();
    assert_eq!(listed, vec![(id.clone(), 30), (other.clone(), 20)]);
    drop(store);
    let conn = Connection::open(&path).unwrap();
    let refused = conn.execute(
        "INSERT INTO tool_calls (session_key, call_id, name, arguments, state, created_at)
         VALUES (1, 'e', 't', '{}', 'exploded', 1)",
        [],
    );
    assert!(refused.is_err(), "the state check is still there");
    let indexes: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name = 'sessions_updated'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(indexes, 0);
}

/// Appending messages makes a session the most recently changed one, although the session's
/// row is not written for it.
#[tokio::test]
async fn an_append_counts_as_a_change_of_its_session() {
    let (_dir, store) = fresh().await;
    let (old, new) = (SessionId::new_random(), SessionId::new_random());
    let mut info = SessionInfo::new(old.clone());
    info.updated_at_ms -= 10_000;
    store.create_session(&info).await.unwrap();
    let mut info = SessionInfo::new(new.clone());
    info.updated_at_ms -= 5_000;
    store.create_session(&info).await.unwrap();
    let ids = |list: Vec<SessionInfo>| list.into_iter().map(|s| s.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.list_sessions().await.unwrap()),
        vec![new.clone(), old.clone()]
    );
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    store.append_messages(&old, 1, &[Message::user("hello")]).await.unwrap();
    store.flush(&old).await.unwrap();
    assert_eq!(
        ids(store.list_sessions().await.unwrap()),
        vec![old.clone(), new.clone()]
    );
    let changed = store.session(&old).await.unwrap().unwrap().updated_at_ms;
    assert!(changed >= before, "{changed} < {before}");
}

#[tokio::test]
async fn a_newer_schema_is_refused_not_downgraded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("future.db");
    let future = SqliteStore::latest_schema_version() + 1;
    {
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", future).unwrap();
    }
    let err = SqliteStore::open(&path).await.unwrap_err();
    assert_eq!(
        err,
        StoreError::SchemaTooNew {
            found: future,
            supported: SqliteStore::latest_schema_version()
        }
    );
    assert!(err.to_string().contains("upgrade agent-store"));
    let conn = Connection::open(&path).unwrap();
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, future, "the version must not be touched");
}

#[tokio::test]
async fn store_work_does_not_block_a_current_thread_runtime() {
    // On a single-threaded runtime a blocking store would stall this ticker.
    let (_dir, store) = fresh().await;
    let id = session(&store).await;
    let ticks = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counter = ticks.clone();
    let ticker = tokio::spawn(async move {
        loop {
            counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            tokio::task::yield_now().await;
        }
    });
    let batch: Vec<Message> = (0..2000).map(|i| Message::user(format!("m{i}"))).collect();
    store.append_messages(&id, 1, &batch).await.unwrap();
    store.load_messages(&id, 0).await.unwrap();
    ticker.abort();
    assert!(
        ticks.load(std::sync::atomic::Ordering::Relaxed) > 0,
        "the executor thread ran other tasks while SQLite worked"
    );
}
