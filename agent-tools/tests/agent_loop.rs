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

/// A hostile page through the real loop: every result the model receives in this turn, and
/// every result replayed (compressed) in the next turn, keeps the page's words between markers.
#[test]
fn hostile_page_text_stays_inside_markers_now_and_when_replayed() {
    use agent_core::ScriptStep;
    use support::{FORGED, HOSTILE, assert_all_inside_markers};

    let _g = exclusive();
    let p = tools();
    p.open("/hostile.html");
    let dir = tempfile::tempdir().unwrap();
    let calls: Vec<ScriptStep> = vec![
        ScriptedReply::tool_call("page_read", json!({})).into(),
        ScriptedReply::tool_call("page_text", json!({"selector": "#intro"})).into(),
        ScriptedReply::tool_call("page_fill", json!({"selector": "#name", "text": "Ada"})).into(),
        ScriptedReply::tool_call("page_fill", json!({"selector": "#mirror", "text": "Ada"})).into(),
        ScriptedReply::tool_call("page_select", json!({"selector": "#pick", "value": "b"})).into(),
        ScriptedReply::tool_call("page_click", json!({"selector": ".twin"})).into(),
        ScriptedReply::tool_call("page_click", json!({"selector": "#retitle"})).into(),
        ScriptedReply::text("Done.").into(),
        ScriptedReply::text("Nothing more.").into(),
    ];
    let provider = Arc::new(ScriptedProvider::new(calls).record_requests());
    let agent = rt().block_on(async {
        // Short strings are cut in the compressed form, so every result with a page string
        // in its structured data is replayed compressed.
        let config = agent_core::AgentConfig {
            compression: agent_core::CompressionConfig {
                max_value_chars: 60,
                head_chars: 40,
                tail_chars: 10,
                ..agent_core::CompressionConfig::default()
            },
            ..agent_core::AgentConfig::default()
        };
        let mut b = Agent::builder()
            .provider_arc(provider.clone())
            .config(config)
            .gate(AllowAll);
        for t in page_tools(p.host.clone())
            .into_iter()
            .chain(fs_tools(FsPolicy::root(dir.path())))
        {
            b = b.tool_arc(t);
        }
        b.build().unwrap()
    });
    rt().block_on(async {
        let s = agent.create_session().await.unwrap();
        assert_eq!(s.send("Look at this page").await.status, OutcomeStatus::Done);
        assert_eq!(s.send("Anything else?").await.status, OutcomeStatus::Done);
    });
    let requests = provider.requests();
    assert_eq!(requests.len(), 9);
    let results = |i: usize| -> Vec<String> {
        requests[i]
            .messages
            .iter()
            .filter(|m| m.role == Role::Tool)
            .map(|m| m.text())
            .collect()
    };
    // This turn: each result as it arrived (the last request of turn 1 holds all seven).
    let now = results(7);
    assert_eq!(now.len(), 7);
    for r in &now {
        assert_all_inside_markers(r, HOSTILE);
    }
    // The next turn: earlier results are replayed compressed, still wrapped.
    let replayed = results(8);
    assert_eq!(replayed.len(), 7);
    let compressed = replayed.iter().zip(&now).filter(|(r, n)| r != n).count();
    assert!(
        compressed >= 3,
        "earlier results are replayed compressed: {replayed:#?}"
    );
    for r in replayed.iter().filter(|r| r.contains(HOSTILE)) {
        assert_all_inside_markers(r, HOSTILE);
    }
    let all = replayed.join("\n");
    assert!(all.contains(HOSTILE), "the replay quotes the page: {all}");
    assert!(!all.contains(FORGED));
    for r in &replayed {
        assert!(!r.contains(FORGED), "{r}");
    }
}

#[test]
fn a_dialog_the_model_leaves_open_is_dismissed_when_the_turn_ends() {
    let _g = exclusive();
    let p = tools();
    p.open("/dialog.html");
    let dir = tempfile::tempdir().unwrap();
    // The click opens a confirm; the model is told, and ends its turn without answering it.
    let provider = ScriptedProvider::new([
        ScriptedReply::tool_call("page_click", json!({"selector": "#keep"})).into(),
        ScriptedReply::text("The page asks whether to keep the draft; I leave that to you.").into(),
    ]);
    let agent = rt().block_on(async { agent_with(p.host.clone(), dir.path(), provider, true) });
    let outcome = rt().block_on(async {
        let s = agent.create_session().await.unwrap();
        s.send("keep my draft").await
    });
    assert_eq!(outcome.status, OutcomeStatus::Done);
    // Dismissed (Cancel) before the outcome came back: the page runs again, its confirm()
    // having answered false.
    assert!(rt().block_on(p.host.dialog(None)).unwrap().is_none());
    assert_eq!(p.eval("document.getElementById('out').textContent"), "dropped");
}
