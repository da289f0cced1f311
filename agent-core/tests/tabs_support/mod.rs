//! Helpers shared by the tab hub tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_core::tabs::TabId;
use agent_core::tabs::{TabEvent, TabEventKind, TabHub, TabHubBuilder};
use agent_core::{
    Agent, Message, ModelRequest, Role, ScriptStep, ScriptedProvider, ScriptedReply, ToolContext, ToolError,
    ToolOutput, tool_fn,
};
use tokio::sync::{Notify, broadcast};

/// No arguments.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct NoArgs {}

/// A tab id from a short, readable pattern: `id("6fe8a")` is `6fe8a000-0000-4000-8000-000000000000`
/// with the given leading characters.
pub fn id(lead: &str) -> TabId {
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

/// What a scripted tab agent does with each model call.
pub type Brain = Arc<dyn Fn(&ModelRequest) -> ScriptStep + Send + Sync>;

/// Brains per tab; tabs without one answer "ok". Every agent also gets a `wait_for_release`
/// tool that blocks until [`Brains::release`] is called, to hold a turn in the running state.
#[derive(Clone, Default)]
pub struct Brains {
    brains: Arc<Mutex<HashMap<TabId, Brain>>>,
    release: Arc<Notify>,
    /// Every request each tab's agent made, in order.
    pub requests: Arc<Mutex<HashMap<TabId, Vec<ModelRequest>>>>,
}

impl Brains {
    pub fn set(&self, tab: &TabId, brain: impl Fn(&ModelRequest) -> ScriptStep + Send + Sync + 'static) {
        self.brains.lock().unwrap().insert(tab.clone(), Arc::new(brain));
    }

    /// Lets one blocked `wait_for_release` call finish (or the next one, if none is waiting).
    pub fn release(&self) {
        self.release.notify_one();
    }

    pub fn requests(&self, tab: &TabId) -> Vec<ModelRequest> {
        self.requests.lock().unwrap().get(tab).cloned().unwrap_or_default()
    }

    /// How many turns a tab's agent started (requests whose last message is a user message).
    pub fn turns(&self, tab: &TabId) -> usize {
        self.requests(tab)
            .iter()
            .filter(|r| r.messages.last().is_some_and(|m| m.role == Role::User))
            .count()
    }

    /// A hub builder whose agents follow these brains.
    pub fn hub(&self) -> TabHubBuilder {
        let brains = self.clone();
        TabHub::builder().agent_factory(move |tab| {
            let brains = brains.clone();
            let tab = tab.clone();
            let release = brains.release.clone();
            let wait = tool_fn(
                "wait_for_release",
                "Blocks until the test releases it.",
                move |_: NoArgs, _cx| {
                    let release = release.clone();
                    async move {
                        release.notified().await;
                        Ok::<_, ToolError>("released")
                    }
                },
            );
            Agent::builder()
                .tool(wait)
                .clarification(true)
                .provider(ScriptedProvider::from_fn(move |req| {
                    brains
                        .requests
                        .lock()
                        .unwrap()
                        .entry(tab.clone())
                        .or_default()
                        .push(req.clone());
                    let brain = brains.brains.lock().unwrap().get(&tab).cloned();
                    match brain {
                        Some(brain) => brain(req),
                        None => ScriptStep::Reply(ScriptedReply::text("ok")),
                    }
                }))
        })
    }
}

/// The last message of a request.
pub fn last(req: &ModelRequest) -> &Message {
    req.messages.last().unwrap()
}

/// Whether the request starts a turn (its last message is the user's).
pub fn new_turn(req: &ModelRequest) -> bool {
    last(req).role == Role::User
}

/// Answers each new turn with `answer(user text)`.
pub fn answer(
    f: impl Fn(&str) -> String + Send + Sync + 'static,
) -> impl Fn(&ModelRequest) -> ScriptStep + Send + Sync {
    move |req| ScriptStep::Reply(ScriptedReply::text(f(&last(req).text())))
}

/// Drains the events received so far.
pub fn drain(rx: &mut broadcast::Receiver<TabEvent>) -> Vec<TabEvent> {
    let mut out = Vec::new();
    while let Ok(e) = rx.try_recv() {
        out.push(e);
    }
    out
}

/// Notices in events, as (tab, code).
pub fn notices(events: &[TabEvent]) -> Vec<(TabId, String)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            TabEventKind::Notice { code, .. } => Some((e.tab_id.clone(), code.clone())),
            _ => None,
        })
        .collect()
}

/// Calls one of a tab's tools directly, as the loop would.
pub async fn call_tool(
    hub: &TabHub,
    tab: &TabId,
    name: &str,
    args: serde_json::Value,
) -> Result<ToolOutput, agent_core::ToolError> {
    let session = hub.session(tab).await.unwrap();
    let tool = session
        .agent()
        .tools()
        .get(name)
        .unwrap_or_else(|| panic!("tab has no {name} tool"))
        .clone();
    tool.call(args, ToolContext::detached(session.id().clone(), "call_test"))
        .await
}

/// Holds a turn in `running` on "block" (until released), answers "first done" after that,
/// and answers every other turn with "got: <text>".
pub fn blocking_echo(req: &ModelRequest) -> ScriptStep {
    let m = last(req);
    if m.role == Role::Tool {
        return ScriptStep::Reply(ScriptedReply::text("first done"));
    }
    let text = m.text();
    if text == "block" {
        ScriptStep::Reply(ScriptedReply::tool_call("wait_for_release", serde_json::json!({})))
    } else {
        ScriptStep::Reply(ScriptedReply::text(format!("got: {text}")))
    }
}

/// The label and body of the one untrusted-content wrapper in `text`, checking that its
/// closing marker carries the opening marker's nonce.
#[allow(dead_code)]
pub fn unwrap_untrusted(text: &str) -> (String, String) {
    let label_start = text.find("[untrusted data from ").expect("no wrapper label") + "[untrusted data from ".len();
    let label_end = text[label_start..].find(": the text between").unwrap() + label_start;
    let open = text.find("<untrusted-content nonce=\"").expect("no opening marker");
    let nonce = &text[open + 26..open + 42];
    let body_start = open + 26 + 16 + 3;
    let close = format!("\n</untrusted-content nonce=\"{nonce}\">");
    let body_end = text.find(&close).expect("no closing marker with the same nonce");
    assert_eq!(text.matches("<untrusted-content").count(), 1, "{text}");
    (
        text[label_start..label_end].to_owned(),
        text[body_start..body_end].to_owned(),
    )
}
