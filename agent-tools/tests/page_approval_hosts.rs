#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! Decisions remembered for a host pattern, in real headless Chromium on loopback fixture
//! pages: the page tools name their tab's host as the browser reports it, a remembered host
//! rule skips the question on that host and the person is still asked on another (a page
//! cannot pass for another host by rewriting its path or text), an approved click does not
//! run once the tab has moved to another host, and page_dialog names its host while the
//! dialog pauses the page's scripts.

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
    // The tool and host of each gate request.
    type Asked = Arc<Mutex<Vec<(String, Option<String>)>>>;
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
