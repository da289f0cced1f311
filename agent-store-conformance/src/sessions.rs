//! Sessions: creation, listing order, renaming, deletion with everything it holds, and what a
//! missing session answers.

use agent_core::{Compaction, Message, SessionId, SessionInfo, StoreError, ToolCallRecord, session_key_prefix};
use serde_json::json;

use crate::fixture::Fixture;
use crate::kinds::{append_durably, now_ms, texts};

fn ids(list: Vec<SessionInfo>) -> Vec<SessionId> {
    list.into_iter().map(|s| s.id).collect()
}

/// Sessions are listed most recently updated first; a taken id is refused; renaming counts as
/// an update; deleting removes everything stored for the session (writes not yet flushed
/// included), and the id can be used again from empty.
pub async fn sessions_are_listed_renamed_and_deleted(f: Fixture) {
    let store = f.store().as_ref();
    assert!(store.list_sessions().await.unwrap().is_empty());
    let first = SessionId::new_random();
    let mut info = SessionInfo::new(first.clone());
    info.updated_at_ms -= 10_000;
    store.create_session(&info).await.unwrap();
    let second = SessionId::new_random();
    let mut info = SessionInfo::new(second.clone());
    info.updated_at_ms -= 5_000;
    info.title = Some("Second".into());
    store.create_session(&info).await.unwrap();
    assert_eq!(
        store.session(&second).await.unwrap(),
        Some(info.clone()),
        "created as given"
    );
    assert_eq!(
        store
            .create_session(&SessionInfo::new(second.clone()))
            .await
            .unwrap_err(),
        StoreError::AlreadyExists(second.clone())
    );
    assert_eq!(
        ids(store.list_sessions().await.unwrap()),
        vec![second.clone(), first.clone()],
        "most recently updated first"
    );

    store.set_title(&first, "Renamed").await.unwrap();
    let listed = store.list_sessions().await.unwrap();
    assert_eq!(listed[0].id, first, "renaming counts as an update");
    assert_eq!(listed[0].title.as_deref(), Some("Renamed"));

    // Not flushed: a write-behind store may still hold these when the session is deleted.
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
    store.delete_session(&first).await.unwrap();
    assert!(store.session(&first).await.unwrap().is_none());
    assert_eq!(ids(store.list_sessions().await.unwrap()), vec![second.clone()]);
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
    assert_eq!(store.last_seq(&first).await.unwrap(), 0);
    assert!(store.tool_calls(&first).await.unwrap().is_empty());
    assert!(store.latest_compaction(&first).await.unwrap().is_none());
    assert!(store.parked_run(&first).await.unwrap().is_none());
    append_durably(store, &first, 1, &[Message::user("again")])
        .await
        .unwrap();
    // The other session was not touched.
    assert_eq!(
        store.session(&second).await.unwrap().unwrap().title.as_deref(),
        Some("Second")
    );
}

/// Every call about a session that does not exist says so (reads of its metadata answer `None`).
pub async fn missing_sessions_are_reported(f: Fixture) {
    let store = f.store().as_ref();
    let ghost = SessionId::new_random();
    let missing = StoreError::SessionNotFound(ghost.clone());
    assert!(store.session(&ghost).await.unwrap().is_none());
    assert_eq!(
        append_durably(store, &ghost, 1, &[Message::user("x")])
            .await
            .unwrap_err(),
        missing
    );
    assert_eq!(store.set_title(&ghost, "x").await.unwrap_err(), missing);
    assert_eq!(store.delete_session(&ghost).await.unwrap_err(), missing);
    assert_eq!(store.load_messages(&ghost, 0).await.unwrap_err(), missing);
    assert_eq!(store.last_seq(&ghost).await.unwrap_err(), missing);
    assert_eq!(
        store
            .upsert_tool_call(&ToolCallRecord::pending(ghost.clone(), "c", "t", "{}"))
            .await
            .unwrap_err(),
        missing
    );
    assert_eq!(store.tool_calls(&ghost).await.unwrap_err(), missing);
    let compaction = Compaction {
        session_id: ghost.clone(),
        cursor: 1,
        summary: "s".into(),
        created_at_ms: 1,
    };
    assert_eq!(store.add_compaction(&compaction).await.unwrap_err(), missing);
    assert_eq!(store.latest_compaction(&ghost).await.unwrap_err(), missing);
    assert_eq!(
        store.set_parked_run(&ghost, Some(&json!({}))).await.unwrap_err(),
        missing
    );
    assert_eq!(store.set_parked_run(&ghost, None).await.unwrap_err(), missing);
    assert_eq!(store.parked_run(&ghost).await.unwrap_err(), missing);
    assert!(store.session(&ghost).await.unwrap().is_none(), "nothing created it");
}

/// Appending messages makes a session the most recently changed one.
pub async fn an_append_counts_as_a_change_of_its_session(f: Fixture) {
    let store = f.store().as_ref();
    let (old, new) = (SessionId::new_random(), SessionId::new_random());
    let mut info = SessionInfo::new(old.clone());
    info.updated_at_ms -= 10_000;
    store.create_session(&info).await.unwrap();
    let mut info = SessionInfo::new(new.clone());
    info.updated_at_ms -= 5_000;
    store.create_session(&info).await.unwrap();
    assert_eq!(
        ids(store.list_sessions().await.unwrap()),
        vec![new.clone(), old.clone()]
    );
    let before = now_ms();
    append_durably(store, &old, 1, &[Message::user("hello")]).await.unwrap();
    assert_eq!(
        ids(store.list_sessions().await.unwrap()),
        vec![old.clone(), new.clone()]
    );
    let changed = store.session(&old).await.unwrap().unwrap().updated_at_ms;
    assert!(changed >= before, "{changed} < {before}");
}

/// A session created through `create_generated_session` (which a write-behind store may
/// queue) is there for the next write and read, like any other.
pub async fn generated_sessions_behave_like_created_ones(f: Fixture) {
    let store = f.store().as_ref();
    let id = SessionId::new_random();
    store
        .create_generated_session(&SessionInfo::new(id.clone()))
        .await
        .unwrap();
    append_durably(store, &id, 1, &[Message::user("hi"), Message::assistant("hello")])
        .await
        .unwrap();
    assert_eq!(texts(store, &id).await, vec!["hi", "hello"]);
    assert!(store.session(&id).await.unwrap().is_some());
    let again = f.reopen().await;
    assert_eq!(again.store.last_seq(&id).await.unwrap(), 2);
}

/// Deleting a session deletes its key-value entries (the keys under `session_key_prefix`, where
/// the agent keeps per-session state such as its spend), and no other entry: not another
/// session's, not a key that merely looks alike.
pub async fn deleting_a_session_deletes_its_key_values(f: Fixture) {
    let store = f.store().as_ref();
    let (gone, kept) = (SessionId::new_random(), SessionId::new_random());
    store.create_session(&SessionInfo::new(gone.clone())).await.unwrap();
    store.create_session(&SessionInfo::new(kept.clone())).await.unwrap();
    let own = session_key_prefix(&gone);
    let other = session_key_prefix(&kept);
    let bare = own.trim_end_matches('/').to_owned();
    for key in [format!("{own}spend"), format!("{own}a/b"), own.clone()] {
        store.kv_set(&key, "1").await.unwrap();
    }
    // Alike but outside the prefix: the prefix without its '/', and with a byte after it.
    let survivors = [
        format!("{other}spend"),
        bare.clone(),
        format!("{bare}0"),
        format!("{bare}.x"),
        "shared".to_owned(),
    ];
    for key in &survivors {
        store.kv_set(key, "2").await.unwrap();
    }
    store.delete_session(&gone).await.unwrap();
    for key in [format!("{own}spend"), format!("{own}a/b"), own.clone()] {
        assert_eq!(store.kv_get(&key).await.unwrap(), None, "{key} outlived its session");
    }
    for key in &survivors {
        assert_eq!(
            store.kv_get(key).await.unwrap().as_deref(),
            Some("2"),
            "{key} was deleted"
        );
    }
}
