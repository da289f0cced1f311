#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! Page tools against real headless Chromium on loopback fixture pages: every success path and
//! every refusal (one test per rule; docs/page-tools.md's refusal table names them).

mod support;

use serde_json::json;
use support::{exclusive, tools, url};

// ------------------------------------------------------------------ page_read

#[test]
fn read_lists_elements_with_refs_states_and_untrusted_markers() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let out = p.ok("page_read", json!({}));
    let snap = support::model_view(&out);
    assert!(snap.contains("<untrusted-content nonce=\""), "{snap}");
    let source = out.provenance.as_ref().unwrap().label().to_string();
    assert_eq!(source, format!("web page {}", url("/form.html")));
    assert!(snap.contains("title: \"Form fixture\""), "{snap}");
    assert!(snap.contains("state: complete;"), "{snap}");
    assert!(snap.lines().any(|l| l.contains("textbox \"Name\" =\"\"")), "{snap}");
    assert!(
        snap.lines().any(|l| l.contains("textbox \"Email\" =\"\" required")),
        "{snap}"
    );
    assert!(
        snap.lines().any(|l| l.contains("textbox \"Locked\" =\"\" disabled")),
        "{snap}"
    );
    assert!(
        snap.lines()
            .any(|l| l.contains("textbox \"Fixed\" =\"fixed\" readonly")),
        "{snap}"
    );
    assert!(
        snap.lines().any(|l| l.contains("textbox \"Short\" =\"\" maxlength=5")),
        "{snap}"
    );
    assert!(
        snap.lines().any(|l| l.contains("button \"Save\" submits-form")),
        "{snap}"
    );
    assert!(
        snap.lines().any(|l| l.contains("button \"Show details\" collapsed")),
        "{snap}"
    );
    assert!(
        snap.lines().any(|l| l.contains("combobox \"Country\" =\"Choose\"")),
        "{snap}"
    );
    let facts = out.structured.unwrap();
    assert_eq!(facts["readyState"], "complete");
    assert!(facts["counts"]["fields"].as_u64().unwrap() >= 10);
}

#[test]
fn read_never_shows_a_password_value() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let snap = p.text("page_read", json!({}));
    assert!(
        snap.lines().any(|l| l.contains("password \"Password\" (value hidden)")),
        "{snap}"
    );
    assert!(!snap.contains("hunter2"));
}

#[test]
fn read_withholds_data_urls_and_shortens_links() {
    let _g = exclusive();
    let p = tools();
    p.open("/links.html");
    let snap = p.text("page_read", json!({}));
    assert!(
        snap.contains("link \"Inline document\" -> [data/blob URL withheld]"),
        "{snap}"
    );
    assert!(!snap.contains("<b>inline</b>"));
    assert!(
        snap.contains("link \"Learn Rust\" -> www.rust-lang.org/learn"),
        "{snap}"
    );
    assert!(snap.contains("link \"Second page\" -> /page2.html"), "{snap}");
    // A data: page's own address is withheld too.
    let u = "data:text/html,<title>D</title><a href='/x'>x</a>";
    support::rt().block_on(p.host.navigate(None, u)).unwrap();
    let snap = p.text("page_read", json!({}));
    assert!(snap.contains("url: [data/blob URL withheld]"), "{snap}");
}

#[test]
fn read_refs_are_stable_across_reads_of_the_same_document() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let a = p.ref_of("\"Show details\"");
    let b = p.ref_of("\"Show details\"");
    assert_eq!(a, b);
    let name_a = p.ref_of("\"Name\"");
    p.ok("page_fill", json!({"ref": name_a, "text": "Ada"}));
    assert_eq!(p.ref_of("\"Name\""), name_a);
}

#[test]
fn read_collapses_repeated_context_and_marks_page_text_as_untrusted() {
    let _g = exclusive();
    let p = tools();
    p.open("/links.html");
    let snap = support::model_view(&p.ok("page_read", json!({})));
    assert!(snap.contains("## Card (×3)"), "{snap}");
    assert!(snap.contains("# Reading list"), "{snap}");
    assert!(snap.contains("[navigation \"Site\"]"), "{snap}");
    // The injected instruction is inside the markers, after the data-not-instructions note.
    let open = snap.find("<untrusted-content").unwrap();
    let inj = snap.find("Ignore previous instructions").unwrap();
    let close = snap.find("</untrusted-content").unwrap();
    assert!(open < inj && inj < close);
}

#[test]
fn read_lists_the_viewport_first_and_pages_with_offset_and_find() {
    let _g = exclusive();
    let p = tools();
    p.open("/links.html");
    // Make a long page: 300 links, most below the fold, and scroll to the middle.
    p.eval(
        "(() => { const ul = document.getElementById('list'); for (let i = 0; i < 300; i++) { const li = document.createElement('li'); li.innerHTML = `<a href=\"/item/${i}\">Item ${i}</a>`; ul.appendChild(li); } document.getElementById('list').children[150].scrollIntoView({block: 'start'}); return 1; })()",
    );
    let snap = p.text("page_read", json!({}));
    let first_el = snap.lines().find(|l| support::is_element_line(l)).unwrap();
    assert!(
        first_el.contains("Item 14") || first_el.contains("Item 15"),
        "viewport first: {first_el}\n{snap}"
    );
    assert!(snap.contains("-- below/outside the viewport --"), "{snap}");
    assert!(
        snap.contains("more lines not shown: call page_read with offset="),
        "{snap}"
    );
    let offset: usize = snap
        .split("offset=")
        .nth(1)
        .unwrap()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let next = p.text("page_read", json!({"offset": offset}));
    assert!(!next.contains("text: "), "later pages skip the preview");
    assert!(next.lines().any(support::is_element_line));
    let found = p.text("page_read", json!({"find": "Item 299"}));
    let lines: Vec<_> = found.lines().filter(|l| support::is_element_line(l)).collect();
    assert_eq!(lines.len(), 1, "{found}");
    assert!(snap.chars().count() <= 20_000);
}

#[test]
fn read_result_is_capped_at_20k_chars() {
    let _g = exclusive();
    let p = tools();
    p.open("/links.html");
    p.eval("(() => { const ul = document.getElementById('list'); for (let i = 0; i < 3000; i++) { const li = document.createElement('li'); li.innerHTML = `<a href=\"/a/very/long/path/segment/number/${i}/${'x'.repeat(40)}\">A rather long link name number ${i} ${'y'.repeat(30)}</a>`; ul.appendChild(li); } return 1; })()");
    let out = p.ok("page_read", json!({}));
    assert!(out.truncated);
    assert!(
        out.text_content().chars().count() <= 20_000,
        "{}",
        out.text_content().chars().count()
    );
}

#[test]
fn shadow_and_iframe_elements_are_listed_and_addressable_by_ref() {
    let _g = exclusive();
    let p = tools();
    p.open("/shadow.html");
    let snap = p.text("page_read", json!({}));
    assert!(snap.contains("1 iframes, 1 shadow roots"), "{snap}");
    let inc = p.ref_of("\"Increment\"");
    let out = p.text("page_click", json!({"ref": inc}));
    assert!(out.starts_with("clicked"), "{out}");
    assert_eq!(
        p.eval("document.getElementById('counter').shadowRoot.getElementById('count').textContent"),
        "1"
    );
    let fb = p.ref_of("\"Frame button\"");
    let out = p.text("page_click", json!({"ref": fb}));
    assert!(out.starts_with("clicked"), "{out}");
    assert_eq!(
        p.eval("document.getElementById('frame').contentDocument.getElementById('msg').textContent"),
        "clicked in frame"
    );
    let ff = p.ref_of("\"Frame field\"");
    let out = p.text("page_fill", json!({"ref": ff, "text": "in the frame"}));
    assert!(out.contains("read back the same"), "{out}");
}

#[test]
fn shadow_dom_selector_crosses_root_b5() {
    let _g = exclusive();
    let p = tools();
    p.open("/shadow.html");
    let out = p.text("page_fill", json!({"selector": "#counter >>> #amount", "text": "42"}));
    assert!(out.contains("read back the same"), "{out}");
    let out = p.text("page_click", json!({"selector": "#counter >>> #inc"}));
    assert!(out.starts_with("clicked"), "{out}");
    let out = p.text("page_text", json!({"selector": "#frame >>> #msg"}));
    assert!(out.contains("idle"), "{out}");
    // A plain selector that only matches inside a shadow root says how to reach it.
    let msg = p.refused("page_click", json!({"selector": "#inc"}));
    assert!(
        msg.contains("no_match") && msg.contains(">>>") && msg.contains("button \"Increment\""),
        "{msg}"
    );
}

// ------------------------------------------------------------------ page_text

#[test]
fn text_returns_the_visible_text_of_one_element() {
    let _g = exclusive();
    let p = tools();
    p.open("/links.html");
    let out = support::model_view(&p.ok("page_text", json!({"selector": "h1"})));
    assert!(
        out.contains("Reading list") && out.contains("<untrusted-content"),
        "{out}"
    );
    let msg = p.refused("page_text", json!({"selector": "li"}));
    assert!(msg.contains("ambiguous"), "{msg}");
}

// ------------------------------------------------------------------ targets

#[test]
fn refuses_empty_selector() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let msg = p.refused("page_click", json!({"selector": "  "}));
    assert!(msg.contains("empty_selector"), "{msg}");
    let msg = p.refused("page_click", json!({}));
    assert!(msg.contains("empty_selector"), "{msg}");
}

#[test]
fn refuses_no_match() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let msg = p.refused("page_click", json!({"selector": "#does-not-exist"}));
    assert!(msg.contains("no_match"), "{msg}");
}

#[test]
fn refuses_ambiguous_selector_listing_up_to_5_candidates() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let msg = p.refused("page_click", json!({"selector": ".dup"}));
    assert!(msg.contains("ambiguous") && msg.contains("matches 3 elements"), "{msg}");
    assert_eq!(msg.lines().filter(|l| l.contains("button \"Add\"")).count(), 3, "{msg}");
    let msg = p.refused("page_click", json!({"selector": "button"}));
    let cands = msg.lines().filter(|l| support::is_element_line(l.trim_start())).count();
    assert_eq!(cands, 5, "{msg}");
    let msg = p.refused("page_fill", json!({"selector": "input[type=text]", "text": "x"}));
    assert!(msg.contains("ambiguous"), "{msg}");
}

#[test]
fn refuses_selector_that_does_not_compile() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let msg = p.refused("page_click", json!({"selector": "button[["}));
    assert!(
        msg.contains("bad_selector") && msg.contains("does not compile"),
        "{msg}"
    );
}

#[test]
fn refuses_missing_within_container() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let msg = p.refused("page_click", json!({"selector": "button", "within": "#nowhere"}));
    assert!(msg.contains("within_missing"), "{msg}");
    // within narrows an ambiguous selector to one element.
    let msg = p.refused("page_fill", json!({"selector": "#name", "within": "#f", "text": "a–b"}));
    assert!(msg.contains("dash"), "{msg}");
}

#[test]
fn refuses_ref_and_selector_together_and_malformed_refs() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let msg = p.refused("page_click", json!({"ref": "e1", "selector": "#noop"}));
    assert!(msg.contains("bad_target"), "{msg}");
    let msg = p.refused("page_click", json!({"ref": "#noop"}));
    assert!(msg.contains("bad_ref"), "{msg}");
}

#[test]
fn unknown_ref_is_refused() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    p.text("page_read", json!({}));
    let msg = p.refused("page_click", json!({"ref": "e999999"}));
    assert!(msg.contains("unknown_ref"), "{msg}");
}

#[test]
fn stale_ref_after_navigation_is_refused() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let noop = p.ref_of("\"Does nothing\"");
    p.open("/page2.html");
    // Before and after reading the new page, the old ref is stale, never guessed.
    let msg = p.refused("page_click", json!({"ref": noop}));
    assert!(msg.contains("stale_ref"), "{msg}");
    p.text("page_read", json!({}));
    let msg = p.refused("page_click", json!({"ref": noop}));
    assert!(msg.contains("stale_ref"), "{msg}");
}

#[test]
fn stale_ref_after_rerender_is_refused() {
    let _g = exclusive();
    let p = tools();
    p.open("/rerender.html");
    let item = p.ref_of("\"Item\"");
    let rr = p.ref_of("\"Re-render\"");
    p.ok("page_click", json!({"ref": rr}));
    let msg = p.refused("page_click", json!({"ref": item}));
    assert!(msg.contains("stale_ref") && msg.contains("removed"), "{msg}");
    let fresh = p.ref_of("\"Item\"");
    assert_ne!(fresh, item);
}

// ------------------------------------------------------------------ page_click

#[test]
fn click_success_reports_what_changed() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let r = p.ref_of("\"Show details\"");
    let out = p.ok("page_click", json!({"ref": r}));
    let text = out.text_content();
    assert!(
        text.starts_with("clicked") && text.contains("expansion state changed"),
        "{text}"
    );
    assert_eq!(out.structured.unwrap()["ok"], true);
}

#[test]
fn click_checkbox_reports_the_change_and_read_shows_checked() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let r = p.ref_of("checkbox \"Agree\"");
    let text = p.text("page_click", json!({"ref": r}));
    assert!(text.contains("field values changed"), "{text}");
    let snap = p.text("page_read", json!({}));
    assert!(
        snap.lines()
            .any(|l| l.starts_with(&format!("{r} checkbox \"Agree\" checked"))),
        "{snap}"
    );
}

#[test]
fn click_navigating_link_reports_the_new_address() {
    let _g = exclusive();
    let p = tools();
    p.open("/links.html");
    let r = p.ref_of("\"Second page\"");
    let text = p.text("page_click", json!({"ref": r}));
    assert!(
        text.contains("address is now") && text.contains("/page2.html"),
        "{text}"
    );
}

#[test]
fn click_without_change_is_not_verified() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let out = p.ok("page_click", json!({"selector": "#noop"}));
    assert!(out.text_content().starts_with("NOT VERIFIED"), "{}", out.text_content());
    assert_eq!(out.structured.unwrap()["ok"], false);
}

#[test]
fn click_refuses_disabled() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let msg = p.refused("page_click", json!({"selector": "#off"}));
    assert!(msg.contains("(disabled)"), "{msg}");
}

#[test]
fn click_refuses_password_field() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let msg = p.refused("page_click", json!({"selector": "#pw"}));
    assert!(msg.contains("(password)"), "{msg}");
}

#[test]
fn click_refuses_commit_like_controls() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    for id in [
        "pay",
        "del",
        "order",
        "send",
        "confirm",
        "publish",
        "checkout",
        "purchase",
        "submit-plain",
    ] {
        let msg = p.refused("page_click", json!({"selector": format!("#{id}")}));
        assert!(
            msg.contains("(commit_action)") && msg.contains("left to the person"),
            "{id}: {msg}"
        );
    }
    assert_eq!(p.eval("location.hash"), "", "the send link was not followed");
}

#[test]
fn click_refuses_button_that_submits_form() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let msg = p.refused("page_click", json!({"selector": "#save"}));
    assert!(msg.contains("(submits_form)"), "{msg}");
    assert!(p.eval("location.pathname").as_str().unwrap().ends_with("/form.html"));
}

#[test]
fn click_refuses_hidden() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let msg = p.refused("page_click", json!({"selector": "#hidden"}));
    assert!(msg.contains("(hidden)"), "{msg}");
}

#[test]
fn click_refuses_zero_size() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let msg = p.refused("page_click", json!({"selector": "#zero"}));
    assert!(msg.contains("(zero_size)"), "{msg}");
}

#[test]
fn click_refuses_covered() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let msg = p.refused("page_click", json!({"selector": "#covered"}));
    assert!(msg.contains("(covered)") && msg.contains("div#overlay"), "{msg}");
}

// ------------------------------------------------------------------ page_fill

#[test]
fn fill_success_reads_back() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let r = p.ref_of("\"Name\"");
    let out = p.ok("page_fill", json!({"ref": r, "text": "Ada Lovelace"}));
    assert!(
        out.text_content().contains("read back the same"),
        "{}",
        out.text_content()
    );
    assert_eq!(p.eval("document.getElementById('name').value"), "Ada Lovelace");
    p.ok("page_fill", json!({"selector": "#notes", "text": "multi\nline"}));
    assert_eq!(p.eval("document.getElementById('notes').value"), "multi\nline");
}

#[test]
fn fill_reports_mismatch_when_the_page_rewrites_the_value() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let out = p.ok("page_fill", json!({"selector": "#upper", "text": "quiet"}));
    let text = out.text_content();
    assert!(
        text.starts_with("MISMATCH") && text.contains("\"quiet\"") && text.contains("\"QUIET\""),
        "{text}"
    );
    assert_eq!(out.structured.unwrap()["ok"], false);
}

#[test]
fn fill_refuses_empty_text() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let msg = p.refused("page_fill", json!({"selector": "#name", "text": ""}));
    assert!(msg.contains("(empty_text)"), "{msg}");
}

#[test]
fn fill_refuses_em_and_en_dash() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    for t in ["a — b", "1–2"] {
        let msg = p.refused("page_fill", json!({"selector": "#name", "text": t}));
        assert!(msg.contains("(dash)"), "{msg}");
    }
}

#[test]
fn fill_refuses_password() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let msg = p.refused("page_fill", json!({"selector": "#pw", "text": "guess"}));
    assert!(msg.contains("(password)"), "{msg}");
    assert_eq!(p.eval("document.getElementById('pw').value"), "hunter2");
}

#[test]
fn fill_refuses_non_text_control() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    for sel in ["#agree", "#country", "#noop"] {
        let msg = p.refused("page_fill", json!({"selector": sel, "text": "x"}));
        assert!(msg.contains("(not_text_input)"), "{sel}: {msg}");
    }
}

#[test]
fn fill_refuses_text_longer_than_maxlength() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let msg = p.refused("page_fill", json!({"selector": "#short", "text": "toolong"}));
    assert!(msg.contains("(too_long)") && msg.contains("at most 5"), "{msg}");
    p.ok("page_fill", json!({"selector": "#short", "text": "fits"}));
}

#[test]
fn fill_refuses_disabled_field_b3() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let msg = p.refused("page_fill", json!({"selector": "#dis", "text": "x"}));
    assert!(msg.contains("(disabled)"), "{msg}");
    assert_eq!(p.eval("document.getElementById('dis').value"), "");
}

#[test]
fn fill_refuses_read_only_field_b3() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let msg = p.refused("page_fill", json!({"selector": "#ro", "text": "changed"}));
    assert!(msg.contains("(read_only)"), "{msg}");
    assert_eq!(p.eval("document.getElementById('ro').value"), "fixed");
}

#[test]
fn fill_refuses_covered_field() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    p.eval("(() => { const i = document.createElement('input'); i.id = 'under'; i.style = 'position:fixed;left:20px;top:20px'; document.body.appendChild(i); document.getElementById('overlay').style.zIndex = '10'; return 1; })()");
    let msg = p.refused("page_fill", json!({"selector": "#under", "text": "x"}));
    assert!(msg.contains("(covered)"), "{msg}");
}

// ------------------------------------------------------------------ page_select

#[test]
fn select_by_value_and_by_label() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let out = p.text("page_select", json!({"selector": "#country", "value": "de"}));
    assert!(
        out.contains("selected \"Germany\"") && out.contains("read back the same"),
        "{out}"
    );
    let out = p.text("page_select", json!({"selector": "#country", "value": "france"}));
    assert!(out.contains("\"France\""), "{out}");
    assert_eq!(p.eval("document.getElementById('country').value"), "fr");
}

#[test]
fn select_refuses_empty_value() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let msg = p.refused("page_select", json!({"selector": "#country", "value": " "}));
    assert!(msg.contains("(empty_value)"), "{msg}");
}

#[test]
fn select_refuses_disabled() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let msg = p.refused("page_select", json!({"selector": "#frozen", "value": "One"}));
    assert!(msg.contains("(disabled)"), "{msg}");
    let msg = p.refused("page_select", json!({"selector": "#country", "value": "Nowhere"}));
    assert!(msg.contains("(option_disabled)"), "{msg}");
}

#[test]
fn select_refuses_non_select() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let msg = p.refused("page_select", json!({"selector": "#name", "value": "x"}));
    assert!(msg.contains("(not_select)"), "{msg}");
}

#[test]
fn select_refuses_unknown_option_listing_options() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let msg = p.refused("page_select", json!({"selector": "#country", "value": "Spain"}));
    assert!(
        msg.contains("(no_option)") && msg.contains("\"France\" (value \"fr\")"),
        "{msg}"
    );
}

// ------------------------------------------------------------------ page_navigate

#[test]
fn navigate_follows_redirects_and_returns_the_final_url() {
    let _g = exclusive();
    let p = tools();
    let out = p.ok("page_navigate", json!({"url": url("/redirect?to=/page2.html")}));
    let v = out.structured.unwrap();
    assert_eq!(v["url"], url("/page2.html"));
    assert_eq!(v["kind"], "url");
    // Without a scheme, a loopback address resolves to http.
    let bare = url("/links.html").replace("http://", "");
    let v = p.ok("page_navigate", json!({"url": bare})).structured.unwrap();
    assert_eq!(v["url"], url("/links.html"));
}

#[test]
fn navigate_refuses_dangerous_and_other_app_schemes() {
    let _g = exclusive();
    let p = tools();
    p.open("/links.html");
    for u in [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "data:text/html,hi",
        "mailto:a@example.com",
        "tel:123",
    ] {
        let msg = p.refused("page_navigate", json!({"url": u}));
        assert!(msg.starts_with("refused"), "{u}: {msg}");
    }
    assert!(p.eval("location.pathname").as_str().unwrap().ends_with("/links.html"));
}

#[test]
fn navigate_failure_is_an_error_for_the_model() {
    let _g = exclusive();
    let p = tools();
    // The host resolver rules map every name but loopback to NOTFOUND: nothing leaves.
    match p.call("page_navigate", json!({"url": "https://example.invalid/"})) {
        Ok(o) => assert!(
            o.structured.unwrap()["url"]
                .as_str()
                .unwrap()
                .starts_with("chrome-error"),
            "a blocked name must not load"
        ),
        Err(e) => assert!(!e.is_fatal(), "{e}"),
    }
}

// ------------------------------------------------------------------ page_scrape

#[test]
fn scrape_refuses_other_schemes() {
    let p = tools();
    for u in ["http://example.com/", "file:///etc/passwd", "ftp://x/y", "javascript:1"] {
        let msg = p.refused("page_scrape", json!({"url": u}));
        assert!(
            msg.contains("https addresses only") || msg.contains("not a URL"),
            "{u}: {msg}"
        );
    }
}

#[test]
fn scrape_extracts_text_without_rendering() {
    // The test configuration allows http on loopback (there is no TLS fixture server).
    let p = tools();
    let out = support::model_view(&p.ok("page_scrape", json!({"url": url("/form.html")})));
    assert!(
        out.contains("<untrusted-content") && out.contains("Show details"),
        "{out}"
    );
    assert!(!out.contains("toUpperCase"), "scripts are dropped: {out}");
}

// ------------------------------------------------------------------ tabs

#[test]
fn multi_tab_open_activate_close() {
    let _g = exclusive();
    let p = tools();
    p.open("/links.html");
    let first = p.ok("tabs_list", json!({})).structured.unwrap();
    let first_id = first.as_array().unwrap().iter().find(|t| t["active"] == true).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let opened = p.ok("tab_open", json!({"url": url("/page2.html")})).structured.unwrap();
    let new_id = opened["id"].as_str().unwrap().to_string();
    assert_eq!(opened["url"], url("/page2.html"));
    let tabs = p.ok("tabs_list", json!({})).structured.unwrap();
    assert_eq!(tabs.as_array().unwrap().len(), first.as_array().unwrap().len() + 1);
    assert!(p.text("page_read", json!({})).contains("Second page"));
    // Refs of the other tab are refused there, never guessed.
    let other_btn = p.ref_of("\"Other button\"");
    p.ok("tab_activate", json!({"id": first_id}));
    assert!(p.text("page_read", json!({})).contains("Reading list"));
    let msg = p.refused("page_click", json!({"ref": other_btn}));
    assert!(msg.contains("stale_ref"), "{msg}");
    p.ok("tab_close", json!({"id": new_id}));
    let tabs = p.ok("tabs_list", json!({})).structured.unwrap();
    assert!(tabs.as_array().unwrap().iter().all(|t| t["id"] != new_id.as_str()));
    let msg = p.refused("tab_activate", json!({"id": "no-such-tab"}));
    assert!(msg.contains("no tab"), "{msg}");
}

#[test]
fn gated_by_default() {
    let p = tools();
    let gated: Vec<_> = p
        .tools
        .iter()
        .filter(|t| t.spec().gated)
        .map(|t| t.spec().name.clone())
        .collect();
    assert_eq!(
        gated,
        [
            "page_scrape",
            "page_navigate",
            "page_back",
            "page_forward",
            "page_click",
            "page_fill",
            "page_select",
            "page_press_key",
            "page_dialog",
            "page_upload",
            "tab_open",
            "tab_activate",
            "tab_close"
        ]
    );
}

// ------------------------------------------------------------------ hostile pages

/// Every path that quotes the hostile page keeps its text between markers (as the model sees
/// it: the loop wraps results that name a source; refusals are wrapped by the tools).
mod hostile {
    use super::*;
    use support::{HOSTILE, assert_all_inside_markers, model_view};

    #[test]
    fn read_keeps_page_text_inside_markers_and_caps_the_title() {
        let _g = exclusive();
        let p = tools();
        p.open("/hostile.html");
        let out = p.ok("page_read", json!({}));
        let seen = model_view(&out);
        assert_all_inside_markers(&seen, HOSTILE);
        assert!(out.text_content().contains("[marker removed]") || seen.contains("[marker removed]"));
        // The structured facts (replayed compressed later) carry the page's title too.
        let facts = out.structured.unwrap();
        assert!(facts["title"].as_str().unwrap().starts_with(HOSTILE));
    }

    #[test]
    fn text_keeps_page_text_inside_markers() {
        let _g = exclusive();
        let p = tools();
        p.open("/hostile.html");
        let out = p.ok("page_text", json!({"selector": "#intro"}));
        assert_all_inside_markers(&model_view(&out), HOSTILE);
    }

    #[test]
    fn click_title_change_is_inside_markers_and_capped() {
        let _g = exclusive();
        let p = tools();
        p.open("/hostile.html");
        let out = p.ok("page_click", json!({"selector": "#retitle"}));
        let seen = model_view(&out);
        assert!(seen.contains("title is now"), "{seen}");
        assert_all_inside_markers(&seen, HOSTILE);
        let line = seen.split("title is now ").nth(1).unwrap().lines().next().unwrap();
        let title: String = serde_json::Deserializer::from_str(line)
            .into_iter::<String>()
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(title.chars().count(), 201, "the title is capped: {title}");
        assert!(title.ends_with('…'), "{title}");
    }

    #[test]
    fn fill_echo_and_field_names_are_inside_markers() {
        let _g = exclusive();
        let p = tools();
        p.open("/hostile.html");
        // The field's label is hostile.
        let out = p.ok("page_fill", json!({"selector": "#name", "text": "Ada"}));
        assert_all_inside_markers(&model_view(&out), HOSTILE);
        // The page rewrites the value to hostile text: the MISMATCH echo quotes it.
        let out = p.ok("page_fill", json!({"selector": "#mirror", "text": "Ada"}));
        let seen = model_view(&out);
        assert!(seen.contains("MISMATCH"), "{seen}");
        assert_all_inside_markers(&seen, HOSTILE);
    }

    #[test]
    fn select_echo_is_inside_markers() {
        let _g = exclusive();
        let p = tools();
        p.open("/hostile.html");
        let out = p.ok("page_select", json!({"selector": "#pick", "value": "b"}));
        let seen = model_view(&out);
        assert!(seen.contains("selected"), "{seen}");
        assert_all_inside_markers(&seen, HOSTILE);
    }

    #[test]
    fn refusals_wrap_element_names_and_candidates() {
        let _g = exclusive();
        let p = tools();
        p.open("/hostile.html");
        // Error results are not wrapped by the loop: the refusal wraps the page's words itself.
        let msg = p.refused("page_click", json!({"selector": ".twin"}));
        assert!(msg.starts_with("refused (ambiguous)"), "{msg}");
        assert_all_inside_markers(&msg, HOSTILE);
        let msg = p.refused("page_click", json!({"selector": "#off"}));
        assert!(msg.starts_with("refused (disabled)"), "{msg}");
        assert_all_inside_markers(&msg, HOSTILE);
        let msg = p.refused("page_select", json!({"selector": "#pick", "value": "zzz"}));
        assert!(msg.starts_with("refused (no_option)"), "{msg}");
        assert_all_inside_markers(&msg, HOSTILE);
        // The tools' own refusals stay plain.
        let msg = p.refused("page_click", json!({"ref": "e999999"}));
        assert!(msg.starts_with("refused (unknown_ref): no element e999999"), "{msg}");
    }

    #[test]
    fn tab_titles_are_inside_markers() {
        let _g = exclusive();
        let p = tools();
        p.open("/hostile.html");
        assert_all_inside_markers(&model_view(&p.ok("tabs_list", json!({}))), HOSTILE);
    }
}

// ------------------------------------------------------------------ page_scrape's address policy

mod scrape_policy {
    use std::net::{IpAddr, SocketAddr};
    use std::sync::Arc;

    use agent_core::{SessionId, ToolContext, ToolError};
    use agent_tools::{PageToolsConfig, ScrapePolicy, page_tools_with};
    use serde_json::json;

    use super::support::{self, browser, rt, tls};

    /// Resolves two test names without the network: `loop.test` to loopback, `rebind.test` to
    /// a private address (as a rebinding attacker's DNS would).
    struct FakeDns;

    impl reqwest::dns::Resolve for FakeDns {
        fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
            let ip: Option<IpAddr> = match name.as_str() {
                "loop.test" => Some([127, 0, 0, 1].into()),
                "rebind.test" => Some([10, 255, 255, 1].into()),
                _ => None,
            };
            Box::pin(async move {
                let ip = ip.ok_or("no such name")?;
                Ok(Box::new(std::iter::once(SocketAddr::new(ip, 0))) as reqwest::dns::Addrs)
            })
        }
    }

    fn scrape(policy: ScrapePolicy, url: &str) -> Result<String, String> {
        let host: Arc<dyn agent_tools::BrowserHost> = Arc::new(browser().clone());
        let cfg = PageToolsConfig {
            scrape: policy,
            ..PageToolsConfig::default()
        };
        let tool = page_tools_with(host, cfg)
            .into_iter()
            .find(|t| t.spec().name == "page_scrape")
            .unwrap();
        let r = rt().block_on(tool.call(json!({"url": url}), ToolContext::detached(SessionId::new_random(), "t")));
        match r {
            Ok(out) => Ok(support::model_view(&out)),
            Err(ToolError::ForModel { message, .. }) => Err(message),
            Err(e) => panic!("fatal: {e}"),
        }
    }

    fn loopback_with(server: &tls::TlsServer) -> ScrapePolicy {
        ScrapePolicy {
            allow_loopback: true,
            extra_roots_pem: vec![server.cert_pem.clone()],
            resolver: Some(Arc::new(FakeDns)),
            ..ScrapePolicy::default()
        }
    }

    #[test]
    fn default_policy_refuses_loopback_https_before_connecting() {
        let server = tls::start();
        let msg = scrape(ScrapePolicy::default(), &server.url("/page")).unwrap_err();
        assert!(msg.starts_with("refused") && msg.contains("loopback"), "{msg}");
        // A name that resolves to loopback is refused the same way.
        let policy = ScrapePolicy {
            resolver: Some(Arc::new(FakeDns)),
            ..ScrapePolicy::default()
        };
        let msg = scrape(policy, &format!("https://loop.test:{}/page", server.port)).unwrap_err();
        assert!(msg.starts_with("refused") && msg.contains("loopback"), "{msg}");
        assert_eq!(server.hits(), 0, "no connection was made");
    }

    #[test]
    fn allowed_loopback_with_an_extra_root_fetches() {
        let server = tls::start();
        let out = scrape(loopback_with(&server), &server.url("/page")).unwrap();
        assert!(out.contains("Served over TLS"), "{out}");
        assert!(out.contains("<untrusted-content nonce=\""), "{out}");
        // Through a name, the filtered resolver's answer is used.
        let out = scrape(
            loopback_with(&server),
            &format!("https://loop.test:{}/page", server.port),
        )
        .unwrap();
        assert!(out.contains("Served over TLS"), "{out}");
        // Without the extra root, the self-signed certificate is not trusted.
        let policy = ScrapePolicy {
            allow_loopback: true,
            ..ScrapePolicy::default()
        };
        let msg = scrape(policy, &server.url("/page")).unwrap_err();
        assert!(!msg.starts_with("refused"), "{msg}");
    }

    #[test]
    fn redirect_from_https_to_http_is_refused() {
        let server = tls::start();
        let to = support::url("/form.html");
        assert!(to.starts_with("http://127.0.0.1:"));
        let msg = scrape(loopback_with(&server), &server.url(&format!("/redirect?to={to}"))).unwrap_err();
        assert!(
            msg.starts_with("refused redirect") && msg.contains("https addresses only"),
            "{msg}"
        );
        assert_eq!(server.hits(), 1);
    }

    #[test]
    fn redirect_to_a_private_address_is_refused_before_connecting() {
        // Loopback is allowed for the first hop only because the test server lives there.
        let server = tls::start();
        let msg = scrape(
            loopback_with(&server),
            &server.url("/redirect?to=https://10.255.255.1/"),
        )
        .unwrap_err();
        assert!(
            msg.starts_with("refused redirect") && msg.contains("10.255.255.1 is a private"),
            "{msg}"
        );
        // The page-chosen address reaches the model wrapped.
        support::assert_all_inside_markers(&msg, "https://10.255.255.1/");
        for to in [
            "https://[::ffff:a00:1]/",
            "https://169.254.169.254/",
            "https://100.64.0.1/",
            "https://[fd00::1]/",
        ] {
            let msg = scrape(loopback_with(&server), &server.url(&format!("/redirect?to={to}"))).unwrap_err();
            assert!(msg.starts_with("refused redirect"), "{to}: {msg}");
        }
    }

    #[test]
    fn names_resolving_to_private_addresses_are_refused_before_connecting() {
        let server = tls::start();
        let rebind = format!("https://rebind.test:{}/page", server.port);
        let msg = scrape(loopback_with(&server), &rebind).unwrap_err();
        assert!(
            msg.starts_with("refused name") && msg.contains("10.255.255.1 is a private"),
            "{msg}"
        );
        let msg = scrape(loopback_with(&server), &server.url(&format!("/redirect?to={rebind}"))).unwrap_err();
        assert!(msg.starts_with("refused name") && msg.contains("10.255.255.1"), "{msg}");
    }

    #[test]
    fn an_invalid_extra_root_disables_scraping_instead_of_dropping_the_policy() {
        let policy = ScrapePolicy {
            allow_loopback: true,
            extra_roots_pem: vec!["not a certificate".into()],
            ..ScrapePolicy::default()
        };
        let msg = scrape(policy, "https://127.0.0.1:1/").unwrap_err();
        assert!(msg.contains("not available"), "{msg}");
    }
}
