//! Typed delivery through the tab hub: a message that expects an answer matching a schema
//! starts a typed turn, gets a turn of its own when queued, and keeps its schema in the stored
//! queue across a restart.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod tabs_support;

use std::sync::Arc;

use agent_core::tabs::{
    DeliveredMessage, DeliveryStatus, MemoryTabStore, Origin, QueuedMessage, TabPermissions, TabStore,
};
use agent_core::{MemoryStore, Message, ModelRequest, OutcomeStatus, OutputSchema, ScriptStep, ScriptedReply, Store};
use serde_json::json;
use tabs_support::{Brains, blocking_echo, id, last, new_turn};

#[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
struct City {
    name: String,
}

fn city_schema() -> OutputSchema {
    OutputSchema::new(
        "city",
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
    )
}

/// Answers a typed turn with `{"name": <the user's text>}`, anything else as `blocking_echo`.
fn typed_or_echo(req: &ModelRequest) -> ScriptStep {
    if req.output_schema.is_some() && new_turn(req) {
        return ScriptStep::Reply(ScriptedReply::json(json!({"name": last(req).text()})));
    }
    blocking_echo(req)
}

/// The text and whether the schema was asked for, of each turn's first request.
fn turns(brains: &Brains, tab: &agent_core::tabs::TabId) -> Vec<(String, Option<String>)> {
    brains
        .requests(tab)
        .into_iter()
        .filter(new_turn)
        .map(|r| (last(&r).text(), r.output_schema.map(|s| s.name)))
        .collect()
}

#[tokio::test]
async fn a_typed_delivery_starts_a_typed_turn_whose_outcome_carries_the_answer() {
    let brains = Brains::default();
    let hub = brains.hub().build().await.unwrap();
    let tab = hub.open_tab().await.unwrap();
    brains.set(&tab, typed_or_echo);

    let message = DeliveredMessage::from("Oslo").expecting_typed::<City>();
    let delivery = hub.deliver(&tab, message, Origin::Human).await.unwrap();
    assert_eq!(delivery.status, DeliveryStatus::Started);
    let outcome = delivery.run.unwrap().outcome().await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert_eq!(outcome.structured_as::<City>().unwrap(), City { name: "Oslo".into() });
    assert_eq!(turns(&brains, &tab), [("Oslo".to_owned(), Some("City".to_owned()))]);
}

#[tokio::test]
async fn a_queued_typed_message_gets_a_turn_of_its_own_between_the_others() {
    let brains = Brains::default();
    let hub = brains.hub().build().await.unwrap();
    let tab = hub.open_tab().await.unwrap();
    brains.set(&tab, typed_or_echo);

    let first = hub.deliver(&tab, "block", Origin::Human).await.unwrap();
    for message in [
        DeliveredMessage::from("a"),
        DeliveredMessage::from("b"),
        DeliveredMessage::from("Bergen").expecting(city_schema()),
        DeliveredMessage::from("c"),
    ] {
        let queued = hub.deliver(&tab, message, Origin::Human).await.unwrap();
        assert_eq!(queued.status, DeliveryStatus::Queued);
    }
    brains.release();
    assert_eq!(first.run.unwrap().outcome().await.status, OutcomeStatus::Done);
    hub.wait_all_idle().await;

    // The untyped messages before it are merged as usual; the typed one is never merged, and
    // the one after it waits for a turn of its own.
    assert_eq!(
        turns(&brains, &tab),
        [
            ("block".to_owned(), None),
            ("a\n\nb".to_owned(), None),
            ("Bergen".to_owned(), Some("city".to_owned())),
            ("c".to_owned(), None),
        ]
    );
}

#[tokio::test]
async fn a_typed_message_restored_from_the_stored_queue_is_still_typed() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let tab_store: Arc<dyn TabStore> = Arc::new(MemoryTabStore::new());
    let tab = id("7e5d");
    {
        let brains = Brains::default();
        let hub = brains
            .hub()
            .store(store.clone())
            .tab_store(tab_store.clone())
            .build()
            .await
            .unwrap();
        hub.open_tab_with(tab.clone(), TabPermissions::none()).await.unwrap();
    }
    // A typed message left in the queue by a process that died before starting its turn.
    let mut record = tab_store.tab(&tab).await.unwrap().unwrap();
    record.queue.push(QueuedMessage {
        output: Some(city_schema()),
        ..QueuedMessage::new(Message::user("Tromsø"), Origin::Human)
    });
    tab_store.save_tab(&record).await.unwrap();
    // The schema is part of the stored record.
    let stored = serde_json::to_value(tab_store.tab(&tab).await.unwrap().unwrap().queue).unwrap();
    assert_eq!(stored[0]["output"]["name"], "city", "{stored}");

    let brains = Brains::default();
    brains.set(&tab, typed_or_echo);
    let hub = brains.hub().store(store).tab_store(tab_store).build().await.unwrap();
    hub.wait_all_idle().await;
    assert_eq!(turns(&brains, &tab), [("Tromsø".to_owned(), Some("city".to_owned()))]);
    let read = hub.read(&tab).await.unwrap();
    assert_eq!(read.last_response.as_deref(), Some(r#"{"name":"Tromsø"}"#));
}
