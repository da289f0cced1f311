//! page_click, and how it tells whether a click did anything: page.js snapshots the page before
//! the click and again after it settles, and the differences become the result.

use std::sync::Arc;

use agent_core::untrusted::one_line;
use agent_core::{Tool, ToolError, ToolOutput, tool_fn};
use serde_json::{Value, json};

use super::super::format::{TITLE_CHARS, shown_page_url};
use super::output::{output, source_of};
use super::shared::{Shared, bind};
use super::target::{TargetArgs, capped_target, target_desc};

/// page_click: clicks one element and reports what changed, or NOT VERIFIED. Gated.
pub(crate) fn page_click(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(
        tool_fn(
            "page_click",
            "Click the one element a ref or selector matches. Refuses hidden, covered, disabled and password targets, commit-like controls (submit, pay, checkout, send, confirm, delete, publish ...) and buttons that would submit a form; reports what changed, or NOT VERIFIED.",
            bind(sh, click),
        )
        .gated(true),
    )
}

async fn click(s: Arc<Shared>, a: TargetArgs) -> Result<ToolOutput, ToolError> {
    let tab = s.working()?;
    let tab = tab.as_deref();
    let tabs_before = s.tab_count().await;
    let v = s.op(tab, "click", a.to_json()).await?;
    let before = v.get("before").cloned().unwrap_or(Value::Null);
    s.settle(tab).await?;
    let after = match s.op(tab, "snapshot", json!({})).await {
        Ok(a) => a,
        Err(_) => {
            // A click that navigates can replace the document mid-snapshot: settle again, retry once.
            s.settle(tab).await?;
            s.op(tab, "snapshot", json!({})).await?
        }
    };
    let mut reasons = page_changes(&before, &after);
    let tabs_after = s.tab_count().await;
    if let (Some(b), Some(a)) = (tabs_before, tabs_after)
        && a != b
    {
        reasons.push(format!("tabs {b} -> {a}"));
    }
    let who = target_desc(&v);
    // The click may have navigated: the page now shown is the source.
    let source = source_of(&after);
    if reasons.is_empty() {
        Ok(output(
            format!(
                "NOT VERIFIED: clicked {who}, but nothing observable changed (address, title, fields, expansion, text). Do not assume it worked."
            ),
            json!({"ok": false, "note": "NOT VERIFIED", "target": capped_target(&v)}),
            false,
            source,
        ))
    } else {
        Ok(output(
            format!("clicked {who}; changed: {}", reasons.join("; ")),
            json!({"ok": true, "changed": true, "reasons": reasons, "target": capped_target(&v)}),
            false,
            source,
        ))
    }
}

/// What differs between two page.js snapshots, one reason each, in a fixed order.
pub(super) fn page_changes(before: &Value, after: &Value) -> Vec<String> {
    let mut reasons = Vec::new();
    let g = |v: &Value, k: &str| v.get(k).cloned().unwrap_or(Value::Null);
    if g(before, "url") != g(after, "url") {
        reasons.push(format!(
            "address is now {}",
            shown_page_url(g(after, "url").as_str().unwrap_or(""))
        ));
    }
    if g(before, "title") != g(after, "title") {
        let title = one_line(g(after, "title").as_str().unwrap_or(""), TITLE_CHARS);
        reasons.push(format!("title is now {}", json!(title)));
    }
    if g(before, "visibleFields") != g(after, "visibleFields") {
        reasons.push(format!(
            "visible fields {} -> {}",
            g(before, "visibleFields"),
            g(after, "visibleFields")
        ));
    }
    if g(before, "fields") != g(after, "fields") {
        reasons.push("field values changed".into());
    }
    if g(before, "expanded") != g(after, "expanded") {
        reasons.push("expansion state changed".into());
    }
    if g(before, "textLength") != g(after, "textLength") {
        reasons.push(format!(
            "text length {} -> {}",
            g(before, "textLength"),
            g(after, "textLength")
        ));
    }
    // Same length but different text: an edit in place, not content added or removed.
    if g(before, "textLength") == g(after, "textLength") && g(before, "textHash") != g(after, "textHash") {
        reasons.push("page text changed".into());
    }
    reasons
}
