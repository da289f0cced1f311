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
fn scroll_moves_the_pane_of_a_page_whose_window_does_not_scroll() {
    let _g = exclusive();
    let p = tools();
    p.open("/page2.html");
    p.eval("(() => { const d = document.createElement('div'); d.id = 'pane'; d.style = 'height: 150px; overflow-y: auto'; for (let i = 0; i < 40; i++) d.insertAdjacentHTML('beforeend', `<p>Pane line ${i}</p>`); document.body.appendChild(d); return 1; })()");
    let text = p.text("page_scroll", json!({"direction": "down"}));
    assert!(text.contains("viewport of the scroll area <div#pane"), "{text}");
    assert!(text.contains("Pane line"), "{text}");
    assert!(p.eval("document.getElementById('pane').scrollTop").as_f64().unwrap() > 0.0);
    assert_eq!(p.eval("window.scrollY"), 0);
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

// ------------------------------------------------------------------ page_hover

#[test]
fn hover_fires_mouseenter_and_css_hover_and_reports_the_change() {
    let _g = exclusive();
    let p = tools();
    p.open("/input.html");
    let out = p.ok("page_hover", json!({"selector": "#help"}));
    let text = out.text_content();
    assert!(
        text.starts_with("hovered e") && text.contains("(button \"Help\"); changed: "),
        "{text}"
    );
    assert_eq!(
        p.eval("document.getElementById('hover-log').textContent"),
        "help is showing"
    );
    // A menu that opens on :hover only (no script).
    let text = p.text("page_hover", json!({"selector": "#menu"}));
    assert!(text.contains("changed: text length"), "{text}");
    assert_eq!(
        p.eval("getComputedStyle(document.getElementById('sub')).display"),
        "block"
    );
    let snap = p.text("page_read", json!({"find": "Power tools"}));
    assert!(
        snap.contains("link \"Power tools\""),
        "the opened menu is listed: {snap}"
    );
}

#[test]
fn hover_refuses_hidden_targets_and_says_when_the_host_cannot() {
    let _g = exclusive();
    let p = tools();
    p.open("/input.html");
    let msg = p.refused("page_hover", json!({"selector": "#sub"}));
    assert!(msg.starts_with("refused (hidden)"), "{msg}");
    // A host without real input answers with the trait's default.
    let bare = support::required_only_tools();
    let call = |name: &str, args: serde_json::Value| bare.refused(name, args);
    let msg = call("page_hover", json!({"selector": "#help"}));
    assert!(msg.contains("not supported by this host"), "{msg}");
    let msg = call("page_press_key", json!({"key": "Escape"}));
    assert!(msg.contains("not supported by this host"), "{msg}");
}

fn ctx() -> agent_core::ToolContext {
    agent_core::ToolContext::detached(agent_core::SessionId::new_random(), "t")
}

// ------------------------------------------------------------------ page_press_key

#[test]
fn press_key_chords_edit_a_field_and_enter_triggers_its_handler() {
    let _g = exclusive();
    let p = tools();
    p.open("/input.html");
    p.eval("(document.getElementById('command').value = 'hello', 1)");
    let text = p.text("page_press_key", json!({"selector": "#command", "key": "Control+A"}));
    assert!(
        text.contains("(textbox \"Command\"); selected 5 of 5 characters"),
        "{text}"
    );
    // To the focused element, no target.
    let text = p.text("page_press_key", json!({"key": "Backspace"}));
    assert!(text.contains("value \"hello\" -> \"\""), "{text}");
    p.ok("page_press_key", json!({"key": "x"}));
    assert_eq!(p.eval("document.getElementById('command').value"), "x");
    let text = p.text("page_press_key", json!({"key": "Enter"}));
    assert!(text.contains("; text length "), "{text}");
    assert_eq!(p.eval("document.getElementById('entered').textContent"), "entered: x");
    let text = p.text("page_press_key", json!({"key": "Shift+Tab"}));
    assert!(
        text.contains("focus moved to e") && text.contains("(button \"Help\")"),
        "{text}"
    );
    assert_eq!(p.eval("document.activeElement.id"), "help");
    // Enter in a textarea is a new line, not a submission.
    let text = p.text("page_press_key", json!({"selector": "#notes", "key": "Enter"}));
    assert!(text.contains("(textbox \"Notes\"); value \"\" -> "), "{text}");
    assert_eq!(p.eval("document.getElementById('notes').value"), "\n");
}

#[test]
fn press_key_refuses_what_a_careful_person_would_not_press() {
    let _g = exclusive();
    let p = tools();
    p.open("/input.html");
    let msg = p.refused("page_press_key", json!({"selector": "#q", "key": "Enter"}));
    assert!(msg.starts_with("refused (submits_form)"), "{msg}");
    let msg = p.refused("page_press_key", json!({"selector": "#secret", "key": "a"}));
    assert!(msg.starts_with("refused (password)"), "{msg}");
    // Focus already in the password field: keys to it are refused too.
    p.eval("(document.getElementById('secret').focus(), 1)");
    let msg = p.refused("page_press_key", json!({"key": "Backspace"}));
    assert!(msg.starts_with("refused (password)"), "{msg}");
    assert_eq!(p.eval("document.getElementById('secret').value"), "hunter2");
    let msg = p.refused("page_press_key", json!({"selector": "#wipe", "key": "Enter"}));
    assert!(msg.starts_with("refused (commit_action)"), "{msg}");
    // A button-like input is refused by its value, as page_click refuses it.
    let msg = p.refused("page_press_key", json!({"selector": "#wipe-input", "key": "Space"}));
    assert!(msg.starts_with("refused (commit_action)"), "{msg}");
    let msg = p.refused("page_press_key", json!({"selector": "#notes", "key": "Control+Enter"}));
    assert!(msg.starts_with("refused (commit_key)"), "{msg}");
    let msg = p.refused("page_press_key", json!({"key": "Control+W"}));
    assert!(msg.starts_with("refused (browser_key)"), "{msg}");
    let msg = p.refused("page_press_key", json!({"key": "hello"}));
    assert!(
        msg.starts_with("refused (bad_key)") && msg.contains("page_fill"),
        "{msg}"
    );
    let msg = p.refused("page_press_key", json!({"selector": "#plain", "key": "a"}));
    assert!(msg.starts_with("refused (not_focusable)"), "{msg}");
    assert_eq!(
        p.eval("document.title"),
        "Input fixture",
        "nothing was submitted or wiped"
    );
}

// ------------------------------------------------------------------ the agent's own tab

#[test]
fn bound_tools_act_in_their_own_background_tab() {
    let _g = exclusive();
    let p = tools();
    let host = p.host.clone();
    let rt = support::rt();
    let settle = |id: &str| {
        rt.block_on(host.wait_settled(Some(id), std::time::Duration::from_secs(5)))
            .unwrap()
    };
    let mine = rt.block_on(host.open_tab(Some(&support::url("/long.html")))).unwrap();
    settle(&mine.id);
    // The person opens another tab in front of it.
    let front = rt.block_on(host.open_tab(Some(&support::url("/input.html")))).unwrap();
    settle(&front.id);
    let bound = agent_tools::page_tools_for_tab(host.clone(), mine.id.as_str());
    let call = |name: &str, args: serde_json::Value| {
        let tool = bound.iter().find(|t| t.spec().name == name).unwrap().clone();
        rt.block_on(tool.call(args, ctx()))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .text_content()
    };
    let eval = |id: &str, expr: &str| rt.block_on(host.evaluate(Some(id), expr)).unwrap();
    let text = call("page_scroll", json!({"direction": "down"}));
    assert!(text.starts_with("scrolled down\n"), "{text}");
    assert!(eval(&mine.id, "scrollY").as_f64().unwrap() > 0.0);
    let text = call("page_wait_for", json!({"text": "treasure"}));
    assert!(text.contains("is on the page"), "{text}");
    // Keys reach the background tab, not the one in front. (A mouse move reaches it too, but
    // Chromium delivers it with the next frame, and a background tab paints none: page_hover
    // there waits out Chromium's 5 s input timeout, so this suite leaves it out.)
    rt.block_on(host.navigate(Some(&mine.id), &support::url("/input.html")))
        .unwrap();
    settle(&mine.id);
    call("page_press_key", json!({"selector": "#command", "key": "z"}));
    assert_eq!(eval(&mine.id, "document.getElementById('command').value"), "z");
    let text = call("page_back", json!({}));
    assert!(
        text.starts_with("went back to") && text.contains("/long.html"),
        "{text}"
    );
    assert_eq!(eval(&front.id, "document.getElementById('command').value"), "");
    let active = rt
        .block_on(host.tabs())
        .unwrap()
        .into_iter()
        .find(|t| t.active)
        .unwrap();
    assert_eq!(active.id, front.id, "the person's tab stays in front");
    let _ = rt.block_on(host.close_tab(&front.id));
    let _ = rt.block_on(host.close_tab(&mine.id));
}

// ------------------------------------------------------------------ dialogs

#[test]
fn a_dialog_pauses_the_page_is_reported_and_answered_with_page_dialog() {
    let _g = exclusive();
    let p = tools();
    p.open("/dialog.html");
    // The click opens a confirm: the call returns at once, naming it and what to do.
    let msg = p.refused("page_click", json!({"selector": "#keep"}));
    assert!(
        msg.contains("opened a confirm dialog") && msg.contains("page_dialog"),
        "{msg}"
    );
    support::assert_all_inside_markers(&msg, "Keep the draft for later?");
    // Every page tool says the same while it is open, instead of waiting.
    let msg = p.refused("page_read", json!({}));
    assert!(msg.contains("opened a confirm dialog"), "{msg}");
    let out = p.ok("page_dialog", json!({"accept": true}));
    assert!(
        out.text_content().starts_with("accepted (OK) the confirm dialog"),
        "{}",
        out.text_content()
    );
    assert_eq!(p.eval("document.getElementById('out').textContent"), "kept");
    // A prompt is answered with text; Cancel is always allowed.
    p.refused("page_click", json!({"selector": "#name"}));
    let text = p.text("page_dialog", json!({"accept": true, "text": "Ada"}));
    assert!(text.contains("the prompt dialog with \"Ada\""), "{text}");
    assert_eq!(p.eval("document.getElementById('out').textContent"), "hello Ada");
    p.refused("page_click", json!({"selector": "#keep"}));
    p.ok("page_dialog", json!({"accept": false}));
    assert_eq!(p.eval("document.getElementById('out').textContent"), "dropped");
    let msg = p.refused("page_dialog", json!({"accept": true}));
    assert!(msg.contains("no dialog is open"), "{msg}");
}

#[test]
fn page_dialog_refuses_to_agree_to_a_commitment_or_to_leave_unsaved_work() {
    let _g = exclusive();
    let p = tools();
    p.open("/dialog.html");
    p.refused("page_click", json!({"selector": "#wipe"}));
    let msg = p.refused("page_dialog", json!({"accept": true}));
    assert!(
        msg.starts_with("refused (commit_action)") && msg.contains("\"delete\""),
        "{msg}"
    );
    support::assert_all_inside_markers(&msg, support::HOSTILE);
    p.ok("page_dialog", json!({"accept": false}));
    assert_eq!(p.eval("document.getElementById('out').textContent"), "spared");
    // A page with unsaved work asks before it is left.
    p.eval("(onbeforeunload = (e) => { e.preventDefault(); e.returnValue = ''; }, 1)");
    // Chromium asks only on a page the person has interacted with: a real key press counts.
    p.ok("page_press_key", json!({"selector": "#keep", "key": "a"}));
    let msg = p.refused("page_click", json!({"selector": "#away"}));
    assert!(msg.contains("opened a beforeunload dialog"), "{msg}");
    let msg = p.refused("page_dialog", json!({"accept": true}));
    assert!(msg.starts_with("refused (leave_page)"), "{msg}");
    p.ok("page_dialog", json!({"accept": false}));
    assert!(p.eval("location.pathname").as_str().unwrap().ends_with("/dialog.html"));
    // Let the next test leave the page.
    p.eval("(onbeforeunload = null, 1)");
}

// ------------------------------------------------------------------ page_upload

/// Page tools whose upload folder holds `a.txt`, `sub/b.txt`, a directory and a symlink out.
fn upload_tools(root: &std::path::Path) -> support::Page {
    std::fs::write(root.join("a.txt"), "alpha").unwrap();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/b.txt"), "bravo!").unwrap();
    std::os::unix::fs::symlink("/etc/hostname", root.join("link.txt")).unwrap();
    let host: std::sync::Arc<dyn agent_tools::BrowserHost> = std::sync::Arc::new(support::browser().clone());
    let cfg = agent_tools::PageToolsConfig {
        upload_root: Some(root.to_path_buf()),
        ..agent_tools::PageToolsConfig::default()
    };
    support::Page {
        tools: agent_tools::page_tools_with(host.clone(), cfg),
        host,
    }
}

#[test]
fn upload_attaches_files_from_the_upload_folder_and_reads_them_back() {
    let _g = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let p = upload_tools(dir.path());
    p.open("/upload.html");
    // The input itself is hidden behind its label, as file inputs often are.
    let out = support::model_view(&p.ok("page_upload", json!({"selector": "#one", "files": ["a.txt"]})));
    assert!(
        out.contains("attached \"a.txt\" to e") && out.contains("(file \"Attachment\"); read back the same"),
        "{out}"
    );
    assert_eq!(p.eval("document.getElementById('out').textContent"), "a.txt:5");
    let text = p.text(
        "page_upload",
        json!({"selector": "#many", "files": ["a.txt", "./sub/b.txt"]}),
    );
    assert!(text.contains("attached \"a.txt\", \"b.txt\""), "{text}");
    assert_eq!(p.eval("document.getElementById('out').textContent"), "a.txt:5, b.txt:6");
}

#[test]
fn upload_refuses_files_outside_the_folder_and_inputs_that_do_not_fit() {
    let _g = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let p = upload_tools(dir.path());
    p.open("/upload.html");
    for (file, code) in [
        ("../a.txt", "outside_root"),
        ("/etc/hostname", "outside_root"),
        ("link.txt", "symlink"),
        ("missing.txt", "no_file"),
        ("sub", "not_a_file"),
    ] {
        let msg = p.refused("page_upload", json!({"selector": "#many", "files": [file]}));
        assert!(msg.starts_with(&format!("refused ({code})")), "{file}: {msg}");
    }
    let msg = p.refused(
        "page_upload",
        json!({"selector": "#one", "files": ["a.txt", "sub/b.txt"]}),
    );
    assert!(msg.starts_with("refused (single_file)"), "{msg}");
    let msg = p.refused("page_upload", json!({"selector": "#note", "files": ["a.txt"]}));
    assert!(msg.starts_with("refused (not_file_input)"), "{msg}");
    assert_eq!(p.eval("document.getElementById('out').textContent"), "no file");
    // Without an upload folder nothing is attached.
    let msg = tools().refused("page_upload", json!({"selector": "#many", "files": ["a.txt"]}));
    assert!(msg.starts_with("refused (no_upload_folder)"), "{msg}");
}
