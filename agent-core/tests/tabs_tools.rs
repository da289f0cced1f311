//! The `send_to_tab` and `read_tab` tools: permissions, resolution errors, self-send,
//! provenance, started/queued/held answers, and read_tab's non-blocking snapshot.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod tabs_support;

use agent_core::tabs::{DeliveryStatus, Origin, TabState};
use agent_core::tabs::{READ_TAB, SEND_TO_TAB, TabPermissions};
use agent_core::{Role, ToolError};
use serde_json::json;
use tabs_support::{Brains, answer, blocking_echo, call_tool, id, last, new_turn, unwrap_untrusted};

fn model_error(result: Result<agent_core::ToolOutput, ToolError>) -> String {
    match result {
        Err(ToolError::ForModel { message, .. }) => message,
        other => panic!("expected an error for the model, got {other:?}"),
    }
}

fn text(result: Result<agent_core::ToolOutput, ToolError>) -> String {
    result.unwrap().text_content()
}

#[tokio::test]
async fn both_permissions_are_off_by_default_and_each_gates_its_own_tool() {
    let brains = Brains::default();
    let hub = brains.hub().build().await.unwrap();
    let plain = hub.open_tab().await.unwrap();
    assert_eq!(hub.tab(&plain).unwrap().permissions, TabPermissions::default());
    assert_eq!(TabPermissions::default(), TabPermissions::none());
    let tools = |names: Vec<String>| {
        (
            names.contains(&SEND_TO_TAB.to_owned()),
            names.contains(&READ_TAB.to_owned()),
        )
    };
    let names = hub.session(&plain).await.unwrap().agent().tools().names();
    assert_eq!(tools(names), (false, false));

    let sender = id("5e4d");
    let send_only = TabPermissions {
        send_to_tab: true,
        read_tab: false,
    };
    hub.open_tab_with(sender.clone(), send_only).await.unwrap();
    let names = hub.session(&sender).await.unwrap().agent().tools().names();
    assert_eq!(tools(names), (true, false));

    let reader = id("4ead");
    let read_only = TabPermissions {
        send_to_tab: false,
        read_tab: true,
    };
    hub.open_tab_with(reader.clone(), read_only).await.unwrap();
    let names = hub.session(&reader).await.unwrap().agent().tools().names();
    assert_eq!(tools(names), (false, true));
}

#[tokio::test]
async fn revoking_takes_effect_at_once_and_granting_at_the_next_turn_with_history_kept() {
    let brains = Brains::default();
    let hub = brains.hub().build().await.unwrap();
    let a = id("aaaa");
    let b = id("bbbb");
    hub.open_tab_with(a.clone(), TabPermissions::all()).await.unwrap();
    hub.open_tab_with(b.clone(), TabPermissions::none()).await.unwrap();

    // a's agent was built with the tools; revoking makes them refuse at once.
    let session = hub.session(&a).await.unwrap();
    hub.set_permissions(&a, TabPermissions::none()).await.unwrap();
    let tool = session.agent().tools().get(SEND_TO_TAB).unwrap().clone();
    let err = tool
        .call(
            json!({"tab_id": "bbbb", "message": "hi"}),
            agent_core::ToolContext::detached(session.id().clone(), "c1"),
        )
        .await;
    assert!(model_error(err).contains("not permitted"));

    // b gains read_tab: its next turn runs on a rebuilt agent over the same session.
    hub.deliver(&b, "first", Origin::Human).await.unwrap();
    hub.wait_idle(&b).await.unwrap();
    hub.set_permissions(
        &b,
        TabPermissions {
            send_to_tab: false,
            read_tab: true,
        },
    )
    .await
    .unwrap();
    hub.deliver(&b, "second", Origin::Human).await.unwrap();
    hub.wait_idle(&b).await.unwrap();
    let request = brains.requests(&b).pop().unwrap();
    let tool_names: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
    assert!(tool_names.contains(&READ_TAB) && !tool_names.contains(&SEND_TO_TAB));
    let users: Vec<String> = request
        .messages
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.text())
        .collect();
    assert_eq!(users, ["first", "second"]);
}

#[tokio::test]
async fn send_to_tab_explains_unknown_ambiguous_invalid_and_self_targets() {
    let brains = Brains::default();
    let hub = brains
        .hub()
        .default_permissions(TabPermissions::all())
        .build()
        .await
        .unwrap();
    let me = id("1234");
    let x = id("6fe8a");
    let y = id("6fe8b");
    for t in [&me, &x, &y] {
        hub.open_tab_with(t.clone(), TabPermissions::all()).await.unwrap();
    }
    let send = |target: &str| json!({"tab_id": target, "message": "hello"});

    let none = model_error(call_tool(&hub, &me, SEND_TO_TAB, send("ffff")).await);
    assert!(
        none.contains("no open tab matches") && none.contains("1234, 6fe8a, 6fe8b"),
        "{none}"
    );
    let ambiguous = model_error(call_tool(&hub, &me, SEND_TO_TAB, send("6fe8")).await);
    assert!(
        ambiguous.contains("ambiguous")
            && ambiguous.contains("6fe8a, 6fe8b")
            && ambiguous.contains("one more character"),
        "{ambiguous}"
    );
    let invalid = model_error(call_tool(&hub, &me, SEND_TO_TAB, send("6fe%")).await);
    assert!(invalid.contains("not a tab handle"), "{invalid}");
    let short = model_error(call_tool(&hub, &me, SEND_TO_TAB, send("6fe")).await);
    assert!(short.contains("at least 4"), "{short}");
    let own = model_error(call_tool(&hub, &me, SEND_TO_TAB, send("1234")).await);
    assert!(own.contains("this tab itself"), "{own}");
    let own_full = model_error(call_tool(&hub, &me, SEND_TO_TAB, send(&me.as_str().to_uppercase())).await);
    assert!(own_full.contains("this tab itself"), "{own_full}");
    let empty = model_error(call_tool(&hub, &me, SEND_TO_TAB, json!({"tab_id": "6fe8a", "message": "  "})).await);
    assert!(empty.contains("empty"), "{empty}");

    // Nothing was delivered by any of these.
    hub.wait_all_idle().await;
    for t in [&me, &x, &y] {
        assert_eq!(brains.turns(t), 0);
    }
}

#[tokio::test]
async fn send_to_tab_delivers_with_provenance_and_reports_started_queued_and_held() {
    let brains = Brains::default();
    let hub = brains.hub().auto_wake_budget(2).build().await.unwrap();
    let me = id("1234");
    let target = id("6fe8a");
    hub.open_tab_with(me.clone(), TabPermissions::all()).await.unwrap();
    hub.open_tab_with(target.clone(), TabPermissions::none()).await.unwrap();
    brains.set(&target, blocking_echo);

    // Idle target: a new turn starts, with the provenance prefix.
    let started = text(call_tool(&hub, &me, SEND_TO_TAB, json!({"tab_id": "6FE8", "message": "block"})).await);
    assert!(
        started.starts_with("Delivered to tab 6fe8") && started.contains("started"),
        "{started}"
    );
    // The prefixed text is what the target's model gets; "block" is not matched, so it echoes.
    hub.wait_all_idle().await;
    let request = brains.requests(&target).into_iter().find(new_turn).unwrap();
    let delivered = last(&request).text();
    assert!(
        delivered.starts_with("[message from tab 1234: written by that tab's agent, not by your person]\n"),
        "{delivered}"
    );
    assert_eq!(
        unwrap_untrusted(&delivered),
        ("tab 1234".to_owned(), "block".to_owned())
    );
    assert_eq!(last(&request).role, Role::User);
    assert_eq!(hub.tab(&target).unwrap().auto_wake_budget, 1);

    // Running target: queued. (The target is held running by a human "block" turn.)
    let running = hub.deliver(&target, "block", Origin::Human).await.unwrap();
    assert_eq!(running.status, DeliveryStatus::Started);
    let queued = text(call_tool(&hub, &me, SEND_TO_TAB, json!({"tab_id": "6fe8", "message": "two"})).await);
    assert!(queued.contains("queued"), "{queued}");
    brains.release();
    hub.wait_all_idle().await;
    let answered = hub.read(&target).await.unwrap().last_response.unwrap();
    let answered = answered.strip_prefix("got: [message from tab 1234").unwrap();
    assert_eq!(unwrap_untrusted(answered).1, "two");
    // The human refilled the budget to 2; the queued agent message spent one.
    assert_eq!(hub.tab(&target).unwrap().auto_wake_budget, 1);

    let third = text(call_tool(&hub, &me, SEND_TO_TAB, json!({"tab_id": "6fe8", "message": "three"})).await);
    assert!(third.contains("started"), "{third}");
    hub.wait_all_idle().await;
    let held = text(call_tool(&hub, &me, SEND_TO_TAB, json!({"tab_id": "6fe8", "message": "four"})).await);
    assert!(
        held.starts_with("HELD") && held.contains("held — do not keep resending"),
        "{held}"
    );
    let info = hub.tab(&target).unwrap();
    assert!(info.held && info.queue_len == 1);
}

#[tokio::test]
async fn read_tab_returns_the_last_completed_turn_and_status_without_blocking() {
    let brains = Brains::default();
    let hub = brains.hub().build().await.unwrap();
    let me = id("1234");
    let target = id("6fe8a");
    hub.open_tab_with(me.clone(), TabPermissions::all()).await.unwrap();
    hub.open_tab_with(target.clone(), TabPermissions::none()).await.unwrap();
    brains.set(&target, blocking_echo);
    let read = |hub: agent_core::tabs::TabHub, me: agent_core::tabs::TabId| async move {
        text(call_tool(&hub, &me, READ_TAB, json!({"tab_id": "6fe8"})).await)
    };

    assert_eq!(
        read(hub.clone(), me.clone()).await,
        "Tab 6fe8 (status: idle) has no assistant responses yet."
    );

    // Running its first turn: no completed turn yet, and the call does not wait.
    let first = hub.deliver(&target, "block", Origin::Human).await.unwrap();
    assert_eq!(
        read(hub.clone(), me.clone()).await,
        "Tab 6fe8 (status: running) has no completed turn yet."
    );
    brains.release();
    first.run.unwrap().outcome().await;
    hub.wait_all_idle().await;
    assert_eq!(
        read(hub.clone(), me.clone()).await,
        "<tab_response tab=6fe8 status=idle>\nfirst done\n</tab_response>"
    );

    // Running again: the previous completed turn, with the running status.
    let second = hub.deliver(&target, "block", Origin::Human).await.unwrap();
    // Wait until the second turn is inside its blocking tool (its first model call was made).
    while brains.requests(&target).iter().filter(|r| new_turn(r)).count() < 2 {
        tokio::task::yield_now().await;
    }
    let snapshot = read(hub.clone(), me.clone()).await;
    assert!(
        snapshot.starts_with("<tab_response tab=6fe8 status=running>\nfirst done\n</tab_response>")
            && snapshot.contains("previous completed turn"),
        "{snapshot}"
    );
    assert_eq!(hub.read(&target).await.unwrap().state, TabState::Running);
    brains.release();
    second.run.unwrap().outcome().await;
    hub.wait_all_idle().await;

    hub.deliver(&target, "plain", Origin::Human).await.unwrap();
    hub.wait_all_idle().await;
    assert_eq!(
        read(hub.clone(), me.clone()).await,
        "<tab_response tab=6fe8 status=idle>\ngot: plain\n</tab_response>"
    );

    // A failed turn: the status says error, the last completed answer is still there.
    brains.set(&target, |_| {
        agent_core::ScriptStep::Error(agent_core::ProviderError::BadRequest("boom".into()))
    });
    hub.deliver(&target, "fail", Origin::Human).await.unwrap();
    hub.wait_all_idle().await;
    assert_eq!(
        read(hub.clone(), me.clone()).await,
        "<tab_response tab=6fe8 status=error>\ngot: plain\n</tab_response>"
    );

    // read_tab resolves like send_to_tab.
    let none = model_error(call_tool(&hub, &me, READ_TAB, json!({"tab_id": "ffff"})).await);
    assert!(none.contains("open tabs: 1234, 6fe8"), "{none}");
}

#[tokio::test]
async fn a_model_uses_read_tab_through_the_loop() {
    let brains = Brains::default();
    let hub = brains.hub().build().await.unwrap();
    let me = id("1234");
    let other = id("6fe8a");
    hub.open_tab_with(me.clone(), TabPermissions::all()).await.unwrap();
    hub.open_tab_with(other.clone(), TabPermissions::none()).await.unwrap();
    brains.set(&other, answer(|_| "the weather is fine".into()));
    brains.set(&me, |req| {
        if new_turn(req) {
            agent_core::ScriptStep::Reply(agent_core::ScriptedReply::tool_call(
                READ_TAB,
                json!({"tab_id": "6fe8"}),
            ))
        } else {
            agent_core::ScriptStep::Reply(agent_core::ScriptedReply::text(format!("I read: {}", last(req).text())))
        }
    });
    hub.deliver(&other, "weather?", Origin::Human).await.unwrap();
    hub.wait_all_idle().await;
    hub.deliver(&me, "what did 6fe8 say?", Origin::Human).await.unwrap();
    hub.wait_all_idle().await;
    let read = hub.read(&me).await.unwrap().last_response.unwrap();
    let read = read.strip_prefix("I read: ").unwrap();
    assert_eq!(
        unwrap_untrusted(read),
        (
            "tab 6fe8".to_owned(),
            "<tab_response tab=6fe8 status=idle>\nthe weather is fine\n</tab_response>".to_owned()
        )
    );
}
