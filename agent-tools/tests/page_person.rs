#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! Acting like a person, in real headless Chromium on loopback fixture pages: page_scroll,
//! page_wait_for, page_back / page_forward, page_hover and page_press_key, with their
//! read-backs and refusals (docs/page-tools.md's refusal table names each test).

mod support;

use serde_json::json;
use support::{exclusive, tools};

// ------------------------------------------------------------------ page_scroll

#[test]
fn scroll_down_moves_the_viewport_and_reports_what_came_into_view() {
    let _g = exclusive();
    let p = tools();
    p.open("/long.html");
    let out = p.ok("page_scroll", json!({"direction": "down"}));
    let text = out.text_content();
    let v = out.structured.unwrap();
    assert_eq!(v["moved"], true, "{text}");
    assert!(v["y"].as_i64().unwrap() > 300, "{text}");
    assert_eq!(v["at_top"], false, "{text}");
    assert!(
        p.eval("window.scrollY").as_f64().unwrap() > 300.0,
        "the page really scrolled"
    );
    assert!(text.starts_with("scrolled down\nviewport: "), "{text}");
    assert!(
        text.contains("came into view:") && text.contains("Paragraph 20:"),
        "{text}"
    );
    assert!(text.contains("headings: \"Section"), "{text}");
    // Up again: back at the top.
    let v = p.ok("page_scroll", json!({"direction": "up"})).structured.unwrap();
    assert_eq!(v["at_top"], true);
}

#[test]
fn scroll_to_the_bottom_says_so_and_a_further_scroll_moves_nothing() {
    let _g = exclusive();
    let p = tools();
    p.open("/long.html");
    let out = p.ok("page_scroll", json!({"direction": "bottom"}));
    let text = out.text_content();
    assert_eq!(out.structured.unwrap()["at_bottom"], true, "{text}");
    assert!(text.contains("; at the bottom"), "{text}");
    assert!(
        text.lines()
            .any(|l| support::is_element_line(l) && l.contains("link \"Bottom link\"")),
        "the link at the bottom came into view with a ref: {text}"
    );
    let text = p.text("page_scroll", json!({"direction": "down"}));
    assert!(text.starts_with("scrolled down: nothing moved"), "{text}");
    assert!(text.contains("nothing new came into view"), "{text}");
    let v = p.ok("page_scroll", json!({"direction": "top"})).structured.unwrap();
    assert_eq!(v["y"], 0);
}

#[test]
fn scroll_to_a_text_or_a_ref_brings_it_into_view() {
    let _g = exclusive();
    let p = tools();
    p.open("/long.html");
    let in_view = |sel: &str| {
        p.eval(&format!(
            "(() => {{ const r = document.querySelector({sel:?}).getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; }})()"
        ))
    };
    assert_eq!(in_view("b"), false);
    // The text is split across elements ("deep <b>treasure</b>").
    let out = support::model_view(&p.ok("page_scroll", json!({"text": "DEEP treasure"})));
    assert!(out.contains("scrolled to"), "{out}");
    assert!(out.contains("<untrusted-content"), "the result quotes the page: {out}");
    assert_eq!(in_view("b"), true);
    p.ok("page_scroll", json!({"direction": "top"}));
    let snap = p.text("page_read", json!({"find": "Bottom link"}));
    let r = snap
        .lines()
        .find(|l| support::is_element_line(l))
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let text = p.text("page_scroll", json!({"ref": r}));
    assert!(
        text.starts_with(&format!("scrolled to {r} (link \"Bottom link\")")),
        "{text}"
    );
    assert_eq!(in_view("a[href='/page2.html']"), true);
}

#[test]
fn scroll_refuses_unclear_requests_and_missing_text() {
    let _g = exclusive();
    let p = tools();
    p.open("/long.html");
    for args in [
        json!({}),
        json!({"direction": "down", "text": "Paragraph"}),
        json!({"direction": "sideways"}),
    ] {
        let msg = p.refused("page_scroll", args.clone());
        assert!(msg.starts_with("refused (bad_scroll)"), "{args}: {msg}");
    }
    let msg = p.refused("page_scroll", json!({"text": "no such words anywhere"}));
    assert!(msg.starts_with("refused (no_text)"), "{msg}");
    assert_eq!(p.eval("window.scrollY"), 0);
}

// ------------------------------------------------------------------ page_wait_for

#[test]
fn wait_for_text_that_a_timer_adds_and_removes() {
    let _g = exclusive();
    let p = tools();
    p.open("/page2.html");
    p.eval("(setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<p id=late>Loaded late</p>'), 400), 1)");
    let out = p.ok("page_wait_for", json!({"text": "loaded LATE"}));
    let text = out.text_content();
    assert!(text.starts_with("\"loaded LATE\" is on the page (after "), "{text}");
    assert_eq!(out.structured.unwrap()["ok"], true);
    assert_eq!(p.eval("document.getElementById('late').textContent"), "Loaded late");
    let text = p.text("page_wait_for", json!({"text": "Loaded late"}));
    assert!(text.contains("(already)"), "{text}");
    p.eval("(setTimeout(() => document.getElementById('late').remove(), 300), 1)");
    let text = p.text("page_wait_for", json!({"text": "Loaded late", "gone": true}));
    assert!(
        text.starts_with("\"Loaded late\" is gone from the page (after "),
        "{text}"
    );
}

#[test]
fn wait_for_an_element_to_show_and_a_ref_to_go() {
    let _g = exclusive();
    let p = tools();
    p.open("/page2.html");
    p.eval("(document.body.insertAdjacentHTML('beforeend', '<button id=later hidden>Later</button>'), setTimeout(() => { document.getElementById('later').hidden = false; }, 300), 1)");
    let text = p.text("page_wait_for", json!({"selector": "#later"}));
    assert!(text.contains("(button \"Later\") is visible (after "), "{text}");
    let other = p.ref_of("\"Other button\"");
    p.eval("(setTimeout(() => document.getElementById('other').remove(), 300), 1)");
    let text = p.text("page_wait_for", json!({"ref": other, "gone": true}));
    assert!(
        text.starts_with(&format!("{other} was removed from the page")),
        "{text}"
    );
}

#[test]
fn wait_for_the_address_to_change_across_a_navigation() {
    let _g = exclusive();
    let p = tools();
    p.open("/page2.html");
    p.eval("(setTimeout(() => { location.hash = 'moved'; }, 200), 1)");
    let text = p.text("page_wait_for", json!({"url_changes": true}));
    assert!(
        text.starts_with("the address is ") && text.contains("/page2.html#moved"),
        "{text}"
    );
    // A new document replaces the one being checked: the wait carries on in the new one.
    p.eval("(setTimeout(() => { location.href = '/links.html'; }, 200), 1)");
    let text = p.text("page_wait_for", json!({"url_contains": "LINKS.html"}));
    assert!(text.contains("/links.html"), "{text}");
    let text = p.text("page_wait_for", json!({"settled": true}));
    assert!(text.starts_with("the page settled after "), "{text}");
}

#[test]
fn wait_for_times_out_with_what_to_do_and_refuses_unclear_conditions() {
    let _g = exclusive();
    let p = tools();
    p.open("/page2.html");
    let msg = p.refused("page_wait_for", json!({"text": "never shown", "timeout_ms": 300}));
    assert!(
        msg.starts_with("timed out after 0.3 s: \"never shown\" did not appear.") && msg.contains("page_read"),
        "{msg}"
    );
    let msg = p.refused("page_wait_for", json!({"selector": "#nope", "timeout_ms": 200}));
    assert!(
        msg.contains("an element matching \"#nope\" did not become visible"),
        "{msg}"
    );
    for args in [
        json!({}),
        json!({"text": "a", "url_changes": true}),
        json!({"url_changes": true, "gone": true}),
    ] {
        let msg = p.refused("page_wait_for", args.clone());
        assert!(msg.starts_with("refused (bad_wait)"), "{args}: {msg}");
    }
    // A selector that cannot match is refused at once, not waited on.
    let msg = p.refused("page_wait_for", json!({"selector": "a[[", "timeout_ms": 20000}));
    assert!(msg.contains("bad_selector"), "{msg}");
}

// ------------------------------------------------------------------ page_back / page_forward

#[test]
fn back_and_forward_move_through_the_tabs_history() {
    let _g = exclusive();
    let p = tools();
    p.open("/links.html");
    p.open("/page2.html");
    let out = p.ok("page_back", json!({}));
    let text = out.text_content();
    assert!(
        text.starts_with(&format!("went back to {}", support::url("/links.html"))),
        "{text}"
    );
    assert!(text.ends_with("(title \"Reading list\")"), "{text}");
    assert_eq!(out.structured.unwrap()["moved"], true);
    assert!(p.eval("location.pathname").as_str().unwrap().ends_with("/links.html"));
    let text = p.text("page_forward", json!({}));
    assert!(
        text.starts_with(&format!("went forward to {}", support::url("/page2.html"))),
        "{text}"
    );
    // Nothing later: it says so, and the page stays.
    let out = p.ok("page_forward", json!({}));
    assert!(
        out.text_content()
            .starts_with("nothing moved: there is no later page in this tab's history"),
        "{}",
        out.text_content()
    );
    assert_eq!(out.structured.unwrap()["moved"], false);
    assert!(p.eval("location.pathname").as_str().unwrap().ends_with("/page2.html"));
}

#[test]
fn back_in_a_fresh_tab_has_no_earlier_page() {
    let _g = exclusive();
    let p = tools();
    let host = p.host.clone();
    let tab = support::rt()
        .block_on(host.open_tab(Some(&support::url("/page2.html"))))
        .unwrap();
    support::rt()
        .block_on(host.wait_settled(Some(&tab.id), std::time::Duration::from_secs(5)))
        .unwrap();
    let bound = agent_tools::page_tools_for_tab(host.clone(), tab.id.as_str());
    let back = bound.iter().find(|t| t.spec().name == "page_back").unwrap().clone();
    let out = support::rt()
        .block_on(back.call(
            json!({}),
            agent_core::ToolContext::detached(agent_core::SessionId::new_random(), "t"),
        ))
        .unwrap();
    assert!(
        out.text_content()
            .starts_with("nothing moved: there is no earlier page"),
        "{}",
        out.text_content()
    );
    let _ = support::rt().block_on(host.close_tab(&tab.id));
}
