//! Decisions remembered for a host pattern: a tool that names the host of the page it acts on
//! (`Tool::target_host`) is answered by a host rule on matching hosts only; patterns that do
//! not fit the call are refused; a call allowed for one host does not run once its page is on
//! another.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::{Arc, Mutex};

use agent_core::{
    Agent, ApprovalDecision, ApprovalError, GateDecision, MemoryStore, OutcomeStatus, RememberScope, ScriptedProvider,
    ScriptedReply, Session, Tool, ToolContext, ToolError, ToolOutput, ToolSpec, async_trait, gate_fn,
};
use common::{messages_of, tool_results};
use serde_json::{Value, json};

/// The host the fake page is on (what `target_host` answers), settable by the test.
type Page = Arc<Mutex<Option<String>>>;

/// A gated `click` on the fake page; records the host it ran on.
struct Click {
    spec: ToolSpec,
    page: Page,
    ran: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl Tool for Click {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, _args: Value, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let host = self.page.lock().unwrap().clone().unwrap_or_default();
        self.ran.lock().unwrap().push(host.clone());
        Ok(ToolOutput::text(format!("clicked on {host}")))
    }

    async fn target_host(&self, _args: &Value) -> Option<String> {
        self.page.lock().unwrap().clone()
    }
}

struct Fixture {
    agent: Agent,
    page: Page,
    ran: Arc<Mutex<Vec<String>>>,
    /// The hosts the gate saw, in order.
    asked: Arc<Mutex<Vec<Option<String>>>>,
}

fn click() -> ScriptedReply {
    ScriptedReply::text("Clicking.").with_call("click", json!({}))
}

/// An agent whose gate asks the person about every click (`on_check` runs first).
fn fixture(replies: Vec<ScriptedReply>, on_check: impl Fn(&Page) + Send + Sync + 'static) -> Fixture {
    let page: Page = Arc::default();
    let ran = Arc::default();
    let asked: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let tool = Click {
        spec: ToolSpec::new("click", "Clicks.", json!({"type": "object"})).gated(true),
        page: page.clone(),
        ran: Arc::clone(&ran),
    };
    let (seen, p) = (asked.clone(), page.clone());
    let gate = gate_fn(move |req| {
        seen.lock().unwrap().push(req.host.clone());
        on_check(&p);
        async { GateDecision::ask("Click?") }
    });
    let agent = Agent::builder()
        .provider(ScriptedProvider::new(replies.into_iter().map(Into::into)))
        .tool_arc(Arc::new(tool))
        .store(MemoryStore::new())
        .gate(gate)
        .build()
        .unwrap();
    Fixture {
        agent,
        page,
        ran,
        asked,
    }
}

impl Fixture {
    fn on(&self, host: Option<&str>) {
        *self.page.lock().unwrap() = host.map(str::to_owned);
    }
}

/// Sends "click" and, when the turn parks, dismisses the approval; the outcome's status.
async fn click_once(session: &Session) -> OutcomeStatus {
    let outcome = session.send("click").await;
    if let Some(approval) = &outcome.approval {
        session.dismiss_approval(&approval.id).await.unwrap();
    }
    outcome.status
}

#[tokio::test]
async fn a_host_rule_answers_on_matching_hosts_only_until_revoked() {
    let mut replies = vec![
        click(),
        ScriptedReply::text("done"),
        click(),
        ScriptedReply::text("done again"),
    ];
    replies.extend((0..4).map(|_| click()));
    let f = fixture(replies, |_| {});
    let session = f.agent.create_session().await.unwrap();

    // Hosts are compared lowercased, without a trailing dot.
    f.on(Some("Shop.Example.COM."));
    let approval = session.send("click").await.approval.unwrap();
    assert_eq!(approval.calls[0].host.as_deref(), Some("shop.example.com"));
    assert_eq!(f.asked.lock().unwrap()[0].as_deref(), Some("shop.example.com"));
    let remembered = ApprovalDecision::approve().remember(RememberScope::host("*.Example.com"));
    let call = approval.calls[0].call_id.clone();
    let outcome = session
        .resolve_approval(&approval.id, [(call, remembered)])
        .unwrap()
        .await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{outcome:?}");
    let rules = f.agent.approval_rules().await.unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].host_pattern.as_deref(), Some("*.example.com"));
    assert_eq!(rules[0].session_id, None);

    // Another subdomain, in another session: the rule answers, nobody is asked.
    let other = f.agent.create_session().await.unwrap();
    f.on(Some("www.example.com"));
    assert_eq!(other.send("click").await.status, OutcomeStatus::Done);
    assert_eq!(*f.ran.lock().unwrap(), vec!["Shop.Example.COM.", "www.example.com"]);

    // Not the apex, not a look-alike on no label boundary, not a call without a host.
    for host in [Some("example.com"), Some("evilexample.com"), None] {
        f.on(host);
        assert_eq!(click_once(&other).await, OutcomeStatus::AwaitingApproval, "{host:?}");
    }
    assert!(f.agent.revoke_approval_rule(&rules[0].id).await.unwrap());
    f.on(Some("www.example.com"));
    assert_eq!(click_once(&other).await, OutcomeStatus::AwaitingApproval);
    assert_eq!(f.ran.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn a_host_pattern_that_does_not_fit_the_call_is_refused_and_the_approval_stays_pending() {
    let f = fixture(vec![click(), ScriptedReply::text("done"), click()], |_| {});
    let session = f.agent.create_session().await.unwrap();
    f.on(Some("shop.example.com"));
    let approval = session.send("click").await.approval.unwrap();
    let call = approval.calls[0].call_id.clone();
    for (pattern, says) in [
        ("other.org", "does not match"),
        ("*.com", "too broad"),
        ("*.bücher.de", "punycode"),
        ("", "not a host name"),
    ] {
        let decision = ApprovalDecision::approve().remember(RememberScope::host(pattern));
        match session.resolve_approval(&approval.id, [(call.clone(), decision)]) {
            Err(e @ ApprovalError::InvalidRemember { .. }) => assert!(e.to_string().contains(says), "{e}"),
            other => panic!("{pattern:?}: {other:?}"),
        }
    }
    assert_eq!(session.pending_approval().unwrap().id, approval.id);
    let exact = ApprovalDecision::approve().remember(RememberScope::host("shop.example.com"));
    let outcome = session.resolve_approval(&approval.id, [(call, exact)]).unwrap().await;
    assert_eq!(outcome.status, OutcomeStatus::Done);

    // A call without a host cannot be remembered for one.
    f.on(None);
    let approval = session.send("click").await.approval.unwrap();
    let decision = ApprovalDecision::approve().remember(RememberScope::host("example.com"));
    let call = approval.calls[0].call_id.clone();
    match session.resolve_approval(&approval.id, [(call, decision)]) {
        Err(e @ ApprovalError::InvalidRemember { .. }) => assert!(e.to_string().contains("no page host"), "{e}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_approved_call_does_not_run_once_its_page_moved_to_another_host() {
    let f = fixture(vec![click(), ScriptedReply::text("it moved")], |_| {});
    let session = f.agent.create_session().await.unwrap();
    f.on(Some("bank.example"));
    let approval = session.send("click").await.approval.unwrap();
    // While the person looked, the page navigated somewhere else.
    f.on(Some("evil.test"));
    let call = approval.calls[0].call_id.clone();
    let outcome = session
        .resolve_approval(&approval.id, [(call, ApprovalDecision::approve())])
        .unwrap()
        .await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    assert!(f.ran.lock().unwrap().is_empty());
    let results = tool_results(&messages_of(&session).await);
    assert!(
        results[0].0.contains("not run") && results[0].0.contains("bank.example") && results[0].0.contains("evil.test"),
        "{results:?}"
    );
}

#[tokio::test]
async fn a_call_the_gate_allowed_for_one_host_does_not_run_once_its_page_moved() {
    // The gate allows a remembered host; the page navigates away while it decides.
    let page: Page = Arc::new(Mutex::new(Some("shop.example.com".into())));
    let ran = Arc::new(Mutex::new(Vec::new()));
    let p = page.clone();
    let gate = gate_fn(move |req| {
        let allowed = req.host.as_deref() == Some("shop.example.com");
        *p.lock().unwrap() = Some("evil.test".into());
        async move {
            if allowed {
                GateDecision::Allow
            } else {
                GateDecision::deny("not there")
            }
        }
    });
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([
            click().into(),
            ScriptedReply::text("ok").into(),
        ]))
        .tool_arc(Arc::new(Click {
            spec: ToolSpec::new("click", "Clicks.", json!({"type": "object"})).gated(true),
            page,
            ran: ran.clone(),
        }))
        .gate(gate)
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    assert_eq!(session.send("click").await.status, OutcomeStatus::Done);
    assert!(ran.lock().unwrap().is_empty());
    let results = tool_results(&messages_of(&session).await);
    assert!(results[0].0.contains("not run"), "{results:?}");
}

/// A gated `visit` whose host is that of its `url` argument, like `page_navigate`.
struct Visit {
    spec: ToolSpec,
    ran: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl Tool for Visit {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Value, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let url = args["url"].as_str().unwrap_or_default().to_owned();
        self.ran.lock().unwrap().push(url.clone());
        Ok(ToolOutput::text(format!("went to {url}")))
    }

    async fn target_host(&self, args: &Value) -> Option<String> {
        let url = args["url"].as_str()?;
        url.split("//").nth(1)?.split('/').next().map(str::to_owned)
    }
}

#[tokio::test]
async fn an_approval_that_edits_where_a_call_goes_runs_it_there() {
    let ran: Arc<Mutex<Vec<String>>> = Arc::default();
    let visit = Visit {
        spec: ToolSpec::new("visit", "Visits.", json!({"type": "object"})).gated(true),
        ran: ran.clone(),
    };
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([
            ScriptedReply::tool_call("visit", json!({"url": "https://a.example/x"})).into(),
            ScriptedReply::text("ok").into(),
        ]))
        .tool_arc(Arc::new(visit))
        .gate(gate_fn(|_| async { GateDecision::ask("Go?") }))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let approval = session.send("go").await.approval.unwrap();
    assert_eq!(approval.calls[0].host.as_deref(), Some("a.example"));
    let edited = ApprovalDecision::approve_with(json!({"url": "https://b.example/y"}));
    let outcome = session
        .resolve_approval(&approval.id, [(approval.calls[0].call_id.clone(), edited)])
        .unwrap()
        .await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert_eq!(
        *ran.lock().unwrap(),
        vec!["https://b.example/y"],
        "the person chose the new address"
    );
}
