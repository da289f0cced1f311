//! Compactions, parked runs, key-value pairs, and text that must survive exactly.

use agent_core::{Compaction, Message, ToolCallRecord, ToolCallState};
use serde_json::json;

use crate::fixture::Fixture;
use crate::kinds::{append_durably, session, upsert_durably};

/// The latest compaction wins; a parked run is stored, replaced and cleared; key-value pairs
/// are set, overwritten and deleted (deleting twice is fine), and are shared by every handle.
pub async fn compactions_parked_runs_and_key_values(f: Fixture) {
    let store = f.store().as_ref();
    let id = session(store).await;
    let other = session(store).await;
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
    assert_eq!(
        latest,
        Compaction {
            session_id: id.clone(),
            cursor: 9,
            summary: "up to 9".into(),
            created_at_ms: 109
        }
    );
    assert!(store.latest_compaction(&other).await.unwrap().is_none(), "per session");

    let parked = json!({"clarification_id": "q1", "question": {"text": "Which file?", "n": [1, 2.5, null]}});
    store.set_parked_run(&id, Some(&parked)).await.unwrap();
    assert_eq!(store.parked_run(&id).await.unwrap(), Some(parked));
    let replaced = json!({"approval": {"calls": ["c1"]}});
    store.set_parked_run(&id, Some(&replaced)).await.unwrap();
    assert_eq!(store.parked_run(&id).await.unwrap(), Some(replaced));
    assert_eq!(store.parked_run(&other).await.unwrap(), None, "per session");
    store.set_parked_run(&id, None).await.unwrap();
    assert_eq!(store.parked_run(&id).await.unwrap(), None);
    store.set_parked_run(&id, None).await.unwrap();

    assert_eq!(store.kv_get("theme").await.unwrap(), None);
    store.kv_set("theme", "dark").await.unwrap();
    store.kv_set("theme", "light").await.unwrap();
    store.kv_set("", "empty key").await.unwrap();
    assert_eq!(store.kv_get("theme").await.unwrap().as_deref(), Some("light"));
    assert_eq!(store.kv_get("").await.unwrap().as_deref(), Some("empty key"));
    let again = f.reopen().await;
    assert_eq!(again.store.kv_get("theme").await.unwrap().as_deref(), Some("light"));
    store.kv_delete("theme").await.unwrap();
    store.kv_delete("theme").await.unwrap();
    assert_eq!(store.kv_get("theme").await.unwrap(), None);
    assert_eq!(store.kv_get("").await.unwrap().as_deref(), Some("empty key"));
}

/// Text from pages, shells and models may hold NUL characters, other controls, any Unicode
/// and be long: every stored string comes back byte for byte.
pub async fn text_with_nul_and_unicode_round_trips_exactly(f: Fixture) {
    let store = f.store().as_ref();
    let odd = "nul:\0 tab:\t cr:\r bell:\u{7} emoji:🐈‍⬛ rtl:\u{202e}abc bom:\u{feff} ünï 'quote\" \\ %_ end";
    let long = format!("{odd}{}", "x".repeat(200_000));
    let id = session(store).await;
    store.set_title(&id, odd).await.unwrap();
    let mut result = Message::tool_result(format!("call{odd}"), format!("tool{odd}"), odd, true);
    result.compressed = Some(long.clone());
    let messages = vec![Message::user(odd), Message::assistant(long.clone()), result];
    append_durably(store, &id, 1, &messages).await.unwrap();

    let mut record = ToolCallRecord::pending(id.clone(), format!("call{odd}"), format!("tool{odd}"), odd);
    upsert_durably(store, &record).await.unwrap();
    record.state = ToolCallState::Failed;
    record.raw_result = Some(long.clone());
    record.compressed_result = Some(odd.into());
    record.error = Some(odd.into());
    upsert_durably(store, &record).await.unwrap();
    store
        .add_compaction(&Compaction {
            session_id: id.clone(),
            cursor: 2,
            summary: long.clone(),
            created_at_ms: 5,
        })
        .await
        .unwrap();
    store.set_parked_run(&id, Some(&json!({ "text": odd }))).await.unwrap();
    store.kv_set(odd, &long).await.unwrap();

    let again = f.reopen().await;
    let store = again.store.as_ref();
    assert_eq!(store.session(&id).await.unwrap().unwrap().title.as_deref(), Some(odd));
    let loaded: Vec<Message> = store
        .load_messages(&id, 0)
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.message)
        .collect();
    assert_eq!(loaded, messages);
    assert_eq!(store.tool_calls(&id).await.unwrap(), vec![record]);
    assert_eq!(store.latest_compaction(&id).await.unwrap().unwrap().summary, long);
    assert_eq!(store.parked_run(&id).await.unwrap(), Some(json!({ "text": odd })));
    assert_eq!(store.kv_get(odd).await.unwrap(), Some(long));
}
