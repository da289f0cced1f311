//! A tab's turn parked for approval: the tab waits for its person (other agents' messages are
//! held), the hub answers or dismisses it, and held messages follow.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::{Arc, Mutex};

use agent_core::tabs::{DeliveryStatus, Origin, TabError, TabHub, TabState};
use agent_core::{
    Agent, ApprovalDecision, GateDecision, OutcomeStatus, Role, ScriptStep, ScriptedProvider, ScriptedReply,
    ToolContext, ToolError, gate_fn, tool_fn,
};
use serde_json::json;

/// A hub whose tabs' agents pay on "pay" (a gated tool whose gate asks the person) and echo
/// anything else; `paid` counts the payments.
async fn hub(paid: Arc<Mutex<u32>>) -> TabHub {
    TabHub::builder()
        .agent_factory(move |_| {
            let paid = paid.clone();
            let pay = tool_fn("pay", "Pays.", move |_: serde_json::Value, _cx: ToolContext| {
                let paid = paid.clone();
                async move {
                    *paid.lock().unwrap() += 1;
                    Ok::<_, ToolError>("paid")
                }
            })
            .gated(true);
            let provider = ScriptedProvider::from_fn(|req| {
                let m = req.messages.last().unwrap();
                match m.role {
                    Role::User if m.text() == "pay" => ScriptStep::Reply(ScriptedReply::tool_call("pay", json!({}))),
                    Role::User => ScriptStep::Reply(ScriptedReply::text(format!("got: {}", m.text()))),
                    _ => ScriptStep::Reply(ScriptedReply::text(format!("after: {}", m.text()))),
                }
            });
            Agent::builder()
                .provider(provider)
                .tool(pay)
                .gate(gate_fn(|_| async { GateDecision::Ask { prompt: None } }))
        })
        .build()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_tab_parked_for_approval_holds_agent_messages_until_its_person_answers() {
    let paid = Arc::new(Mutex::new(0));
    let hub = hub(paid.clone()).await;
    let tab = hub.open_tab().await.unwrap();
    let d = hub.deliver(&tab, "pay", Origin::Human).await.unwrap();
    assert_eq!(d.run.unwrap().outcome().await.status, OutcomeStatus::AwaitingApproval);
    let info = hub.wait_idle(&tab).await.unwrap();
    assert!(info.awaiting_user);
    let d = hub.deliver(&tab, "from a peer", Origin::Agent).await.unwrap();
    assert_eq!(d.status, DeliveryStatus::Held);
    assert!(d.awaiting_user);

    let approval = hub.session(&tab).await.unwrap().pending_approval().unwrap();
    let call = approval.calls[0].call_id.clone();
    assert!(matches!(
        hub.resolve_approval(&tab, &approval.id, vec![]).await,
        Err(TabError::Approval(_))
    ));
    let run = hub
        .resolve_approval(&tab, &approval.id, vec![(call, ApprovalDecision::approve())])
        .await
        .unwrap();
    assert_eq!(hub.tab(&tab).unwrap().state, TabState::Running);
    assert_eq!(run.outcome().await.status, OutcomeStatus::Done);
    hub.wait_all_idle().await;
    assert_eq!(*paid.lock().unwrap(), 1);
    assert_eq!(
        hub.read(&tab).await.unwrap().last_response.as_deref(),
        Some("got: from a peer"),
        "the held message started its turn after the approved one"
    );
    assert!(!hub.tab(&tab).unwrap().awaiting_user);
}

#[tokio::test]
async fn the_host_dismisses_a_tab_approval_and_held_messages_start() {
    let paid = Arc::new(Mutex::new(0));
    let hub = hub(paid.clone()).await;
    let tab = hub.open_tab().await.unwrap();
    let d = hub.deliver(&tab, "pay", Origin::Human).await.unwrap();
    assert_eq!(d.run.unwrap().outcome().await.status, OutcomeStatus::AwaitingApproval);
    hub.wait_idle(&tab).await.unwrap();
    assert_eq!(
        hub.deliver(&tab, "from a peer", Origin::Agent).await.unwrap().status,
        DeliveryStatus::Held
    );
    let approval = hub.session(&tab).await.unwrap().pending_approval().unwrap();
    hub.dismiss_approval(&tab, &approval.id).await.unwrap();
    hub.wait_all_idle().await;
    assert_eq!(*paid.lock().unwrap(), 0);
    assert_eq!(
        hub.read(&tab).await.unwrap().last_response.as_deref(),
        Some("got: from a peer")
    );
    assert!(hub.session(&tab).await.unwrap().pending_approval().is_none());
}
