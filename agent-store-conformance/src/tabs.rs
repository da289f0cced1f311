//! The tab registry: records with their queues, the literal prefix query, list order, and a
//! tab hub restarted from the store.

use std::sync::Arc;

use agent_core::tabs::{
    DeliveryStatus, Origin, QueuedMessage, TabHub, TabHubBuilder, TabId, TabPermissions, TabRecord,
};
use agent_core::{
    Agent, ContentPart, ImageSource, Message, Role, ScriptStep, ScriptedProvider, ScriptedReply, SessionId,
};

use crate::fixture::{Fixture, Handles};

/// A tab id that starts with `lead` (hex digits), the rest zeros.
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

fn ids(records: Vec<TabRecord>) -> Vec<TabId> {
    records.into_iter().map(|r| r.id).collect()
}

/// A record with permissions, a budget and a queue (an agent message, a person's message with
/// an image, a typed request) comes back equal, is replaced in place, and is deleted (deleting
/// twice is fine).
pub async fn tab_records_round_trip_and_update_in_place(f: Fixture) {
    let tabs = f.tabs().as_ref();
    let tab = id("6fe8a");
    assert!(tabs.tab(&tab).await.unwrap().is_none());
    let mut r = record(&tab, true);
    r.permissions = TabPermissions {
        send_to_tab: true,
        read_tab: false,
    };
    r.auto_wake_budget = 3;
    let mut image = Message::user("look");
    image.content.push(ContentPart::Image {
        media_type: "image/png".into(),
        source: ImageSource::Base64 {
            data: "iVBORw0=".into(),
        },
    });
    r.queue = vec![
        QueuedMessage::from_tab(
            Message::user("[message from tab 1234]\n\nhello"),
            id("1234"),
            Some("1234".into()),
        ),
        QueuedMessage::new(image, Origin::Human),
        QueuedMessage::new(Message::user("nul \0 and ✓"), Origin::Human),
    ];
    tabs.save_tab(&r).await.unwrap();
    assert_eq!(tabs.tab(&tab).await.unwrap().unwrap(), r);

    r.open = false;
    r.queue.clear();
    r.auto_wake_budget = 6;
    r.permissions = TabPermissions::all();
    r.updated_at_ms += 1;
    tabs.save_tab(&r).await.unwrap();
    assert_eq!(tabs.tab(&tab).await.unwrap().unwrap(), r);
    assert_eq!(tabs.list_tabs().await.unwrap(), [r.clone()]);
    let again = f.reopen().await;
    assert_eq!(again.tabs.tab(&tab).await.unwrap().unwrap(), r);

    tabs.delete_tab(&tab).await.unwrap();
    assert!(tabs.tab(&tab).await.unwrap().is_none());
    tabs.delete_tab(&tab).await.unwrap();
    assert!(tabs.list_tabs().await.unwrap().is_empty());
}

/// Prefix lookup matches open tabs only, sorted by id, and compares literally: `%` and `_`
/// (wildcards in SQL's LIKE) match only themselves, that is nothing.
pub async fn the_prefix_query_is_literal_and_open_only(f: Fixture) {
    let tabs = f.tabs().as_ref();
    let a = id("6fe8a");
    let b = id("6fe8b");
    let closed = id("6fe8c");
    let other = id("1234");
    // Saved out of order, so a sorted answer is the store's doing.
    for r in [
        record(&b, true),
        record(&closed, false),
        record(&other, true),
        record(&a, true),
    ] {
        tabs.save_tab(&r).await.unwrap();
    }
    assert_eq!(
        ids(tabs.find_open_by_prefix("6fe8").await.unwrap()),
        [a.clone(), b.clone()]
    );
    assert_eq!(
        ids(tabs.find_open_by_prefix("6fe8b").await.unwrap()),
        std::slice::from_ref(&b)
    );
    assert_eq!(
        ids(tabs.find_open_by_prefix(a.as_str()).await.unwrap()),
        std::slice::from_ref(&a)
    );
    assert!(
        tabs.find_open_by_prefix("6fe8c").await.unwrap().is_empty(),
        "closed tabs never match"
    );
    assert!(tabs.find_open_by_prefix("ffff").await.unwrap().is_empty());
    assert!(
        tabs.find_open_by_prefix("6FE8").await.unwrap().is_empty(),
        "case-sensitive"
    );
    assert_eq!(
        ids(tabs.find_open_by_prefix("").await.unwrap()),
        [other.clone(), a.clone(), b.clone()],
        "the empty prefix matches every open tab"
    );
    for wildcard in [
        "%", "6fe8%", "6fe_", "_", "____", "%a", "6f%8", "6fe8a%", "6fe8[ab]", ".*",
    ] {
        assert!(
            tabs.find_open_by_prefix(wildcard).await.unwrap().is_empty(),
            "{wildcard:?} must match nothing"
        );
    }
}

/// Tabs are listed oldest first, ties broken by id, closed ones included.
pub async fn tabs_are_listed_oldest_first(f: Fixture) {
    let tabs = f.tabs().as_ref();
    let mut older = record(&id("ffff"), false);
    older.created_at_ms = 1_000;
    let mut tie_b = record(&id("bbbb"), true);
    tie_b.created_at_ms = 2_000;
    let mut tie_a = record(&id("aaaa"), true);
    tie_a.created_at_ms = 2_000;
    let mut newest = record(&id("0000"), true);
    newest.created_at_ms = 3_000;
    for r in [&newest, &tie_b, &older, &tie_a] {
        tabs.save_tab(r).await.unwrap();
    }
    assert_eq!(
        ids(tabs.list_tabs().await.unwrap()),
        [older.id, tie_a.id, tie_b.id, newest.id]
    );
}

fn hub(handles: &Handles) -> TabHubBuilder {
    TabHub::builder()
        .agent_factory(|_| {
            Agent::builder().provider(ScriptedProvider::from_fn(|req| {
                let text = req.messages.last().map(Message::text).unwrap_or_default();
                ScriptStep::Reply(ScriptedReply::text(format!("got: {text}")))
            }))
        })
        .store(Arc::clone(&handles.store))
        .tab_store(Arc::clone(&handles.tabs))
        .auto_wake_budget(1)
}

/// A hub restarted on the same store (a new process) finds its tabs, their permissions,
/// budgets and held messages, and runs the held message after the person's.
pub async fn a_hub_restarts_from_the_store(f: Fixture) {
    let a = id("6fe8a");
    let b = id("6fe8b");
    {
        let first = Handles {
            store: f.store().clone(),
            tabs: f.tabs().clone(),
        };
        let hub = hub(&first).build().await.unwrap();
        hub.open_tab_with(a.clone(), TabPermissions::all()).await.unwrap();
        hub.open_tab_with(b.clone(), TabPermissions::none()).await.unwrap();
        assert_eq!(hub.handle(&a).as_deref(), Some("6fe8a"));
        hub.deliver(&a, "first", Origin::Agent).await.unwrap();
        hub.wait_all_idle().await;
        let held = hub.deliver(&a, "held", Origin::Agent).await.unwrap();
        assert_eq!(held.status, DeliveryStatus::Held);
        hub.close_tab(&b).await.unwrap();
        let session = hub.session(&a).await.unwrap();
        f.store().flush(session.id()).await.unwrap();
    }

    let again = f.reopen().await;
    let hub = hub(&again).build().await.unwrap();
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
    assert_eq!(hub.tab(&a).unwrap().auto_wake_budget, 0);
}
