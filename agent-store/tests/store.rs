#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! SqliteStore against real database files: schema, indexes, migrations, what only SQLite
//! offers (`open_tool_calls`) or does (refusing at once what it queues, never blocking the
//! executor). What every store promises (round trips, conflicts, concurrent writers, the
//! tool-call state machine, sessions, compactions, parked runs, key-value pairs) is checked for
//! SQLite by agent-store-conformance's tests/sqlite.rs.

use std::sync::Arc;

use agent_core::{Message, SessionId, Store, StoreError, ToolCallRecord, ToolCallState};
use agent_store::{SqliteStore, migrations};
use rusqlite::{Connection, OptionalExtension};
use sessions::session;

// Only `session` is used here; the rest of the module serves other test files.
#[allow(dead_code)]
#[path = "common/sessions.rs"]
mod sessions;

async fn fresh() -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("profile.db")).await.unwrap();
    (dir, store)
}

/// With the default write-behind queue, a write for a session that does not exist is refused
/// by the call itself, not only by a later flush (which the trait would allow).
#[tokio::test]
async fn a_queued_write_for_a_missing_session_is_refused_at_once() {
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
        store
            .upsert_tool_call(&ToolCallRecord::pending(ghost.clone(), "c", "t", "{}"))
            .await
            .unwrap_err(),
        StoreError::SessionNotFound(ghost.clone())
    );
}

/// `open_tool_calls` (SQLite only) lists the pending and running records, not the finished
/// ones. The state machine itself is checked for every store by the conformance suite.
#[tokio::test]
async fn open_tool_calls_are_the_pending_and_running_ones() {
    let (_dir, store) = fresh().await;
    let id = session(&store).await;
    for (n, state) in [
        ToolCallState::Pending,
        ToolCallState::Running,
        ToolCallState::Succeeded,
        ToolCallState::Denied,
    ]
    .into_iter()
    .enumerate()
    {
        let mut record = ToolCallRecord::pending(id.clone(), format!("call_{n}"), "t", "{}");
        store.upsert_tool_call(&record).await.unwrap();
        record.state = state;
        store.upsert_tool_call(&record).await.unwrap();
    }
    let open: Vec<(String, ToolCallState)> = store
        .open_tool_calls(&id)
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.call_id, r.state))
        .collect();
    assert_eq!(
        open,
        vec![
            ("call_0".to_owned(), ToolCallState::Pending),
            ("call_1".to_owned(), ToolCallState::Running)
        ]
    );
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
    let mut other_final = records[1].clone();
    other_final.state = ToolCallState::Succeeded;
    assert!(matches!(
        store.upsert_tool_call(&other_final).await,
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
