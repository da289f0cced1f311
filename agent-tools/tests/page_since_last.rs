#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! page_read with `since_last`, in real headless Chromium on loopback fixture pages: only the
//! element lines an action added, removed or changed; a marked full read on the first read, on
//! another document and when the changes outgrow the page; one memory per set of tools (per
//! agent and tab). And the action results themselves never carry a snapshot.

mod support;

use std::sync::Arc;
use std::time::Duration;

use agent_core::{SessionId, Tool, ToolContext};
use agent_tools::{BrowserHost, page_tools_for_tab};
use serde_json::{Value, json};
use support::{browser, exclusive, is_element_line, rt, tools, url};

fn since_last(p: &support::Page) -> (String, Value) {
    let out = p.ok("page_read", json!({"since_last": true}));
    let since = out.structured.as_ref().unwrap()["since_last"].clone();
    (out.text_content(), since)
}

#[test]
fn after_a_click_since_last_lists_only_what_changed() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let full = p.text("page_read", json!({}));
    let details = p.ref_of("\"Show details\"");
    p.ok("page_click", json!({"ref": details}));
    let out = p.ok("page_read", json!({"since_last": true}));
    let text = out.text_content();
    assert!(
        text.starts_with("changes since your last page_read of this page (http://127.0.0.1:"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "~ {details} button \"Show details\" expanded (was: collapsed)"
        )),
        "{text}"
    );
    assert!(text.contains("now reads \"More details here.\""), "{text}");
    // Unchanged elements are not repeated.
    assert!(!text.contains("textbox \"Name\""), "{text}");
    assert_eq!(text.lines().filter(|l| is_element_line(l)).count(), 0, "{text}");
    assert!(text.chars().count() * 3 < full.chars().count(), "{text}\n---\n{full}");
    let since = &out.structured.as_ref().unwrap()["since_last"];
    assert_eq!(since["full"], false);
    assert_eq!(since["changed"], 1);
    assert_eq!(since["added"], 0);
    assert_eq!(since["removed"], 0);
    // The change list quotes the page: it is marked as the page's, like a full read.
    support::assert_all_inside_markers(&support::model_view(&out), "Show details");
}

#[test]
fn since_last_shows_a_filled_value_and_says_when_nothing_changed() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let name = p.ref_of("\"Name\"");
    p.ok("page_fill", json!({"ref": name, "text": "Ada"}));
    let (text, since) = since_last(&p);
    assert!(
        text.contains(&format!("~ {name} textbox \"Name\" =\"Ada\" (was: =\"\")")),
        "{text}"
    );
    assert_eq!(since["changed"], 1);
    let (text, since) = since_last(&p);
    assert!(text.starts_with("no changes since your last page_read"), "{text}");
    assert_eq!(since["full"], false);
}

#[test]
fn a_rerendered_element_is_removed_and_added_with_a_new_ref() {
    let _g = exclusive();
    let p = tools();
    p.open("/rerender.html");
    let item = p.ref_of("\"Item\"");
    let rerender = p.ref_of("\"Re-render\"");
    p.ok("page_click", json!({"ref": rerender}));
    let (text, since) = since_last(&p);
    assert!(text.contains(&format!("- {item} button \"Item\"")), "{text}");
    let added = text
        .lines()
        .find(|l| l.starts_with("+ e") && l.ends_with("button \"Item\""))
        .unwrap_or_else(|| panic!("{text}"));
    assert_ne!(added, format!("+ {item} button \"Item\""));
    assert_eq!((since["added"].as_u64(), since["removed"].as_u64()), (Some(1), Some(1)));
}

#[test]
fn the_first_read_and_another_document_give_a_marked_full_read() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let (text, since) = since_last(&p);
    assert!(text.starts_with("[full read: no earlier page_read"), "{text}");
    assert!(text.contains("textbox \"Name\""), "{text}");
    assert_eq!(since, json!({"full": true, "reason": "first_read"}));

    p.open("/page2.html");
    let (text, since) = since_last(&p);
    assert!(
        text.starts_with("[full read: another document than at your last page_read"),
        "{text}"
    );
    assert!(text.contains("button \"Other button\""), "{text}");
    assert_eq!(since["reason"], "new_document");

    // A reload is another document too, at the same address.
    p.open("/page2.html");
    let (_, since) = since_last(&p);
    assert_eq!(since["reason"], "new_document");
    // And the same document again compares.
    let (text, since) = since_last(&p);
    assert_eq!(since["full"], false, "{text}");
}

#[test]
fn changes_larger_than_the_page_give_a_marked_full_read() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    p.text("page_read", json!({}));
    // Every element is replaced by a copy: each old ref is gone and each copy has a new one.
    p.eval("document.body.innerHTML = document.body.innerHTML; true");
    let (text, since) = since_last(&p);
    assert_eq!(since, json!({"full": true, "reason": "larger_than_full"}), "{text}");
    assert!(
        text.starts_with("[full read: the changes are longer than the page"),
        "{text}"
    );
    assert!(text.contains("textbox \"Name\""), "{text}");
}

#[test]
fn elements_pushed_past_the_scan_limit_are_not_reported_removed() {
    let _g = exclusive();
    let p = tools();
    p.open("/page2.html");
    // More elements than page.js lists (3 000): two added at the top push two off the end.
    p.eval("document.body.insertAdjacentHTML('beforeend', Array.from({length: 3100}, (_, i) => `<button type=button>Row ${i}</button>`).join('')); true");
    p.text("page_read", json!({}));
    p.eval("document.body.insertAdjacentHTML('afterbegin', '<button type=button>New one</button><button type=button>New two</button>'); true");
    let (text, since) = since_last(&p);
    assert_eq!(
        (since["added"].as_u64(), since["removed"].as_u64()),
        (Some(2), Some(0)),
        "{text}"
    );
    assert!(text.contains("button \"New one\""), "{text}");
}

#[test]
fn each_set_of_tools_remembers_its_own_last_read() {
    let _g = exclusive();
    let first = tools();
    let second = tools();
    first.open("/form.html");
    first.text("page_read", json!({}));
    // The other agent's read is not this one's: its first since_last read is a full read.
    let (_, since) = since_last(&second);
    assert_eq!(since["reason"], "first_read");
    let (_, since) = since_last(&first);
    assert_eq!(since["full"], false);

    // Tools bound to a background tab compare reads of that tab, whatever tab is active.
    let host: Arc<dyn BrowserHost> = Arc::new(browser().clone());
    let tab = rt().block_on(async {
        let tab = host.open_tab(Some(&url("/form.html"))).await.unwrap();
        host.wait_settled(Some(&tab.id), Duration::from_secs(5)).await.unwrap();
        tab
    });
    let bound = page_tools_for_tab(host.clone(), tab.id.as_str());
    let call = |tools: &[Arc<dyn Tool>], name: &str, args: Value| {
        let tool = tools.iter().find(|t| t.spec().name == name).unwrap().clone();
        rt().block_on(tool.call(args, ToolContext::detached(SessionId::new_random(), "t")))
            .unwrap()
    };
    let snap = call(&bound, "page_read", json!({})).text_content();
    let details = snap
        .lines()
        .find(|l| l.contains("\"Show details\""))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_owned();
    let others: Vec<_> = rt().block_on(host.tabs()).unwrap();
    let other = others.iter().find(|t| t.id != tab.id).unwrap().id.clone();
    rt().block_on(host.activate_tab(&other)).unwrap();
    call(&bound, "page_click", json!({"ref": details}));
    let out = call(&bound, "page_read", json!({"since_last": true}));
    let text = out.text_content();
    assert!(
        text.contains(&format!("~ {details} button \"Show details\" expanded")),
        "{text}"
    );
    let _ = rt().block_on(host.close_tab(&tab.id));
}

#[test]
fn click_fill_and_select_results_carry_no_snapshot() {
    let _g = exclusive();
    let p = tools();
    p.open("/form.html");
    let full = p.text("page_read", json!({}));
    let results = [
        p.text("page_click", json!({"ref": p.ref_of("\"Show details\"")})),
        p.text("page_fill", json!({"ref": p.ref_of("\"Name\""), "text": "Ada"})),
        p.text(
            "page_select",
            json!({"ref": p.ref_of("\"Country\""), "value": "France"}),
        ),
        p.text("page_click", json!({"ref": p.ref_of("\"Does nothing\"")})),
    ];
    for r in &results {
        assert_eq!(r.lines().count(), 1, "{r}");
        assert!(!r.lines().any(is_element_line), "{r}");
        assert!(!r.contains("url:") && !r.contains("elements:"), "{r}");
        assert!(
            r.chars().count() < 300 && r.chars().count() * 4 < full.chars().count(),
            "{r}"
        );
    }
}
