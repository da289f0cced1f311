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
