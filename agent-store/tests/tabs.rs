#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! The tab registry in SQLite: round trips, the literal prefix query (`%` and `_` never widen a
//! match), and a tab hub restarted from the database file.

use std::sync::Arc;

use agent_core::tabs::{
    DeliveryStatus, Origin, QueuedMessage, TabHub, TabHubBuilder, TabId, TabPermissions, TabRecord, TabStore,
};
use agent_core::{Agent, Message, Role, ScriptStep, ScriptedProvider, ScriptedReply, SessionId, Store};
use agent_store::SqliteStore;
use rusqlite::Connection;

fn id(lead: &str) -> TabId {
    let template = "00000000-0000-4000-8000-000000000000";
    let mut s: Vec<char> = template.chars().collect();
    let mut i = 0;
    for c in lead.chars() {
        while s[i] == '-' {
            i += 1;
        }
        s[i] = c;
        i += 1;
    }
    TabId::parse(&s.into_iter().collect::<String>()).unwrap()
}

fn record(tab: &TabId, open: bool) -> TabRecord {
    let mut r = TabRecord::new(tab.clone(), SessionId::new_random(), 6, TabPermissions::none());
    r.open = open;
    r
}

async fn fresh() -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("profile.db")).await.unwrap();
    (dir, store)
}

fn ids(records: Vec<TabRecord>) -> Vec<TabId> {
    records.into_iter().map(|r| r.id).collect()
}

#[tokio::test]
async fn tab_records_round_trip_and_update_in_place() {
    let (_dir, store) = fresh().await;
    let tab = id("6fe8a");
    let mut r = record(&tab, true);
    r.permissions = TabPermissions {
        send_to_tab: true,
        read_tab: false,
    };
    r.auto_wake_budget = 3;
    let mut image = Message::user("look");
    image.content.push(agent_core::ContentPart::Image {
        media_type: "image/png".into(),
        source: agent_core::ImageSource::Base64 {
            data: "iVBORw0=".into(),
        },
    });
    r.queue = vec![
        QueuedMessage::new(Message::user("[message from tab 1234]\n\nhello"), Origin::Agent),
        QueuedMessage::new(image, Origin::Human),
    ];
    store.save_tab(&r).await.unwrap();
    assert_eq!(store.tab(&tab).await.unwrap().unwrap(), r);

    r.open = false;
    r.queue.clear();
    r.auto_wake_budget = 6;
    store.save_tab(&r).await.unwrap();
    assert_eq!(store.tab(&tab).await.unwrap().unwrap(), r);
    assert_eq!(store.list_tabs().await.unwrap(), [r.clone()]);

    store.delete_tab(&tab).await.unwrap();
    assert!(store.tab(&tab).await.unwrap().is_none());
    store.delete_tab(&tab).await.unwrap();
}

#[tokio::test]
async fn the_prefix_query_is_literal_open_only_and_parameterised() {
    let (dir, store) = fresh().await;
    let a = id("6fe8a");
    let b = id("6fe8b");
    let closed = id("6fe8c");
    let other = id("1234");
    for r in [
        record(&a, true),
        record(&b, true),
        record(&closed, false),
        record(&other, true),
    ] {
        store.save_tab(&r).await.unwrap();
    }
    assert_eq!(
        ids(store.find_open_by_prefix("6fe8").await.unwrap()),
        [a.clone(), b.clone()]
    );
    assert_eq!(
        ids(store.find_open_by_prefix("6fe8b").await.unwrap()),
        std::slice::from_ref(&b)
    );
    assert_eq!(
        ids(store.find_open_by_prefix(a.as_str()).await.unwrap()),
        std::slice::from_ref(&a)
    );
    assert!(
        store.find_open_by_prefix("6fe8c").await.unwrap().is_empty(),
        "closed tabs never match"
    );
    assert!(store.find_open_by_prefix("ffff").await.unwrap().is_empty());

    // Each of these would match with a raw `LIKE '<input>%'`; here they match nothing.
    let conn = Connection::open(dir.path().join("profile.db")).unwrap();
    for wildcard in ["%", "6fe8%", "6fe_", "_", "____", "%a", "6f%8"] {
        let like_count: i64 = conn
            .query_row(
                "SELECT count(*) FROM tabs WHERE is_open = 1 AND id LIKE ?1",
                [format!("{wildcard}%")],
                |r| r.get(0),
            )
            .unwrap();
        assert!(like_count > 0, "{wildcard:?} is a real LIKE wildcard pattern");
        assert!(
            store.find_open_by_prefix(wildcard).await.unwrap().is_empty(),
            "{wildcard:?} must match nothing"
        );
    }
    // The search is an index range, not a table scan.
    let plan: String = conn
        .query_row(
            "EXPLAIN QUERY PLAN SELECT id FROM tabs WHERE is_open = 1 AND id >= ?1 AND id < ?2
               AND substr(id, 1, length(?1)) = ?1",
            ["6fe8", "6fe9"],
            |r| r.get(3),
        )
        .unwrap();
    assert!(plan.contains("USING") && plan.contains("INDEX"), "{plan}");
}

#[tokio::test]
async fn the_schema_has_a_tabs_table() {
    let (dir, store) = fresh().await;
    assert_eq!(
        store.schema_version().await.unwrap(),
        SqliteStore::latest_schema_version()
    );
    let conn = Connection::open(dir.path().join("profile.db")).unwrap();
    let n: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'tabs'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 1);
}

fn hub(store: &SqliteStore) -> TabHubBuilder {
    let sessions: Arc<dyn Store> = Arc::new(store.clone());
    let tabs: Arc<dyn TabStore> = Arc::new(store.clone());
    TabHub::builder()
        .agent_factory(|_| {
            Agent::builder().provider(ScriptedProvider::from_fn(|req| {
                let text = req.messages.last().map(Message::text).unwrap_or_default();
                ScriptStep::Reply(ScriptedReply::text(format!("got: {text}")))
            }))
        })
        .store(sessions)
        .tab_store(tabs)
        .auto_wake_budget(1)
}

#[tokio::test]
async fn a_hub_restarts_from_the_database_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.db");
    let a = id("6fe8a");
    let b = id("6fe8b");
    {
        let store = SqliteStore::open(&path).await.unwrap();
        let hub = hub(&store).build().await.unwrap();
        hub.open_tab_with(a.clone(), TabPermissions::all()).await.unwrap();
        hub.open_tab_with(b.clone(), TabPermissions::none()).await.unwrap();
        assert_eq!(hub.handle(&a).as_deref(), Some("6fe8a"));
        hub.deliver(&a, "first", Origin::Agent).await.unwrap();
        hub.wait_all_idle().await;
        let held = hub.deliver(&a, "held", Origin::Agent).await.unwrap();
        assert_eq!(held.status, DeliveryStatus::Held);
        hub.close_tab(&b).await.unwrap();
    }

    // A new process: the same file.
    let store = SqliteStore::open(&path).await.unwrap();
    let hub = hub(&store).build().await.unwrap();
    let info = hub.tab(&a).unwrap();
    assert_eq!(info.handle.as_deref(), Some("6fe8"));
    assert_eq!((info.open, info.queue_len, info.auto_wake_budget), (true, 1, 0));
    assert_eq!(info.permissions, TabPermissions::all());
    assert!(!hub.tab(&b).unwrap().open);
    assert_eq!(hub.read(&a).await.unwrap().last_response.as_deref(), Some("got: first"));

    hub.deliver(&a, "back", Origin::Human).await.unwrap();
    hub.wait_all_idle().await;
    let messages = hub.session(&a).await.unwrap().messages().await.unwrap();
    let users: Vec<String> = messages
        .iter()
        .filter(|m| m.message.role == Role::User)
        .map(|m| m.message.text())
        .collect();
    // The person's message runs first in a turn of its own; the held agent message after it.
    assert_eq!(users, ["first", "back", "held"]);
    assert_eq!(hub.read(&a).await.unwrap().last_response.as_deref(), Some("got: held"));
    // The person refilled the budget (1); the held message's own turn spent it.
    assert_eq!(hub.tab(&a).unwrap().auto_wake_budget, 0);
}
