//! The tools that read a page: page_read, page_text and page_scrape.

use std::sync::Arc;

use agent_core::untrusted::one_line;
use agent_core::{ContentPart, Tool, ToolContext, ToolError, ToolOutput, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::format::{ReadView, Snapshot, TITLE_CHARS, cap_chars, format_changes, format_read, shown_page_url};
use super::compact::expand_read;
use super::output::{output, page_source, source_of};
use super::screenshot::capture;
use super::shared::{Shared, bind, bind_cx};
use super::target::{TargetArgs, capped_target, target_desc};
use crate::host::ScreenshotArea;

/// Arguments of page_read.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ReadArgs {
    /// Skip this many lines of the element list (the previous result says which offset comes next).
    #[serde(default)]
    pub offset: Option<usize>,
    /// Only list elements and headings whose name, value or link contains this text.
    #[serde(default)]
    pub find: Option<String>,
    /// Answer with only what changed since your last page_read of this page (added, removed
    /// and changed element lines). The first read of a page, a new page, or more changes than
    /// the page itself gives the full read instead, marked as such.
    #[serde(default)]
    pub since_last: Option<bool>,
    /// Also attach a screenshot of what is on screen with a labelled box on each ref (only for
    /// a model that is sent images).
    #[serde(default)]
    pub screenshot: Option<bool>,
}

/// Arguments of page_scrape.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ScrapeArgs {
    /// An https URL.
    pub url: String,
}

/// page_read: the page's facts and one line per interactive element.
pub(crate) fn page_read(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(tool_fn(
        "page_read",
        "Read the page in your tab: url, title, counts, a text preview, and one line per interactive element with a ref (e12) for the other page tools. Elements in the viewport come first; use offset to page and find to search. After an action, since_last=true answers with only what changed since your last read of the page. screenshot=true adds an image of the screen with the refs drawn on it.",
        bind_cx(sh, read),
    ))
}

async fn read(s: Arc<Shared>, a: ReadArgs, cx: ToolContext) -> Result<ToolOutput, ToolError> {
    let screenshot = a.screenshot == Some(true);
    let mut out = read_text(&s, a).await?;
    if screenshot {
        with_screenshot(&s, &mut out, cx.model_takes_images).await?;
    }
    Ok(out)
}

/// Adds the annotated viewport to a page_read result, or says why there is none.
async fn with_screenshot(s: &Shared, out: &mut ToolOutput, takes_images: bool) -> Result<(), ToolError> {
    let line = if takes_images {
        let tab = s.working()?;
        let shot = capture(s, tab.as_deref(), ScreenshotArea::Viewport, true, false).await?;
        out.content.push(shot.image_part());
        if let Some(facts) = out.structured.as_mut() {
            facts["screenshot"] = shot.facts();
        }
        format!("\n[{}{}]", shot.caption("the viewport"), shot.labels())
    } else {
        "\n[no screenshot: this model is not sent images]".to_owned()
    };
    if let Some(ContentPart::Text { text }) = out.content.first_mut() {
        text.push_str(&line);
    }
    Ok(())
}

async fn read_text(s: &Shared, a: ReadArgs) -> Result<ToolOutput, ToolError> {
    let tab = s.working()?;
    let v = s
        .op(tab.as_deref(), "read", json!({"doc": document_id(), "compact": true}))
        .await?;
    let v = expand_read(v);
    let view = ReadView {
        offset: a.offset.unwrap_or(0),
        find: a.find.filter(|f| !f.trim().is_empty()),
        max_elements: s.cfg.max_elements,
        max_chars: s.cfg.max_chars.saturating_sub(200),
        preview_chars: s.cfg.preview_chars,
    };
    let (full, cut) = format_read(&v, &view);
    let field = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("");
    let mut facts = json!({
        "url": shown_page_url(field("url")), "title": one_line(field("title"), TITLE_CHARS),
        "readyState": one_line(field("readyState"), 20), "counts": v.get("counts"),
    });
    // Every read is remembered, so a since_last read compares with whatever read came last.
    let next = Snapshot::of(&v, tab);
    if a.since_last != Some(true) {
        s.last_read.replace(next);
        return Ok(output(full, facts, cut, source_of(&v)));
    }
    let prev = s.last_read.replace(next.clone());
    let (text, cut, since) = match prev {
        None => full_read(full, cut, "first_read", "no earlier page_read to compare with"),
        Some(prev) if !prev.same_document(&next) => full_read(
            full,
            cut,
            "new_document",
            "another document than at your last page_read (navigated, reloaded or another tab); its refs are stale",
        ),
        Some(prev) => {
            let (changes, counts) = format_changes(&prev, &next);
            if changes.chars().count() >= full.chars().count() {
                full_read(full, cut, "larger_than_full", "the changes are longer than the page")
            } else {
                let since =
                    json!({"full": false, "added": counts.added, "removed": counts.removed, "changed": counts.changed});
                (changes, false, since)
            }
        }
    };
    facts["since_last"] = since;
    Ok(output(text, facts, cut, source_of(&v)))
}

/// A since_last read that answers with the full read, marked with why.
fn full_read(full: String, cut: bool, reason: &str, why: &str) -> (String, bool, Value) {
    (
        format!("[full read: {why}]\n{full}"),
        cut,
        json!({"full": true, "reason": reason}),
    )
}

/// A fresh identity for the document a read runs in; page.js keeps the first one it is given
/// for the document's lifetime, so two reads of one document report the same id.
fn document_id() -> String {
    use rand::Rng;
    format!("{:016x}", rand::rng().random::<u64>())
}

/// page_text: the visible text of one element.
pub(crate) fn page_text(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(tool_fn(
        "page_text",
        "The visible text of the one element a ref or selector matches.",
        bind(sh, text),
    ))
}

async fn text(s: Arc<Shared>, a: TargetArgs) -> Result<ToolOutput, ToolError> {
    let v = s.op(s.working()?.as_deref(), "text", a.to_json()).await?;
    let text = v.get("text").and_then(Value::as_str).unwrap_or("");
    let (text, cut) = cap_chars(text, s.cfg.max_chars.saturating_sub(300));
    let visible = v.get("visible").and_then(Value::as_bool).unwrap_or(false);
    let head = format!(
        "text of {}{}:",
        target_desc(&v),
        if visible { "" } else { " (not visible on screen)" }
    );
    Ok(output(
        format!("{head}\n{text}"),
        json!({"target": capped_target(&v), "visible": visible}),
        cut,
        source_of(&v),
    ))
}

/// page_scrape: the text of a public https address, fetched without rendering. Gated.
pub(crate) fn page_scrape(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(
        tool_fn(
            "page_scrape",
            "Fetch a public https address without rendering it (no scripts run) and return its text. Sends a request off the machine, so it asks the person first; local and private addresses are refused.",
            bind(sh, scrape),
        )
        // The URL, its path and query are data sent off the machine: a page's instruction
        // could otherwise send what other tools read to any host.
        .gated(true)
        .parallel_safe(true),
    )
}

async fn scrape(s: Arc<Shared>, a: ScrapeArgs) -> Result<ToolOutput, ToolError> {
    let (url, ctype, text) = s.scraper.scrape(&a.url).await?;
    let (text, cut) = cap_chars(&text, s.cfg.max_chars.saturating_sub(300));
    let (shown, ctype) = (one_line(&url, 300), one_line(&ctype, 100));
    Ok(output(
        format!("{shown} ({ctype})\n{text}"),
        json!({"url": shown, "contentType": ctype}),
        cut,
        page_source(&url),
    ))
}
