#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! The tools inside the agent loop: gated page and file tools are denied without a gate and
//! run with one; the example task (save the links of a page to a file) end to end on Chromium.

mod support;

use std::sync::Arc;

use agent_core::{Agent, AllowAll, OutcomeStatus, Role, ScriptedProvider, ScriptedReply};
use agent_tools::{BrowserHost, FsPolicy, fs_tools, page_tools};
use serde_json::json;
use support::{exclusive, rt, tools};

fn agent_with(host: Arc<dyn BrowserHost>, root: &std::path::Path, provider: ScriptedProvider, gate: bool) -> Agent {
    let mut b = Agent::builder().provider(provider);
    for t in page_tools(host).into_iter().chain(fs_tools(FsPolicy::root(root))) {
        b = b.tool_arc(t);
    }
    if gate {
        b = b.gate(AllowAll);
    }
    b.build().unwrap()
}

#[test]
fn gated_page_tools_are_denied_without_a_gate() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let dir = tempfile::tempdir().unwrap();
    let provider = ScriptedProvider::new([
        ScriptedReply::tool_call("page_click", json!({"selector": "#details-btn"})).into(),
        ScriptedReply::text("unreachable").into(),
    ]);
    let agent = rt().block_on(async { agent_with(p.host.clone(), dir.path(), provider, false) });
    let outcome = rt().block_on(async {
        let s = agent.create_session().await.unwrap();
        s.send("open the details").await
    });
    assert_eq!(outcome.status, OutcomeStatus::Denied);
    assert_eq!(
        p.eval("document.getElementById('details-btn').getAttribute('aria-expanded')"),
        "false"
    );
}

#[test]
fn save_the_links_of_this_page_end_to_end() {
    let _g = exclusive();
    let p = tools();
    p.open("/links.html");
    let dir = tempfile::tempdir().unwrap();
    // Plans from the page_read result it receives, as a model would.
    let provider = ScriptedProvider::from_fn(|req| {
        let results: Vec<String> = req
            .messages
            .iter()
            .filter(|m| m.role == Role::Tool)
            .map(|m| m.text())
            .collect();
        match results.len() {
            0 => ScriptedReply::tool_call("page_read", json!({})).into(),
            1 => {
                let links: String = results[0]
                    .lines()
                    .filter(|l| support::is_element_line(l) && l.contains(" link "))
                    .filter_map(|l| l.rsplit_once(" -> ").map(|(_, u)| u.to_string()))
                    .filter(|u| !u.starts_with('['))
                    .map(|u| format!("{u}\n"))
                    .collect();
                ScriptedReply::tool_call("fs_write", json!({"path": "links.txt", "content": links})).into()
            }
            _ => ScriptedReply::text("Saved.").into(),
        }
    });
    let agent = rt().block_on(async { agent_with(p.host.clone(), dir.path(), provider, true) });
    let outcome = rt().block_on(async {
        let s = agent.create_session().await.unwrap();
        s.send("Save the links of this page to links.txt").await
    });
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    let saved = std::fs::read_to_string(dir.path().join("links.txt")).unwrap();
    let lines: Vec<&str> = saved.lines().collect();
    assert_eq!(
        lines,
        [
            "/",
            "/form.html",
            "www.rust-lang.org/learn",
            "doc.rust-lang.org/book/",
            "tokio.rs/tokio/tutorial",
            "chromedevtools.github.io/devtools-protocol/",
            "/page2.html"
        ]
    );
}
