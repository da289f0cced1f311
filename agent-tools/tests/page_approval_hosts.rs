#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! Decisions remembered for a host pattern, in real headless Chromium on loopback fixture
//! pages: the page tools name their tab's host as the browser reports it, a remembered host
//! rule skips the question on that host and the person is still asked on another (a page
//! cannot pass for another host by rewriting its path or text), an approved click does not
//! run once the tab has moved to another host, and page_dialog names its host while the
//! dialog pauses the page's scripts. The tools that load another page are decided for where
//! they go: page_navigate for the host of its address, page_back and page_forward for that of
//! the history entry (none on a host that cannot read the history).

mod support;

use std::sync::{Arc, Mutex};

use agent_core::{
    Agent, ApprovalDecision, GateDecision, OutcomeStatus, RememberScope, ScriptedProvider, ScriptedReply, Session,
    gate_fn,
};
use agent_tools::{BrowserHost, page_tools};
use serde_json::json;
use support::{exclusive, rt, tools, url};

fn click() -> ScriptedReply {
    ScriptedReply::tool_call("page_click", json!({"selector": "#details-btn"}))
}

/// Whether the fixture's details button is expanded (each click toggles it).
fn expanded(host: &Arc<dyn BrowserHost>) -> String {
    let v = rt()
        .block_on(host.evaluate(
            None,
            "document.getElementById('details-btn').getAttribute('aria-expanded')",
        ))
        .unwrap();
    v.as_str().unwrap().to_owned()
}

/// Loads `address` in the active tab through the host (not the gated tool).
fn load(host: &Arc<dyn BrowserHost>, address: &str) {
    rt().block_on(async {
        host.navigate(None, address).await.unwrap();
        host.wait_settled(None, std::time::Duration::from_secs(5))
            .await
            .unwrap();
    });
}

fn send(session: &Session, text: &str) -> agent_core::Outcome {
    rt().block_on(session.send(text).outcome())
}

#[test]
fn a_remembered_host_rule_skips_the_question_on_its_host_and_asks_on_another() {
    let _g = exclusive();
    let p = tools();
    let on_loopback_ip = url("/form.html");
    // The same fixture server under another host name: localhost is another host to the rules.
    let on_localhost = on_loopback_ip.replace("127.0.0.1", "localhost");
    load(&p.host, &on_loopback_ip);

    let asked: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let seen = asked.clone();
    let gate = gate_fn(move |req| {
        seen.lock().unwrap().push(req.host.clone());
        async { GateDecision::ask("Click on this page?") }
    });
    let replies = [
        click(),
        ScriptedReply::text("clicked"),
        click(),
        ScriptedReply::text("clicked again"),
        click(),
        click(),
        ScriptedReply::text("the page moved"),
    ];
    let mut builder = Agent::builder()
        .provider(ScriptedProvider::new(replies.map(Into::into)))
        .gate(gate);
    for tool in page_tools(p.host.clone()) {
        builder = builder.tool_arc(tool);
    }
    let agent = rt().block_on(async { builder.build() }).unwrap();
    let session = rt().block_on(agent.create_session()).unwrap();

    // Asked on 127.0.0.1; approved and remembered for that host.
    let approval = send(&session, "open the details").approval.unwrap();
    assert_eq!(approval.calls[0].host.as_deref(), Some("127.0.0.1"));
    assert_eq!(asked.lock().unwrap()[0].as_deref(), Some("127.0.0.1"));
    let call = approval.calls[0].call_id.clone();
    let remembered = ApprovalDecision::approve().remember(RememberScope::host("127.0.0.1"));
    let resumed = session.resolve_approval(&approval.id, [(call, remembered)]).unwrap();
    assert_eq!(rt().block_on(resumed.outcome()).status, OutcomeStatus::Done);
    assert_eq!(expanded(&p.host), "true");

    // On the same host the rule answers: the click runs without a question.
    let outcome = send(&session, "close them");
    assert_eq!(outcome.status, OutcomeStatus::Done, "{outcome:?}");
    assert_eq!(expanded(&p.host), "false");

    // On another host the person is asked, even when the page dresses up as the first one:
    // its path and text name 127.0.0.1, but the browser's address for the tab says localhost.
    load(&p.host, &on_localhost);
    rt().block_on(p.host.evaluate(
        None,
        "history.replaceState(null, '', '/127.0.0.1/form.html'); document.title = 'http://127.0.0.1/'; 1",
    ))
    .unwrap();
    let outcome = send(&session, "open the details");
    assert_eq!(outcome.status, OutcomeStatus::AwaitingApproval, "{outcome:?}");
    assert_eq!(
        outcome.approval.as_ref().unwrap().calls[0].host.as_deref(),
        Some("localhost")
    );
    assert_eq!(expanded(&p.host), "false");
    rt().block_on(session.dismiss_approval(&outcome.approval.unwrap().id))
        .unwrap();

    // Asked on localhost, approved after the tab moved back to 127.0.0.1: it does not run there.
    let outcome = send(&session, "open the details");
    let approval = outcome.approval.unwrap();
    load(&p.host, &on_loopback_ip);
    let call = approval.calls[0].call_id.clone();
    let resumed = session
        .resolve_approval(&approval.id, [(call, ApprovalDecision::approve())])
        .unwrap();
    assert_eq!(rt().block_on(resumed.outcome()).status, OutcomeStatus::Done);
    assert_eq!(expanded(&p.host), "false");
    assert_eq!(
        asked.lock().unwrap().len(),
        4,
        "the gate is asked each time; the rule answered once"
    );
}

#[test]
fn page_dialog_names_its_host_while_the_dialog_pauses_the_page() {
    let _g = exclusive();
    let p = tools();
    p.open("/dialog.html");
    let asked: Asked = Arc::default();
    let seen = asked.clone();
    let gate = gate_fn(move |req| {
        seen.lock().unwrap().push((req.tool.clone(), req.host.clone()));
        async { GateDecision::Allow }
    });
    let replies = [
        ScriptedReply::tool_call("page_click", json!({"selector": "#keep"})),
        ScriptedReply::tool_call("page_dialog", json!({"accept": true})),
        ScriptedReply::text("kept"),
    ];
    let mut builder = Agent::builder()
        .provider(ScriptedProvider::new(replies.map(Into::into)))
        .gate(gate);
    for tool in page_tools(p.host.clone()) {
        builder = builder.tool_arc(tool);
    }
    let agent = rt().block_on(async { builder.build() }).unwrap();
    let session = rt().block_on(agent.create_session()).unwrap();
    // Bounded only so that a hang fails instead of blocking the suite: reading the tab's title
    // waits for the dialog, its address does not.
    let outcome = rt()
        .block_on(async {
            tokio::time::timeout(std::time::Duration::from_secs(20), session.send("keep it").outcome()).await
        })
        .expect("the turn ended");
    assert_eq!(outcome.status, OutcomeStatus::Done, "{outcome:?}");
    let host = Some("127.0.0.1".to_owned());
    assert_eq!(
        *asked.lock().unwrap(),
        vec![
            ("page_click".to_owned(), host.clone()),
            ("page_dialog".to_owned(), host)
        ]
    );
    assert_eq!(p.eval("document.getElementById('out').textContent"), "kept");
}

/// The tool and host of each gate request.
type Asked = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// A session of an agent over `p`'s page tools whose gate asks the person about every call,
/// and the requests it saw.
fn asking_session(p: &support::Page, replies: Vec<ScriptedReply>) -> (Session, Asked) {
    let asked: Asked = Arc::default();
    let seen = asked.clone();
    let gate = gate_fn(move |req| {
        seen.lock().unwrap().push((req.tool.clone(), req.host.clone()));
        async { GateDecision::ask("Load another page?") }
    });
    let mut builder = Agent::builder()
        .provider(ScriptedProvider::new(replies.into_iter().map(Into::into)))
        .gate(gate);
    for tool in page_tools(p.host.clone()) {
        builder = builder.tool_arc(tool);
    }
    let agent = rt().block_on(async { builder.build() }).unwrap();
    (rt().block_on(agent.create_session()).unwrap(), asked)
}

fn navigate(address: &str) -> ScriptedReply {
    ScriptedReply::tool_call("page_navigate", json!({ "url": address }))
}

/// Approves the one call `outcome` waits on, remembered for `host` when given; the resumed
/// turn must end done.
fn approve(session: &Session, outcome: agent_core::Outcome, host: Option<&str>) {
    let approval = outcome.approval.unwrap();
    let decision = match host {
        Some(h) => ApprovalDecision::approve().remember(RememberScope::host(h)),
        None => ApprovalDecision::approve(),
    };
    let call = approval.calls[0].call_id.clone();
    let resumed = session.resolve_approval(&approval.id, [(call, decision)]).unwrap();
    let outcome = rt().block_on(resumed.outcome());
    assert_eq!(outcome.status, OutcomeStatus::Done, "{outcome:?}");
}

/// The host the person is asked about for the call `outcome` waits on.
fn asked_host(outcome: &agent_core::Outcome) -> Option<String> {
    assert_eq!(outcome.status, OutcomeStatus::AwaitingApproval, "{outcome:?}");
    outcome.approval.as_ref().unwrap().calls[0].host.clone()
}

#[test]
fn a_navigation_is_decided_for_the_host_it_loads_not_the_one_it_leaves() {
    let _g = exclusive();
    let p = tools();
    let on_localhost = |path: &str| url(path).replace("127.0.0.1", "localhost");
    load(&p.host, &url("/form.html"));
    let replies = vec![
        navigate(&url("/page2.html")),
        ScriptedReply::text("on page 2"),
        navigate(&on_localhost("/form.html")),
        ScriptedReply::text("on localhost"),
        navigate(&url("/links.html")),
        ScriptedReply::text("back on 127.0.0.1"),
    ];
    let (session, asked) = asking_session(&p, replies);

    // Asked about 127.0.0.1, where it goes; approved and remembered for that host.
    let outcome = send(&session, "open page 2");
    assert_eq!(asked_host(&outcome).as_deref(), Some("127.0.0.1"));
    approve(&session, outcome, Some("127.0.0.1"));
    assert_eq!(p.eval("location.href"), json!(url("/page2.html")));

    // From a 127.0.0.1 page to localhost: the rule for 127.0.0.1 does not answer, the person
    // is asked about localhost. Approved once, it runs although the tab is still on
    // 127.0.0.1 when the core looks again just before running it.
    let outcome = send(&session, "open the form on localhost");
    assert_eq!(asked_host(&outcome).as_deref(), Some("localhost"));
    assert_eq!(p.eval("location.href"), json!(url("/page2.html")), "nothing ran yet");
    approve(&session, outcome, None);
    assert_eq!(p.eval("location.href"), json!(on_localhost("/form.html")));

    // From localhost to another 127.0.0.1 page: the rule answers, nobody is asked.
    let outcome = send(&session, "open the links");
    assert_eq!(outcome.status, OutcomeStatus::Done, "{outcome:?}");
    assert_eq!(p.eval("location.href"), json!(url("/links.html")));

    let navigate = |host: &str| ("page_navigate".to_owned(), Some(host.to_owned()));
    assert_eq!(
        *asked.lock().unwrap(),
        vec![navigate("127.0.0.1"), navigate("localhost"), navigate("127.0.0.1")],
        "the gate sees the host each navigation loads"
    );
}

#[test]
fn back_and_forward_are_decided_for_the_host_of_the_history_entry_they_go_to() {
    let _g = exclusive();
    let p = tools();
    let on_localhost = |path: &str| url(path).replace("127.0.0.1", "localhost");
    let back = || ScriptedReply::tool_call("page_back", json!({}));
    let forward = || ScriptedReply::tool_call("page_forward", json!({}));
    load(&p.host, &url("/form.html"));
    load(&p.host, &on_localhost("/page2.html"));
    let replies = vec![
        back(),
        ScriptedReply::text("back on 127.0.0.1"),
        forward(),
        ScriptedReply::text("forward on localhost"),
        back(),
        ScriptedReply::text("back again"),
        back(),
        forward(),
        ScriptedReply::text("done"),
    ];
    let (session, asked) = asking_session(&p, replies);

    // On localhost, back goes to 127.0.0.1: asked about 127.0.0.1, remembered for it.
    let outcome = send(&session, "go back");
    assert_eq!(asked_host(&outcome).as_deref(), Some("127.0.0.1"));
    approve(&session, outcome, Some("127.0.0.1"));
    assert_eq!(p.eval("location.href"), json!(url("/form.html")));

    // On 127.0.0.1, forward goes to localhost: asked about localhost.
    let outcome = send(&session, "go forward");
    assert_eq!(asked_host(&outcome).as_deref(), Some("localhost"));
    approve(&session, outcome, None);
    assert_eq!(p.eval("location.href"), json!(on_localhost("/page2.html")));

    // Back to 127.0.0.1 again, from localhost: the rule answers.
    let outcome = send(&session, "go back again");
    assert_eq!(outcome.status, OutcomeStatus::Done, "{outcome:?}");
    assert_eq!(p.eval("location.href"), json!(url("/form.html")));

    // On a 127.0.0.1 page whose previous entry is on localhost, the rule for 127.0.0.1 does
    // not answer for back: the person is asked about localhost, and nothing moves meanwhile.
    load(&p.host, &on_localhost("/page2.html"));
    load(&p.host, &url("/links.html"));
    let outcome = send(&session, "and back");
    assert_eq!(asked_host(&outcome).as_deref(), Some("localhost"));
    assert_eq!(p.eval("location.href"), json!(url("/links.html")));
    let approval = outcome.approval.unwrap();
    rt().block_on(session.dismiss_approval(&approval.id)).unwrap();

    // At the newest entry there is nothing forward: no host, so the person is asked.
    let outcome = send(&session, "and forward");
    assert_eq!(asked_host(&outcome), None);
    rt().block_on(session.dismiss_approval(&outcome.approval.unwrap().id))
        .unwrap();

    let step = |tool: &str, host: Option<&str>| (tool.to_owned(), host.map(str::to_owned));
    assert_eq!(
        *asked.lock().unwrap(),
        vec![
            step("page_back", Some("127.0.0.1")),
            step("page_forward", Some("localhost")),
            step("page_back", Some("127.0.0.1")),
            step("page_back", Some("localhost")),
            step("page_forward", None),
        ]
    );
}

#[test]
fn back_and_forward_name_no_host_on_a_host_that_cannot_read_the_history() {
    let _g = exclusive();
    let full = tools();
    let bare = support::required_only_tools();
    load(&full.host, &url("/form.html"));
    load(&full.host, &url("/page2.html"));
    let host_of = |p: &support::Page, name: &str| {
        let tool = p.tools.iter().find(|t| t.spec().name == name).unwrap().clone();
        rt().block_on(async move { tool.target_host(&json!({})).await })
    };
    assert_eq!(host_of(&full, "page_back").as_deref(), Some("127.0.0.1"));
    assert_eq!(host_of(&bare, "page_back"), None);
    assert_eq!(host_of(&bare, "page_forward"), None);
    // The tools that act on the page in the tab still name its host there.
    assert_eq!(host_of(&bare, "page_click").as_deref(), Some("127.0.0.1"));
}
