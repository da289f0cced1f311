//! The tab hub: deliver starts or queues, queued messages start the next turn, the agent state
//! follows the runs, the auto-wake budget stops agent ping-pong and a human refills it, and the
//! registry survives a restart.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod tabs_support;

use std::sync::Arc;

use agent_core::tabs::{DeliveryStatus, Origin, TabError, TabState};
use agent_core::tabs::{MemoryTabStore, TabEventKind, TabPermissions, TabStore};
use agent_core::{
    EventKind, MemoryStore, Message, OutcomeStatus, ProviderError, Role, ScriptStep, ScriptedReply, Store, TurnOrigin,
};
use tabs_support::{Brains, answer, blocking_echo, drain, id, last, new_turn, notices};

#[tokio::test]
async fn an_idle_tab_starts_a_turn() {
    let brains = Brains::default();
    let hub = brains.hub().build().await.unwrap();
    let tab = hub.open_tab().await.unwrap();
    brains.set(&tab, answer(|t| format!("got: {t}")));
    let info = hub.tab(&tab).unwrap();
    assert_eq!(info.state, TabState::Idle);
    assert_eq!(info.auto_wake_budget, 6);
    assert!(info.open);

    let mut events = hub.subscribe();
    let delivery = hub.deliver(&tab, "hello", Origin::Human).await.unwrap();
    assert_eq!(delivery.status, DeliveryStatus::Started);
    assert_eq!(delivery.queue_len, 0);
    assert_eq!(hub.tab(&tab).unwrap().state, TabState::Running);
    let outcome = delivery.run.unwrap().outcome().await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    let info = hub.wait_idle(&tab).await.unwrap();
    assert_eq!(info.state, TabState::Idle);
    assert_eq!(
        hub.read(&tab).await.unwrap().last_response.as_deref(),
        Some("got: hello")
    );

    // The hub forwards the turn's events and reports the state changes.
    let events = drain(&mut events);
    let names: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.kind {
            TabEventKind::Agent { event } => Some(event.kind.name()),
            TabEventKind::StateChanged { state } => Some(state.as_str()),
            _ => None,
        })
        .filter(|n| *n != "content_token")
        .collect();
    assert_eq!(names.first(), Some(&"running"));
    assert!(
        names.contains(&"run_started") && names.contains(&"run_completed"),
        "{names:?}"
    );
    assert_eq!(names.last(), Some(&"idle"));
    // Events serialize with their tab and a type.
    let json = serde_json::to_value(&events[0]).unwrap();
    assert_eq!(json["tab_id"], tab.as_str());
    assert_eq!(json["type"], "state_changed");
}

#[tokio::test]
async fn the_host_reads_a_delivered_run_from_its_start_after_the_hub_forwarded_it() {
    use futures::StreamExt;
    let brains = Brains::default();
    let hub = brains.hub().build().await.unwrap();
    let tab = hub.open_tab().await.unwrap();
    brains.set(&tab, answer(|t| format!("got: {t}")));
    let run = hub.deliver(&tab, "hello", Origin::Human).await.unwrap().run.unwrap();
    // The hub has forwarded every event and seen the run end before the host looks.
    hub.wait_idle(&tab).await.unwrap();
    let names: Vec<&'static str> = run.events().map(|e| e.kind.name()).collect().await;
    assert_eq!(names.first(), Some(&"run_started"), "{names:?}");
    assert_eq!(names.last(), Some(&"run_completed"), "{names:?}");
}

#[tokio::test]
async fn a_running_tab_queues_and_the_queue_starts_a_new_turn_when_the_turn_ends() {
    let brains = Brains::default();
    let hub = brains.hub().build().await.unwrap();
    let tab = hub.open_tab().await.unwrap();
    brains.set(&tab, blocking_echo);
    let mut events = hub.subscribe();

    let first = hub.deliver(&tab, "block", Origin::Human).await.unwrap();
    assert_eq!(first.status, DeliveryStatus::Started);

    let second = hub.deliver(&tab, "second", Origin::Human).await.unwrap();
    assert_eq!(second.status, DeliveryStatus::Queued);
    assert_eq!(second.queue_len, 1);
    assert!(second.run.is_none());
    let third = hub.deliver(&tab, "third", Origin::Agent).await.unwrap();
    assert_eq!(third.status, DeliveryStatus::Queued);
    assert_eq!(third.queue_len, 2);
    let info = hub.tab(&tab).unwrap();
    assert_eq!((info.state, info.queue_len, info.held), (TabState::Running, 2, false));

    let queued: Vec<(usize, String)> = drain(&mut events)
        .into_iter()
        .filter_map(|e| match e.kind {
            TabEventKind::Agent { event } => match event.kind {
                EventKind::MessageQueued { queue_len, origin } => Some((queue_len, origin)),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(queued, [(1, "human".to_owned()), (2, "agent".to_owned())]);

    // The first turn ends; the queued messages start the next turns at once: the person's
    // first, then the agent's in a turn of its own (never merged into the person's text).
    brains.release();
    assert_eq!(first.run.unwrap().outcome().await.status, OutcomeStatus::Done);
    hub.wait_all_idle().await;
    assert_eq!(brains.turns(&tab), 3);
    let turns: Vec<String> = brains
        .requests(&tab)
        .into_iter()
        .filter(new_turn)
        .map(|r| last(&r).text())
        .collect();
    assert_eq!(turns, ["block", "second", "third"]);
    let info = hub.tab(&tab).unwrap();
    assert_eq!((info.state, info.queue_len), (TabState::Idle, 0));
    assert_eq!(
        info.auto_wake_budget, 5,
        "the person's turn spends no budget; the agent's own turn spends one"
    );
    assert_eq!(
        hub.read(&tab).await.unwrap().last_response.as_deref(),
        Some("got: third")
    );
    // The history holds both turns, in order.
    let texts: Vec<String> = hub
        .session(&tab)
        .await
        .unwrap()
        .messages()
        .await
        .unwrap()
        .into_iter()
        .filter(|m| m.message.role == Role::User)
        .map(|m| m.message.text())
        .collect();
    assert_eq!(texts, ["block", "second", "third"]);
}

#[tokio::test]
async fn an_agent_message_wakes_an_idle_tab_and_spends_budget_a_human_refills_it() {
    let brains = Brains::default();
    let hub = brains.hub().build().await.unwrap();
    let tab = hub.open_tab().await.unwrap();
    let d = hub.deliver(&tab, "from a peer", Origin::Agent).await.unwrap();
    assert_eq!(d.status, DeliveryStatus::Started);
    assert_eq!(d.auto_wake_budget, 5);
    hub.wait_idle(&tab).await.unwrap();
    let d = hub.deliver(&tab, "again", Origin::Agent).await.unwrap();
    assert_eq!(d.auto_wake_budget, 4);
    hub.wait_idle(&tab).await.unwrap();
    let d = hub.deliver(&tab, "a person", Origin::Human).await.unwrap();
    assert_eq!(d.status, DeliveryStatus::Started);
    assert_eq!(d.auto_wake_budget, 6);
    hub.wait_idle(&tab).await.unwrap();
    assert_eq!(hub.tab(&tab).unwrap().auto_wake_budget, 6);
}

#[tokio::test]
async fn an_errored_tab_starts_a_new_turn() {
    let brains = Brains::default();
    let hub = brains.hub().build().await.unwrap();
    let tab = hub.open_tab().await.unwrap();
    let calls = std::sync::atomic::AtomicUsize::new(0);
    brains.set(&tab, move |_| {
        if calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            ScriptStep::Error(ProviderError::BadRequest("boom".into()))
        } else {
            ScriptStep::Reply(ScriptedReply::text("recovered"))
        }
    });
    let d = hub.deliver(&tab, "one", Origin::Human).await.unwrap();
    assert_eq!(d.run.unwrap().outcome().await.status, OutcomeStatus::Error);
    let info = hub.wait_idle(&tab).await.unwrap();
    assert_eq!(info.state, TabState::Error);

    let d = hub.deliver(&tab, "two", Origin::Agent).await.unwrap();
    assert_eq!(d.status, DeliveryStatus::Started, "error counts as not running");
    assert_eq!(d.run.unwrap().outcome().await.status, OutcomeStatus::Done);
    assert_eq!(hub.wait_idle(&tab).await.unwrap().state, TabState::Idle);
    assert_eq!(
        hub.read(&tab).await.unwrap().last_response.as_deref(),
        Some("recovered")
    );
}

#[tokio::test]
async fn held_agent_messages_wait_for_a_human_and_are_never_dropped() {
    let brains = Brains::default();
    let hub = brains.hub().auto_wake_budget(1).build().await.unwrap();
    let tab = hub.open_tab().await.unwrap();
    brains.set(&tab, answer(|t| format!("got: {t}")));
    let mut events = hub.subscribe();

    assert_eq!(
        hub.deliver(&tab, "a1", Origin::Agent).await.unwrap().status,
        DeliveryStatus::Started
    );
    hub.wait_idle(&tab).await.unwrap();
    let d = hub.deliver(&tab, "a2", Origin::Agent).await.unwrap();
    assert_eq!(
        (d.status, d.queue_len, d.auto_wake_budget),
        (DeliveryStatus::Held, 1, 0)
    );
    let d = hub.deliver(&tab, "a3", Origin::Agent).await.unwrap();
    assert_eq!((d.status, d.queue_len), (DeliveryStatus::Held, 2));
    let info = hub.tab(&tab).unwrap();
    assert!(info.held);
    assert_eq!(info.state, TabState::Idle);
    assert_eq!(brains.turns(&tab), 1, "held messages do not wake the tab");
    let notes = notices(&drain(&mut events));
    assert_eq!(notes.len(), 2);
    assert!(notes.iter().all(|(t, c)| t == &tab && c == "auto_wake_budget_spent"));

    // A person writes: the budget refills; the person's message runs first in a turn of its
    // own, then the held messages (one sender, so one turn), in order.
    let d = hub.deliver(&tab, "human", Origin::Human).await.unwrap();
    assert_eq!(d.status, DeliveryStatus::Started);
    assert_eq!(d.auto_wake_budget, 1);
    hub.wait_idle(&tab).await.unwrap();
    let turns: Vec<String> = brains
        .requests(&tab)
        .into_iter()
        .filter(new_turn)
        .map(|r| last(&r).text())
        .collect();
    assert_eq!(turns, ["a1", "human", "a2\n\na3"]);
    assert_eq!(
        hub.read(&tab).await.unwrap().last_response.as_deref(),
        Some("got: a2\n\na3")
    );
    assert!(!hub.tab(&tab).unwrap().held);
}

#[tokio::test]
async fn an_agent_message_queued_past_the_budget_during_a_turn_is_held_at_its_end() {
    let brains = Brains::default();
    let hub = brains.hub().auto_wake_budget(1).build().await.unwrap();
    let tab = hub.open_tab().await.unwrap();
    brains.set(&tab, blocking_echo);
    let first = hub.deliver(&tab, "block", Origin::Agent).await.unwrap();
    assert_eq!((first.status, first.auto_wake_budget), (DeliveryStatus::Started, 0));
    let d = hub.deliver(&tab, "more", Origin::Agent).await.unwrap();
    assert_eq!(
        d.status,
        DeliveryStatus::Held,
        "it will not wake the tab when the turn ends"
    );
    brains.release();
    first.run.unwrap().outcome().await;
    hub.wait_all_idle().await;
    assert_eq!(brains.turns(&tab), 1);
    let info = hub.tab(&tab).unwrap();
    assert!(info.held);
    assert_eq!(info.queue_len, 1);
}

/// Two agents that answer every message by messaging the other one.
fn ping_pong(peer: &'static str) -> impl Fn(&agent_core::ModelRequest) -> ScriptStep + Send + Sync {
    move |req| {
        if new_turn(req) {
            ScriptStep::Reply(ScriptedReply::tool_call(
                "send_to_tab",
                serde_json::json!({"tab_id": peer, "message": "your turn"}),
            ))
        } else {
            ScriptStep::Reply(ScriptedReply::text(format!("sent: {}", last(req).text())))
        }
    }
}

#[tokio::test]
async fn agent_ping_pong_stops_at_the_budget_and_a_human_message_refills_it() {
    let brains = Brains::default();
    let hub = brains
        .hub()
        .default_permissions(TabPermissions::all())
        .build()
        .await
        .unwrap();
    let a = id("aaaa");
    let b = id("bbbb");
    hub.open_tab_with(a.clone(), TabPermissions::all()).await.unwrap();
    hub.open_tab_with(b.clone(), TabPermissions::all()).await.unwrap();
    brains.set(&a, ping_pong("bbbb"));
    brains.set(&b, ping_pong("aaaa"));
    let mut events = hub.subscribe();

    hub.deliver(&a, "start a conversation with bbbb", Origin::Human)
        .await
        .unwrap();
    hub.wait_all_idle().await;

    // a: one human turn plus 6 agent wakes; b: 6 agent wakes; then b is held.
    assert_eq!(brains.turns(&a), 7);
    assert_eq!(brains.turns(&b), 6);
    let (ia, ib) = (hub.tab(&a).unwrap(), hub.tab(&b).unwrap());
    assert_eq!((ia.auto_wake_budget, ib.auto_wake_budget), (0, 0));
    assert_eq!((ia.state, ib.state), (TabState::Idle, TabState::Idle));
    assert!(ib.held && ib.queue_len == 1, "the last message is kept: {ib:?}");
    assert!(!ia.held);
    let notes = notices(&drain(&mut events));
    assert_eq!(notes, [(b.clone(), "auto_wake_budget_spent".to_owned())]);
    // The sender was told to stop.
    let told: Vec<String> = brains
        .requests(&a)
        .iter()
        .filter(|r| last(r).role == Role::Tool)
        .map(|r| last(r).text())
        .collect();
    assert!(
        told.last().unwrap().contains("held — do not keep resending"),
        "{told:?}"
    );
    assert!(
        told[..told.len() - 1]
            .iter()
            .all(|t| t.starts_with("Delivered to tab bbbb"))
    );

    // A person writes to b: its budget refills; the person's message runs in a turn of its
    // own, then the held message from a in another turn that names a as its origin.
    let mut events = hub.subscribe();
    let d = hub.deliver(&b, "please go on", Origin::Human).await.unwrap();
    assert_eq!(d.status, DeliveryStatus::Started);
    hub.wait_all_idle().await;
    let turns: Vec<String> = brains
        .requests(&b)
        .iter()
        .filter(|r| new_turn(r))
        .map(|r| last(r).text())
        .collect();
    assert_eq!(turns[turns.len() - 2], "please go on");
    let held_turn = &turns[turns.len() - 1];
    assert!(
        held_turn.starts_with("[message from tab aaaa: written by that tab's agent, not by your person]\n"),
        "{held_turn}"
    );
    assert_eq!(
        tabs_support::unwrap_untrusted(held_turn),
        ("tab aaaa".to_owned(), "your turn".to_owned())
    );
    let origins: Vec<TurnOrigin> = drain(&mut events)
        .into_iter()
        .filter(|e| e.tab_id == b)
        .filter_map(|e| match e.kind {
            TabEventKind::Agent { event } => match event.kind {
                EventKind::RunStarted { origin, .. } => Some(origin),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(
        origins,
        [
            TurnOrigin::Person,
            TurnOrigin::Tab {
                tab_id: Some(a.to_string()),
                handle: Some("aaaa".into())
            }
        ]
    );
    // Both of b's replies found a at 0: held (oldest kept), nothing else ran there.
    assert_eq!(brains.turns(&b), 8);
    assert_eq!(brains.turns(&a), 7);
    let ia = hub.tab(&a).unwrap();
    assert!(ia.held && ia.queue_len == 2, "{ia:?}");
    assert_eq!(hub.tab(&b).unwrap().auto_wake_budget, 5);

    // A person writes to a too: now both have budget and the exchange resumes, bounded again.
    hub.deliver(&a, "carry on", Origin::Human).await.unwrap();
    hub.wait_all_idle().await;
    let (ia, ib) = (hub.tab(&a).unwrap(), hub.tab(&b).unwrap());
    assert!(ia.held || ib.held, "a budget ran out again: {ia:?} {ib:?}");
    assert!(brains.turns(&a) > 7 && brains.turns(&a) <= 7 + 1 + 6);
    assert!(brains.turns(&b) > 8 && brains.turns(&b) <= 8 + 5);
}

#[tokio::test]
async fn delivering_to_closed_or_unknown_tabs_fails() {
    let brains = Brains::default();
    let hub = brains.hub().build().await.unwrap();
    let tab = hub.open_tab().await.unwrap();
    hub.close_tab(&tab).await.unwrap();
    assert!(matches!(
        hub.deliver(&tab, "hi", Origin::Human).await,
        Err(TabError::Closed(_))
    ));
    assert!(matches!(
        hub.deliver(&id("ffff"), "hi", Origin::Human).await,
        Err(TabError::NotFound(_))
    ));
    assert!(matches!(
        hub.open_tab_with(tab.clone(), TabPermissions::none()).await,
        Err(TabError::AlreadyExists(_))
    ));
    hub.reopen_tab(&tab).await.unwrap();
    assert_eq!(
        hub.deliver(&tab, "hi", Origin::Human).await.unwrap().status,
        DeliveryStatus::Started
    );
}

#[tokio::test]
async fn closing_a_running_tab_cancels_its_turn_and_keeps_the_queue() {
    let brains = Brains::default();
    let hub = brains.hub().build().await.unwrap();
    let tab = hub.open_tab().await.unwrap();
    brains.set(&tab, blocking_echo);
    let first = hub.deliver(&tab, "block", Origin::Human).await.unwrap();
    hub.deliver(&tab, "queued", Origin::Human).await.unwrap();
    hub.close_tab(&tab).await.unwrap();
    assert_eq!(first.run.unwrap().outcome().await.status, OutcomeStatus::Cancelled);
    hub.wait_all_idle().await;
    let info = hub.tab(&tab).unwrap();
    assert_eq!((info.open, info.queue_len, info.state), (false, 1, TabState::Idle));
    assert!(
        brains.turns(&tab) <= 1,
        "the queued message did not start a turn in a closed tab"
    );
    // Reopening delivers what was waiting.
    hub.reopen_tab(&tab).await.unwrap();
    hub.wait_all_idle().await;
    assert_eq!(
        hub.read(&tab).await.unwrap().last_response.as_deref(),
        Some("got: queued")
    );
}

#[tokio::test]
async fn the_registry_and_held_messages_survive_a_restart() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let tab_store: Arc<dyn TabStore> = Arc::new(MemoryTabStore::new());
    let a = id("6fe8a");
    let b = id("6fe8b");
    let brains = Brains::default();
    {
        let hub = brains
            .hub()
            .store(store.clone())
            .tab_store(tab_store.clone())
            .auto_wake_budget(1)
            .build()
            .await
            .unwrap();
        hub.open_tab_with(a.clone(), TabPermissions::all()).await.unwrap();
        hub.open_tab_with(b.clone(), TabPermissions::none()).await.unwrap();
        brains.set(&a, answer(|t| format!("got: {t}")));
        hub.deliver(&a, "remember me", Origin::Agent).await.unwrap();
        hub.wait_all_idle().await;
        assert_eq!(
            hub.deliver(&a, "held one", Origin::Agent).await.unwrap().status,
            DeliveryStatus::Held
        );
        hub.close_tab(&b).await.unwrap();
    }

    let brains2 = Brains::default();
    brains2.set(&a, answer(|t| format!("got: {t}")));
    let hub = brains2
        .hub()
        .store(store.clone())
        .tab_store(tab_store)
        .auto_wake_budget(1)
        .build()
        .await
        .unwrap();
    let info = hub.tab(&a).unwrap();
    assert_eq!(
        info.handle.as_deref(),
        Some("6fe8"),
        "b is closed, so a's handle is short"
    );
    assert_eq!((info.open, info.queue_len, info.auto_wake_budget), (true, 1, 0));
    assert!(info.held);
    assert_eq!(info.permissions, TabPermissions::all());
    assert!(!hub.tab(&b).unwrap().open);
    assert_eq!(brains2.turns(&a), 0, "held messages stay held after a restart");
    // The last completed turn is read from the store, before the tab's agent exists.
    assert_eq!(
        hub.read(&a).await.unwrap().last_response.as_deref(),
        Some("got: remember me")
    );

    hub.deliver(&a, "I am back", Origin::Human).await.unwrap();
    hub.wait_all_idle().await;
    let request = brains2.requests(&a).pop().unwrap();
    let users: Vec<String> = request
        .messages
        .iter()
        .filter(|m| m.role == Role::User)
        .map(Message::text)
        .collect();
    assert_eq!(
        users,
        ["remember me", "I am back", "held one"],
        "the session continues: the person's message first, then the held one in its own turn"
    );
}

#[tokio::test]
async fn queued_messages_restored_with_budget_start_at_build() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let tab_store: Arc<dyn TabStore> = Arc::new(MemoryTabStore::new());
    let brains = Brains::default();
    let tab = id("abcd");
    {
        let hub = brains
            .hub()
            .store(store.clone())
            .tab_store(tab_store.clone())
            .build()
            .await
            .unwrap();
        hub.open_tab_with(tab.clone(), TabPermissions::none()).await.unwrap();
        brains.set(&tab, blocking_echo);
        let first = hub.deliver(&tab, "block", Origin::Human).await.unwrap();
        hub.deliver(&tab, "after the crash", Origin::Human).await.unwrap();
        // The process "dies" mid-turn: the run is cancelled, but the queue is in the tab store.
        first.run.unwrap().cancel();
        hub.take_queue(&tab).await.map(|_| ()).unwrap_or(());
    }
    // Put the message back as if the crash happened before the turn could take it.
    let mut record = tab_store.tab(&tab).await.unwrap().unwrap();
    record.queue.push(agent_core::tabs::QueuedMessage::new(
        Message::user("after the crash"),
        Origin::Human,
    ));
    tab_store.save_tab(&record).await.unwrap();

    let brains2 = Brains::default();
    brains2.set(&tab, answer(|t| format!("got: {t}")));
    let hub = brains2.hub().store(store).tab_store(tab_store).build().await.unwrap();
    hub.wait_all_idle().await;
    assert_eq!(brains2.turns(&tab), 1, "the restored queue started a turn");
    assert_eq!(
        hub.read(&tab).await.unwrap().last_response.as_deref(),
        Some("got: after the crash")
    );
}

/// The model's step that asks the tab's person to confirm ("Proceed?"), parking the turn.
fn ask_to_proceed() -> ScriptStep {
    ScriptStep::Reply(ScriptedReply::tool_call(
        agent_core::CLARIFICATION_TOOL,
        serde_json::json!({"kind": "confirm", "question": "Proceed?"}),
    ))
}

/// The run's caller may see its outcome before the hub's watcher of that run does: a message
/// delivered right then is decided on the turn's end, not on the tab's last known state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_message_right_after_a_turn_parks_on_a_question_is_held() {
    let brains = Brains::default();
    let hub = brains.hub().build().await.unwrap();
    let tab = hub.open_tab().await.unwrap();
    brains.set(&tab, |req| {
        let m = last(req);
        match m.role {
            Role::User if m.text() == "ask" => ask_to_proceed(),
            _ => ScriptStep::Reply(ScriptedReply::text(format!("got: {}", m.text()))),
        }
    });
    for round in 0..200 {
        let d = hub.deliver(&tab, "ask", Origin::Human).await.unwrap();
        assert_eq!(d.run.unwrap().outcome().await.status, OutcomeStatus::AwaitingUser);
        let d = hub.deliver(&tab, "from a peer", Origin::Agent).await.unwrap();
        assert_eq!(d.status, DeliveryStatus::Held, "round {round}");
        assert!(d.awaiting_user, "round {round}");
        let question = hub.session(&tab).await.unwrap().pending_clarification().unwrap();
        hub.dismiss_clarification(&tab, &question.id).await.unwrap();
        hub.wait_idle(&tab).await.unwrap();
    }
}

#[tokio::test]
async fn a_tab_parked_on_a_question_holds_agent_messages_until_its_person_answers() {
    let brains = Brains::default();
    let hub = brains.hub().build().await.unwrap();
    let tab = hub.open_tab().await.unwrap();
    brains.set(&tab, |req| {
        let m = last(req);
        match m.role {
            Role::User if m.text() == "ask" => ask_to_proceed(),
            Role::User => ScriptStep::Reply(ScriptedReply::text(format!("got: {}", m.text()))),
            _ => ScriptStep::Reply(ScriptedReply::text(format!("after: {}", m.text()))),
        }
    });
    let mut events = hub.subscribe();
    let d = hub.deliver(&tab, "ask", Origin::Human).await.unwrap();
    assert_eq!(d.run.unwrap().outcome().await.status, OutcomeStatus::AwaitingUser);
    let info = hub.wait_idle(&tab).await.unwrap();
    assert_eq!(info.state, TabState::Idle);
    assert!(info.awaiting_user);

    // Another agent's message must not dismiss the person's question: it is held.
    let d = hub.deliver(&tab, "from a peer", Origin::Agent).await.unwrap();
    assert_eq!(d.status, DeliveryStatus::Held);
    assert!(d.awaiting_user);
    assert_eq!(d.auto_wake_budget, 6, "held messages spend nothing");
    assert!(notices(&drain(&mut events)).contains(&(tab.clone(), "awaiting_user".to_owned())));
    let question = hub.session(&tab).await.unwrap().pending_clarification().unwrap();

    // A wrong kind of answer is refused and nothing changes.
    assert!(matches!(
        hub.answer_clarification(&tab, &question.id, "maybe").await,
        Err(TabError::Clarification(_))
    ));
    assert_eq!(hub.tab(&tab).unwrap().state, TabState::Idle);

    // The person answers: the turn continues, then the held message starts the next turn.
    let run = hub.answer_clarification(&tab, &question.id, "yes").await.unwrap();
    assert_eq!(hub.tab(&tab).unwrap().state, TabState::Running);
    assert_eq!(run.outcome().await.status, OutcomeStatus::Done);
    hub.wait_all_idle().await;
    assert_eq!(
        brains.turns(&tab),
        2,
        "the answer resumed the turn; the held message made one more"
    );
    assert_eq!(
        hub.read(&tab).await.unwrap().last_response.as_deref(),
        Some("got: from a peer")
    );
    let info = hub.tab(&tab).unwrap();
    assert!(!info.awaiting_user && !info.held);
    assert_eq!(
        info.auto_wake_budget, 5,
        "the answer refilled the budget; the wake spent one"
    );
}

#[tokio::test]
async fn the_host_dismisses_a_tab_question_and_held_messages_start() {
    let brains = Brains::default();
    let hub = brains.hub().build().await.unwrap();
    let tab = hub.open_tab().await.unwrap();
    brains.set(&tab, |req| {
        let m = last(req);
        match m.role {
            Role::User if m.text() == "ask" => ask_to_proceed(),
            Role::User => ScriptStep::Reply(ScriptedReply::text(format!("got: {}", m.text()))),
            _ => ScriptStep::Reply(ScriptedReply::text(format!("after: {}", m.text()))),
        }
    });
    let d = hub.deliver(&tab, "ask", Origin::Human).await.unwrap();
    assert_eq!(d.run.unwrap().outcome().await.status, OutcomeStatus::AwaitingUser);
    hub.wait_idle(&tab).await.unwrap();
    let d = hub.deliver(&tab, "from a peer", Origin::Agent).await.unwrap();
    assert_eq!(d.status, DeliveryStatus::Held);
    let question = hub.session(&tab).await.unwrap().pending_clarification().unwrap();

    hub.dismiss_clarification(&tab, &question.id).await.unwrap();
    assert!(hub.session(&tab).await.unwrap().pending_clarification().is_none());
    // The held message was waiting only for the question: it starts a turn now.
    hub.wait_all_idle().await;
    assert_eq!(
        brains.turns(&tab),
        2,
        "the dismissal resumed nothing; the held message made one turn"
    );
    assert_eq!(
        hub.read(&tab).await.unwrap().last_response.as_deref(),
        Some("got: from a peer")
    );
    let info = hub.tab(&tab).unwrap();
    assert!(!info.awaiting_user && !info.held);
    assert_eq!(
        info.auto_wake_budget, 5,
        "a dismissal refills nothing; the wake spent one"
    );
    // The model saw the dismissal as the question's result.
    let seen = brains.requests(&tab).last().cloned().unwrap();
    assert!(
        seen.messages
            .iter()
            .any(|m| m.role == Role::Tool && m.text().starts_with("[Clarification dismissed]: the person dismissed")),
        "{:?}",
        seen.messages
    );
    // A question no longer pending cannot be dismissed or answered again.
    assert!(matches!(
        hub.dismiss_clarification(&tab, &question.id).await,
        Err(TabError::Clarification(_))
    ));
    assert!(matches!(
        hub.answer_clarification(&tab, &question.id, "yes").await,
        Err(TabError::Clarification(_))
    ));
}

#[tokio::test]
async fn opening_and_closing_tabs_is_announced_with_handles() {
    let brains = Brains::default();
    let hub = brains.hub().build().await.unwrap();
    let mut events = hub.subscribe();
    let a = id("6fe8a");
    let b = id("6fe8b");
    hub.open_tab_with(a.clone(), TabPermissions::none()).await.unwrap();
    hub.open_tab_with(b.clone(), TabPermissions::none()).await.unwrap();
    hub.close_tab(&a).await.unwrap();
    hub.close_tab(&a).await.unwrap(); // closing twice is a no-op
    let seen: Vec<(String, String)> = drain(&mut events)
        .into_iter()
        .filter_map(|e| match e.kind {
            TabEventKind::TabOpened { handle } => Some(("opened".to_owned(), handle)),
            TabEventKind::TabClosed => Some(("closed".to_owned(), e.tab_id.to_string())),
            _ => None,
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("opened".to_owned(), "6fe8".to_owned()),
            ("opened".to_owned(), "6fe8b".to_owned()),
            ("closed".to_owned(), a.to_string()),
        ]
    );
    assert_eq!(hub.handles(), [(b.clone(), "6fe8".to_owned())]);
    let tabs = hub.tabs();
    assert_eq!(tabs.len(), 2);
    assert!(tabs.iter().any(|t| t.id == a && !t.open && t.handle.is_none()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_deliveries_are_each_read_exactly_once() {
    let brains = Brains::default();
    let hub = brains.hub().build().await.unwrap();
    let tab = hub.open_tab().await.unwrap();
    brains.set(&tab, answer(|t| format!("got: {t}")));
    let mut tasks = Vec::new();
    for i in 0..60 {
        let hub = hub.clone();
        let tab = tab.clone();
        tasks.push(tokio::spawn(async move {
            // Humans only: agent messages could be held by the budget, which is tested above.
            hub.deliver(&tab, format!("m{i}"), Origin::Human).await.unwrap().status
        }));
    }
    let mut started = 0;
    for t in tasks {
        if t.await.unwrap() == DeliveryStatus::Started {
            started += 1;
        }
    }
    assert!(started >= 1);
    hub.wait_all_idle().await;
    let info = hub.tab(&tab).unwrap();
    assert_eq!((info.state, info.queue_len), (TabState::Idle, 0), "nothing stranded");
    let mut seen: Vec<String> = hub
        .session(&tab)
        .await
        .unwrap()
        .messages()
        .await
        .unwrap()
        .into_iter()
        .filter(|m| m.message.role == Role::User)
        .flat_map(|m| m.message.text().split("\n\n").map(str::to_owned).collect::<Vec<_>>())
        .collect();
    seen.sort();
    let mut expected: Vec<String> = (0..60).map(|i| format!("m{i}")).collect();
    expected.sort();
    assert_eq!(seen, expected, "every message read exactly once");
}
