#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! Page tools bound to an agent's own tab, in real headless Chromium on loopback fixture pages:
//! agents in different tabs act at the same time without touching each other's page or the tab
//! the person looks at; a background tab woken by send_to_tab acts on its own page; a closed
//! tab fails clearly; tab_activate is gated.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::tabs::{OpenedTabOwner, Origin, TabEvent, TabEventKind, TabHub, TabId, TabPermissions};
use agent_core::{
    Agent, AllowAll, EventKind, ModelRequest, OutcomeStatus, Role, ScriptStep, ScriptedProvider, ScriptedReply,
    SessionId, Tool, ToolContext, ToolError, ToolOutput,
};
use agent_tools::{BrowserHost, PageTab, PageToolsConfig, TabInfo, page_tools_for_tab, page_tools_for_tab_with};
use serde_json::{Value, json};
use support::{browser, exclusive, rt, url};

fn host() -> Arc<dyn BrowserHost> {
    Arc::new(browser().clone())
}

/// Opens a browser tab at a fixture and waits for it to settle (it becomes the active tab).
fn open(path: &str) -> TabInfo {
    let h = host();
    rt().block_on(async {
        let tab = h.open_tab(Some(&url(path))).await.expect("open tab");
        h.wait_settled(Some(&tab.id), Duration::from_secs(5))
            .await
            .expect("settle");
        tab
    })
}

fn activate(tab: &str) {
    rt().block_on(host().activate_tab(tab)).expect("activate");
}

fn close(tab: &str) {
    let _ = rt().block_on(host().close_tab(tab));
}

fn eval(tab: &str, expr: &str) -> Value {
    rt().block_on(host().evaluate(Some(tab), expr)).expect("evaluate")
}

fn active_tab() -> String {
    let tabs = rt().block_on(host().tabs()).unwrap();
    tabs.into_iter().find(|t| t.active).expect("an active tab").id
}

fn call(tools: &[Arc<dyn Tool>], name: &str, args: Value) -> Result<ToolOutput, ToolError> {
    let tool = tools.iter().find(|t| t.spec().name == name).unwrap().clone();
    rt().block_on(tool.call(args, ToolContext::detached(SessionId::new_random(), "t")))
}

fn model_error(r: Result<ToolOutput, ToolError>) -> String {
    match r {
        Err(ToolError::ForModel { message, .. }) => message,
        Err(e) => panic!("expected an error for the model, got fatal {e}"),
        Ok(o) => panic!("expected an error, got {}", o.text_content()),
    }
}

/// A person's task as a scripted model plays it: "fill NAME" reads the page, fills #name with
/// NAME, opens the details and reads again, then answers with the title it read; "ask HANDLE
/// to fill NAME" sends that request to the tab HANDLE.
fn script(req: &ModelRequest) -> ScriptStep {
    let start = req.messages.iter().rposition(|m| m.role == Role::User).unwrap_or(0);
    let task = req.messages[start].text();
    let results: Vec<String> = req.messages[start..]
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.text())
        .collect();
    let word_after = |key: &str| {
        let at = task.find(key).map(|i| i + key.len()).unwrap_or(task.len());
        task[at..]
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '-')
            .next()
            .unwrap_or_default()
            .to_string()
    };
    if task.contains("ask ") {
        return match results.len() {
            0 => ScriptedReply::tool_call(
                "send_to_tab",
                json!({"tab_id": word_after("ask "), "message": format!("fill {}", word_after("to fill "))}),
            )
            .into(),
            _ => ScriptedReply::text("Asked.").into(),
        };
    }
    let name = word_after("fill ");
    match results.len() {
        0 => ScriptedReply::tool_call("page_read", json!({})).into(),
        1 => ScriptedReply::tool_call("page_fill", json!({"selector": "#name", "text": name})).into(),
        2 => ScriptedReply::tool_call("page_click", json!({"selector": "#details-btn"})).into(),
        3 => ScriptedReply::tool_call("page_read", json!({})).into(),
        _ => {
            let title = results[3]
                .lines()
                .find_map(|l| l.strip_prefix("title: "))
                .unwrap_or("?")
                .to_string();
            ScriptedReply::text(format!("filled {name} in {title}")).into()
        }
    }
}

/// A hub whose tabs' agents run `script` with every gated call allowed, and page tools bound
/// to the browser tab each hub tab is wired to.
fn hub_with(policy: OpenedTabOwner) -> TabHub {
    let host = host();
    rt().block_on(
        TabHub::builder()
            .agent_factory(|_tab| {
                Agent::builder()
                    .provider(ScriptedProvider::from_fn(script))
                    .gate(AllowAll)
            })
            .tab_tools(move |tab, hub| {
                let bound = PageTab::Hub {
                    hub: hub.clone(),
                    tab: tab.clone(),
                };
                page_tools_for_tab_with(host.clone(), bound, PageToolsConfig::default())
            })
            .opened_tab_policy(move |_| policy)
            .default_permissions(TabPermissions::all())
            .build(),
    )
    .unwrap()
}

/// Every event of the hub, collected as it comes.
fn record(hub: &TabHub) -> Arc<Mutex<Vec<TabEvent>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut events = hub.subscribe();
    let sink = seen.clone();
    rt().spawn(async move {
        while let Ok(e) = events.recv().await {
            sink.lock().unwrap().push(e);
        }
    });
    seen
}

/// The recorded events once `n` tool calls of `tab` have a result (the recorder runs on its own
/// task, so it may trail the turn's end a little).
fn events_after(seen: &Mutex<Vec<TabEvent>>, tab: &TabId, n: usize) -> Vec<TabEvent> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let events = seen.lock().unwrap().clone();
        if tool_results(&events, tab).len() >= n || std::time::Instant::now() > deadline {
            return events;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The (tool name, result or error text) of each tool call of `tab`, in order.
fn tool_results(events: &[TabEvent], tab: &TabId) -> Vec<(String, String)> {
    events
        .iter()
        .filter(|e| e.tab_id == *tab)
        .filter_map(|e| match &e.kind {
            TabEventKind::Agent { event } => match &event.kind {
                EventKind::ToolCallSucceeded { name, output, .. } => Some((name.clone(), output.clone())),
                EventKind::ToolCallFailed { name, error, .. } => Some((name.clone(), error.clone())),
                EventKind::ToolCallDenied { name, reason, .. } => Some((name.clone(), reason.clone())),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[test]
fn two_agents_in_two_tabs_act_at_once_each_on_its_own_page() {
    let _g = exclusive();
    let a = open("/form.html?agent=a");
    let b = open("/form.html?agent=b");
    // The person looks at a third tab, which neither agent may touch.
    let seen_by_person = open("/links.html");
    let hub = hub_with(OpenedTabOwner::SameAgent);
    let events = record(&hub);
    let (ta, tb) = rt().block_on(async {
        (
            hub.open_tab_for_host(a.id.clone()).await.unwrap(),
            hub.open_tab_for_host(b.id.clone()).await.unwrap(),
        )
    });
    let (ra, rb) = rt().block_on(async {
        let ra = hub.deliver(&ta, "fill Ada", Origin::Human).await.unwrap();
        let rb = hub.deliver(&tb, "fill Bob", Origin::Human).await.unwrap();
        (ra.run.unwrap(), rb.run.unwrap())
    });
    let (oa, ob) = rt().block_on(async { tokio::join!(ra.outcome(), rb.outcome()) });
    assert_eq!(oa.status, OutcomeStatus::Done, "{:?}", oa.error);
    assert_eq!(ob.status, OutcomeStatus::Done, "{:?}", ob.error);
    assert_eq!(oa.final_text.as_deref(), Some("filled Ada in \"Form fixture\""));
    assert_eq!(ob.final_text.as_deref(), Some("filled Bob in \"Form fixture\""));

    // Each page holds its own agent's work only.
    assert_eq!(eval(&a.id, "document.getElementById('name').value"), "Ada");
    assert_eq!(eval(&b.id, "document.getElementById('name').value"), "Bob");
    for tab in [&a.id, &b.id] {
        assert_eq!(
            eval(
                tab,
                "document.getElementById('details-btn').getAttribute('aria-expanded')"
            ),
            "true"
        );
    }
    // The tab in front of the person is untouched and still in front.
    assert_eq!(active_tab(), seen_by_person.id);
    assert_eq!(eval(&seen_by_person.id, "location.pathname"), "/links.html");
    assert_eq!(eval(&seen_by_person.id, "document.querySelectorAll('input').length"), 0);

    // Every result each agent saw came from its own page, and the two turns overlapped.
    events_after(&events, &ta, 4);
    let events = events_after(&events, &tb, 4);
    for (tab, mark) in [(&ta, "agent=a"), (&tb, "agent=b")] {
        let results = tool_results(&events, tab);
        assert_eq!(results.len(), 4, "{results:?}");
        for (name, text) in &results {
            assert!(text.contains(mark), "{name} of {mark} saw another page: {text}");
        }
    }
    let span = |tab: &TabId| {
        let at: Vec<usize> = events
            .iter()
            .enumerate()
            .filter(|(_, e)| e.tab_id == *tab && matches!(&e.kind, TabEventKind::Agent { event } if matches!(event.kind, EventKind::ToolCallStarted { .. } | EventKind::ToolCallSucceeded { .. })))
            .map(|(i, _)| i)
            .collect();
        (at[0], at[at.len() - 1])
    };
    let ((a0, a1), (b0, b1)) = (span(&ta), span(&tb));
    assert!(a0 < b1 && b0 < a1, "the two agents did not act at the same time");
    for t in [&a.id, &b.id, &seen_by_person.id] {
        close(t);
    }
}

#[test]
fn a_background_tab_woken_by_send_to_tab_acts_on_its_own_page() {
    let _g = exclusive();
    let background = open("/form.html?agent=b");
    let front = open("/links.html");
    assert_eq!(active_tab(), front.id);
    let hub = hub_with(OpenedTabOwner::SameAgent);
    let events = record(&hub);
    let (tf, tb) = rt().block_on(async {
        (
            hub.open_tab_for_host(front.id.clone()).await.unwrap(),
            hub.open_tab_for_host(background.id.clone()).await.unwrap(),
        )
    });
    let handle = hub.handle(&tb).unwrap();
    rt().block_on(async {
        let d = hub
            .deliver(&tf, format!("ask {handle} to fill Ada"), Origin::Human)
            .await
            .unwrap();
        d.run.unwrap().outcome().await;
        hub.wait_all_idle().await;
    });
    let events = events_after(&events, &tb, 4);
    let sent = tool_results(&events, &tf);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(sent[0].1.contains("started a new turn"), "{sent:?}");
    // The woken agent read and filled its own page, in the background.
    let snapshot = rt().block_on(hub.read(&tb)).unwrap();
    assert_eq!(
        snapshot.last_response.as_deref(),
        Some("filled Ada in \"Form fixture\"")
    );
    let results = tool_results(&events, &tb);
    assert_eq!(results.len(), 4, "{results:?}");
    assert!(results.iter().all(|(_, text)| text.contains("agent=b")), "{results:?}");
    assert_eq!(eval(&background.id, "document.getElementById('name').value"), "Ada");
    assert_eq!(active_tab(), front.id, "the person's view did not change");
    assert_eq!(eval(&front.id, "location.pathname"), "/links.html");
    close(&background.id);
    close(&front.id);
}

#[test]
fn a_closed_tab_fails_its_agents_page_tools_with_what_to_do() {
    let _g = exclusive();
    let keep = open("/links.html");
    // A tab the host gave the tools directly, closed under them by the person.
    let mine = open("/form.html");
    let tools = page_tools_for_tab(host(), mine.id.as_str());
    assert!(
        call(&tools, "page_read", json!({}))
            .unwrap()
            .text_content()
            .contains("Form fixture")
    );
    close(&mine.id);
    for (name, args) in [
        ("page_read", json!({})),
        ("page_click", json!({"selector": "#details-btn"})),
        ("page_navigate", json!({"url": url("/form.html")})),
    ] {
        let msg = model_error(call(&tools, name, args));
        assert!(
            msg.contains(&format!("browser tab {} was closed", mine.id)) && msg.contains("tab_open"),
            "{name}: {msg}"
        );
    }
    // The agent opens a new tab for itself and works there.
    let opened = call(&tools, "tab_open", json!({"url": url("/page2.html")})).unwrap();
    assert!(
        opened.text_content().contains("you work in it"),
        "{}",
        opened.text_content()
    );
    assert!(
        call(&tools, "page_read", json!({}))
            .unwrap()
            .text_content()
            .contains("Second page")
    );
    let new_id = opened.structured.unwrap()["id"].as_str().unwrap().to_string();
    // Closing its last tab leaves it without a page, and says so.
    let closed = call(&tools, "tab_close", json!({"id": new_id})).unwrap().text_content();
    assert!(closed.contains("it was your last tab"), "{closed}");
    assert!(model_error(call(&tools, "page_read", json!({}))).contains("was closed"));

    // A page that closes itself: its agent is told so, and the other tabs keep working.
    let itself = open("/form.html?closes=itself");
    let tools_of_itself = page_tools_for_tab(host(), itself.id.as_str());
    eval(&itself.id, "window.close(); 1");
    // The browser closes it on its own schedule: wait until the tab stops answering.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while rt().block_on(host().evaluate(Some(&itself.id), "1")).is_ok() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let msg = model_error(call(&tools_of_itself, "page_read", json!({})));
    assert!(msg.contains(&format!("browser tab {} was closed", itself.id)), "{msg}");
    assert!(browser().is_alive());
    let elsewhere = page_tools_for_tab(host(), keep.id.as_str());
    assert!(
        call(&elsewhere, "page_read", json!({}))
            .unwrap()
            .text_content()
            .contains("Reading list")
    );

    // Through a hub: the host reports the browser tab closed, then closes the hub tab.
    let wired = open("/form.html");
    let hub = hub_with(OpenedTabOwner::SameAgent);
    let tab = rt().block_on(hub.open_tab_for_host(wired.id.clone())).unwrap();
    let bound = page_tools_for_tab(
        host(),
        PageTab::Hub {
            hub: hub.downgrade(),
            tab: tab.clone(),
        },
    );
    assert!(call(&bound, "page_read", json!({})).is_ok());
    close(&wired.id);
    assert_eq!(hub.host_tab_closed(&wired.id), Some(tab.clone()));
    let msg = model_error(call(&bound, "page_read", json!({})));
    assert!(msg.contains("was closed") && msg.contains("tell the person"), "{msg}");
    rt().block_on(hub.close_tab(&tab)).unwrap();
    let msg = model_error(call(&bound, "page_read", json!({})));
    assert!(msg.contains("this agent's tab has been closed"), "{msg}");
    close(&keep.id);
}

#[test]
fn a_bound_agent_touches_only_its_own_tabs_and_tab_open_follows_the_hosts_policy() {
    let _g = exclusive();
    let a = open("/form.html?agent=a");
    let b = open("/form.html?agent=b");
    let hub = hub_with(OpenedTabOwner::NewAgent);
    let (ta, tb) = rt().block_on(async {
        (
            hub.open_tab_for_host(a.id.clone()).await.unwrap(),
            hub.open_tab_for_host(b.id.clone()).await.unwrap(),
        )
    });
    let tools_a = page_tools_for_tab(
        host(),
        PageTab::Hub {
            hub: hub.downgrade(),
            tab: ta.clone(),
        },
    );
    let handle_b = hub.handle(&tb).unwrap();
    let listed = call(&tools_a, "tabs_list", json!({})).unwrap().text_content();
    assert!(
        listed.contains(&format!("{} ", a.id)) && listed.contains("(yours, you work here)"),
        "{listed}"
    );
    assert!(listed.contains(&format!("(tab {handle_b}'s agent)")), "{listed}");
    for name in ["tab_activate", "tab_close"] {
        let msg = model_error(call(&tools_a, name, json!({"id": b.id})));
        assert!(
            msg.starts_with(&format!("refused: tab {} is not yours", b.id)) && msg.contains(&handle_b),
            "{name}: {msg}"
        );
    }
    // With the NewAgent policy, the tab a opens goes to a new hub tab; a stays on its page.
    let opened = call(&tools_a, "tab_open", json!({"url": url("/page2.html")})).unwrap();
    let new_id = opened.structured.as_ref().unwrap()["id"].as_str().unwrap().to_string();
    let owner = hub.tab_for_host(&new_id).unwrap();
    assert_ne!(owner, ta);
    assert!(
        opened.text_content().contains("gave it to a new agent"),
        "{}",
        opened.text_content()
    );
    assert!(
        call(&tools_a, "page_read", json!({}))
            .unwrap()
            .text_content()
            .contains("agent=a")
    );

    // With the default policy, the opener gets the tab and works in it.
    let same = hub_with(OpenedTabOwner::SameAgent);
    let tc = rt().block_on(same.open_tab_for_host(b.id.clone())).unwrap();
    let tools_c = page_tools_for_tab(
        host(),
        PageTab::Hub {
            hub: same.downgrade(),
            tab: tc.clone(),
        },
    );
    let opened = call(&tools_c, "tab_open", json!({"url": url("/page2.html")})).unwrap();
    let second = opened.structured.as_ref().unwrap()["id"].as_str().unwrap().to_string();
    assert_eq!(same.tab_for_host(&second), Some(tc.clone()));
    assert!(
        call(&tools_c, "page_read", json!({}))
            .unwrap()
            .text_content()
            .contains("Second page")
    );
    // Back to its first tab, which comes to the front.
    call(&tools_c, "tab_activate", json!({"id": b.id})).unwrap();
    assert_eq!(active_tab(), b.id);
    assert!(
        call(&tools_c, "page_read", json!({}))
            .unwrap()
            .text_content()
            .contains("agent=b")
    );
    for t in [&a.id, &b.id, &new_id, &second] {
        close(t);
    }
}

#[test]
fn tab_activate_is_gated_by_default() {
    let _g = exclusive();
    let first = open("/links.html");
    let second = open("/page2.html");
    let tools = page_tools_for_tab(host(), second.id.as_str());
    let activate_tool = tools.iter().find(|t| t.spec().name == "tab_activate").unwrap();
    assert!(activate_tool.spec().gated);
    // Without a gate, the loop denies it and the person's view stays as it is.
    let provider = ScriptedProvider::new([
        ScriptedReply::tool_call("tab_activate", json!({"id": second.id})).into(),
        ScriptedReply::text("unreachable").into(),
    ]);
    activate(&first.id);
    let mut builder = Agent::builder().provider(provider);
    for t in tools {
        builder = builder.tool_arc(t);
    }
    let outcome = rt().block_on(async {
        let agent = builder.build().unwrap();
        agent.create_session().await.unwrap().send("show me my tab").await
    });
    assert_eq!(outcome.status, OutcomeStatus::Denied);
    assert_eq!(active_tab(), first.id);
    close(&first.id);
    close(&second.id);
}
