#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! Wiring hub tabs to a host's browser tabs: the wiring is there before a tab's agent is
//! built, tabs an agent opens go where the host's policy says, and a closed browser tab is
//! remembered as closed.

use std::sync::{Arc, Mutex};

use agent_core::tabs::{HostTab, OpenedTab, OpenedTabOwner, TabHub, TabId};
use agent_core::{Agent, ScriptedProvider, ScriptedReply, Tool};

async fn hub(policy: OpenedTabOwner, built: Arc<Mutex<Vec<(TabId, HostTab)>>>) -> TabHub {
    TabHub::builder()
        .agent_factory(|_| Agent::builder().provider(ScriptedProvider::new([ScriptedReply::text("ok").into()])))
        .tab_tools(move |tab, hub| {
            // What page tools would see when the hub builds this tab's agent.
            let wired = hub.upgrade().map(|h| h.host_tab(tab)).unwrap();
            built.lock().unwrap().push((tab.clone(), wired));
            Vec::<Arc<dyn Tool>>::new()
        })
        .opened_tab_policy(move |opened: &OpenedTab| {
            if opened.url.contains("keep") {
                OpenedTabOwner::SameAgent
            } else {
                policy
            }
        })
        .build()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_host_tab_is_wired_before_its_agent_is_built() {
    let built = Arc::new(Mutex::new(Vec::new()));
    let hub = hub(OpenedTabOwner::SameAgent, built.clone()).await;
    let tab = hub.open_tab_for_host("host-1").await.unwrap();
    assert_eq!(*built.lock().unwrap(), [(tab.clone(), HostTab::Open("host-1".into()))]);
    assert_eq!(hub.tab_for_host("host-1"), Some(tab.clone()));
    assert_eq!(hub.host_tabs(&tab), ["host-1"]);
    // A plain hub tab has none until the host wires one.
    let plain = hub.open_tab().await.unwrap();
    assert_eq!(hub.host_tab(&plain), HostTab::Unwired);
    hub.wire_host_tab(&plain, "host-2").unwrap();
    assert_eq!(hub.host_tab(&plain).open(), Some("host-2"));
    assert!(hub.wire_host_tab(&TabId::new_random(), "host-3").is_err());
}

#[tokio::test]
async fn opened_tabs_go_where_the_policy_says() {
    let built = Arc::new(Mutex::new(Vec::new()));
    let hub = hub(OpenedTabOwner::NewAgent, built.clone()).await;
    let opener = hub.open_tab_for_host("host-1").await.unwrap();
    let opened = |host_tab: &str, url: &str| OpenedTab {
        opener: opener.clone(),
        host_tab: host_tab.into(),
        url: url.into(),
    };
    let other = hub.adopt_host_tab(&opened("host-2", "http://a/")).await.unwrap();
    assert_ne!(other, opener);
    assert_eq!(hub.host_tab(&other).open(), Some("host-2"));
    assert_eq!(
        hub.host_tab(&opener).open(),
        Some("host-1"),
        "the opener stays on its tab"
    );
    assert_eq!(built.lock().unwrap().len(), 2, "the new tab got its own agent");
    // The policy may keep a tab with its opener, which then works in it.
    assert_eq!(
        hub.adopt_host_tab(&opened("host-3", "http://keep/")).await.unwrap(),
        opener
    );
    assert_eq!(hub.host_tab(&opener).open(), Some("host-3"));
    assert_eq!(hub.host_tabs(&opener), ["host-1", "host-3"]);
}

#[tokio::test]
async fn a_closed_host_tab_is_remembered_and_the_weak_hub_does_not_keep_it_alive() {
    let hub = hub(OpenedTabOwner::SameAgent, Arc::default()).await;
    let tab = hub.open_tab_for_host("host-1").await.unwrap();
    assert_eq!(hub.host_tab_closed("host-1"), Some(tab.clone()));
    assert_eq!(hub.host_tab(&tab), HostTab::Closed("host-1".into()));
    assert!(hub.host_tabs(&tab).is_empty());
    assert_eq!(hub.tab_for_host("host-1"), None);
    assert_eq!(hub.host_tab_closed("host-1"), None);
    let weak = hub.downgrade();
    assert!(weak.upgrade().is_some());
    drop(hub);
    assert!(weak.upgrade().is_none());
}
