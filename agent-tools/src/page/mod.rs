//! Page tools over a [`BrowserHost`]: page_read, page_text, page_scrape, page_navigate,
//! page_click, page_fill, page_select, and the tab tools.

pub mod address;
pub mod format;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod html_text;
mod refusal;
mod scrape;
pub mod scrape_policy;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agent_core::untrusted::one_line;
use agent_core::{ContentPart, Provenance, Tool, ToolContext, ToolError, ToolOutput, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::host::{BrowserHost, HostError};
use address::{Resolved, check_scheme, resolve};
use format::{NAME_CHARS, ReadView, TITLE_CHARS, VALUE_CHARS, cap_chars, format_read, shown_page_url};
pub use html_text::html_to_text;
use refusal::format_refusal;
use scrape::Scraper;
pub use scrape_policy::ScrapePolicy;

/// The page logic every host runs through [`BrowserHost::evaluate`].
pub const PAGE_JS: &str = include_str!("page.js");

/// Configuration of the page tools.
#[derive(Debug, Clone)]
pub struct PageToolsConfig {
    /// Where a search phrase goes; `{}` is replaced by the encoded phrase.
    pub search_template: String,
    /// How long to wait for a page to settle after an action or a navigation.
    pub settle_timeout: Duration,
    /// Cap on any result, in characters (default 20 000).
    pub max_chars: usize,
    /// Most element lines per page_read page (default 200).
    pub max_elements: usize,
    /// Let page_scrape fetch loopback addresses, over `http://` too (tests, local development);
    /// the same as [`ScrapePolicy::allow_loopback_http`].
    pub scrape_loopback_http: bool,
    /// Which addresses page_scrape may reach (by default public https addresses only) and which
    /// extra root certificates it trusts.
    pub scrape: ScrapePolicy,
}

impl Default for PageToolsConfig {
    fn default() -> Self {
        PageToolsConfig {
            search_template: "https://duckduckgo.com/?q={}".into(),
            settle_timeout: Duration::from_secs(5),
            max_chars: 20_000,
            max_elements: 200,
            scrape_loopback_http: false,
            scrape: ScrapePolicy::default(),
        }
    }
}

struct Shared {
    host: Arc<dyn BrowserHost>,
    cfg: PageToolsConfig,
    /// Every ref number below this has been issued in some document.
    issued: AtomicU64,
    scraper: Scraper,
}

impl Shared {
    /// Runs one page.js operation in the active tab. A refusal becomes a model error.
    async fn op(&self, op: &str, mut args: Value) -> Result<Value, ToolError> {
        if let Some(obj) = args.as_object_mut() {
            obj.insert("base".into(), json!(self.issued.load(Ordering::SeqCst).max(1)));
        }
        let expr = format!("({PAGE_JS})({}, {})", json!(op), args);
        let v = self.host.evaluate(None, &expr).await?;
        if let Some(n) = v.get("issued").and_then(Value::as_u64) {
            self.issued.fetch_max(n, Ordering::SeqCst);
        }
        if v.get("refused").and_then(Value::as_bool) == Some(true) {
            let url = v.get("at").and_then(Value::as_str).unwrap_or("");
            return Err(ToolError::model(format_refusal(&v, url, &page_source(url))));
        }
        Ok(v)
    }

    async fn current_url(&self) -> Result<String, HostError> {
        let v = self.host.evaluate(None, "location.href").await?;
        Ok(v.as_str().unwrap_or("").to_string())
    }

    async fn settle(&self) -> Result<(), ToolError> {
        self.host.wait_settled(None, self.cfg.settle_timeout).await?;
        Ok(())
    }

    async fn resolve_address(&self, input: &str) -> Result<(String, &'static str), ToolError> {
        if let Some(url) = self.host.resolve_address(input).await? {
            check_scheme(&url).map_err(ToolError::model)?;
            return Ok((url, "host"));
        }
        match resolve(input, &self.cfg.search_template) {
            Resolved::Url { url, kind } => Ok((url, kind)),
            Resolved::Refused(why) => Err(ToolError::model(why)),
        }
    }

    async fn tab_count(&self) -> Option<usize> {
        self.host.tabs().await.ok().map(|t| t.len())
    }
}

/// A result that quotes a page: the loop wraps all of it, and its compressed form in later
/// turns, in untrusted-content markers naming `source`.
fn output(text: String, structured: Value, truncated: bool, source: Provenance) -> ToolOutput {
    ToolOutput {
        content: vec![ContentPart::text(text)],
        structured: Some(structured),
        truncated,
        provenance: Some(source),
    }
}

/// A result with no page text in it (only ids the model gave).
fn own_output(text: String, structured: Value) -> ToolOutput {
    ToolOutput {
        content: vec![ContentPart::text(text)],
        structured: Some(structured),
        truncated: false,
        provenance: None,
    }
}

/// Names the page at `url` as a result's source (data: and blob: addresses withheld).
fn page_source(url: &str) -> Provenance {
    Provenance::web_page(&shown_page_url(url))
}

/// The source of a page.js result: the address it reported.
fn source_of(v: &Value) -> Provenance {
    page_source(v.get("at").and_then(Value::as_str).unwrap_or(""))
}

/// The target element of a page.js result with its name and value capped.
fn capped_target(v: &Value) -> Value {
    let mut t = v.get("target").cloned().unwrap_or(Value::Null);
    for (key, max) in [("name", NAME_CHARS), ("value", VALUE_CHARS), ("href", 300)] {
        if let Some(text) = t.get(key).and_then(Value::as_str).map(|x| one_line(x, max)) {
            t[key] = json!(text);
        }
    }
    t
}

fn target_desc(v: &Value) -> String {
    let t = capped_target(v);
    let s = |k: &str| t.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    format!("{} ({} {})", s("ref"), s("role"), json!(s("name")))
}

/// A value read from or written to a field, capped to one line, quoted.
fn shown_value(v: &Value) -> Value {
    match v.as_str() {
        Some(text) => json!(one_line(text, VALUE_CHARS)),
        None => Value::Null,
    }
}

/// Arguments of page_read.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ReadArgs {
    /// Skip this many lines of the element list (the previous result says which offset comes next).
    #[serde(default)]
    pub offset: Option<usize>,
    /// Only list elements and headings whose name, value or link contains this text.
    #[serde(default)]
    pub find: Option<String>,
}

/// A target element: a ref from page_read (preferred) or a CSS selector (`>>>` crosses into a
/// shadow root or a same-origin iframe).
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct TargetArgs {
    /// A ref from page_read, like "e12".
    #[serde(default, rename = "ref")]
    pub reference: Option<String>,
    /// A CSS selector that matches exactly one element.
    #[serde(default)]
    pub selector: Option<String>,
    /// A CSS selector of a container to search the selector in.
    #[serde(default)]
    pub within: Option<String>,
}

impl TargetArgs {
    fn to_json(&self) -> Value {
        json!({ "ref": self.reference, "selector": self.selector, "within": self.within })
    }
}

/// Arguments of page_fill.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct FillArgs {
    /// The field.
    #[serde(flatten)]
    pub target: TargetArgs,
    /// The text to type.
    pub text: String,
}

/// Arguments of page_select.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SelectArgs {
    /// The `<select>`.
    #[serde(flatten)]
    pub target: TargetArgs,
    /// The option's value or visible label (case-insensitive).
    pub value: String,
}

/// Arguments of page_scrape.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ScrapeArgs {
    /// An https URL.
    pub url: String,
}

/// Arguments of page_navigate.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NavigateArgs {
    /// An address or a search phrase, as typed in an address bar.
    pub url: String,
}

/// Arguments of tab_open.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct OpenTabArgs {
    /// An address or a search phrase to load in the new tab (blank when absent).
    #[serde(default)]
    pub url: Option<String>,
}

/// Arguments of tab_activate and tab_close.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TabArgs {
    /// The tab id from tabs_list.
    pub id: String,
}

/// Arguments of tabs_list.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct NoArgs {}

/// All page and tab tools over one host, with the default configuration.
///
/// Gated: page_scrape, page_navigate, page_click, page_fill, page_select, tab_open, tab_close
/// ([`crate::with_gated`] changes that, for example to let a host's page_scrape run freely).
pub fn page_tools(host: Arc<dyn BrowserHost>) -> Vec<Arc<dyn Tool>> {
    page_tools_with(host, PageToolsConfig::default())
}

/// All page and tab tools over one host.
pub fn page_tools_with(host: Arc<dyn BrowserHost>, cfg: PageToolsConfig) -> Vec<Arc<dyn Tool>> {
    let sh = Arc::new(Shared {
        host,
        issued: AtomicU64::new(1),
        scraper: Scraper::new(ScrapePolicy {
            allow_loopback_http: cfg.scrape.allow_loopback_http || cfg.scrape_loopback_http,
            ..cfg.scrape.clone()
        }),
        cfg,
    });
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();

    let s = sh.clone();
    tools.push(Arc::new(tool_fn(
        "page_read",
        "Read the active tab: url, title, counts, a text preview, and one line per interactive element with a ref (e12) for the other page tools. Elements in the viewport come first; use offset to page and find to search.",
        move |a: ReadArgs, _cx: ToolContext| {
            let s = s.clone();
            async move {
                let v = s.op("read", json!({})).await?;
                let view = ReadView {
                    offset: a.offset.unwrap_or(0),
                    find: a.find.filter(|f| !f.trim().is_empty()),
                    max_elements: s.cfg.max_elements,
                    max_chars: s.cfg.max_chars.saturating_sub(200),
                };
                let (text, cut) = format_read(&v, &view);
                let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("");
                let facts = json!({
                    "url": shown_page_url(s("url")), "title": one_line(s("title"), TITLE_CHARS),
                    "readyState": one_line(s("readyState"), 20), "counts": v.get("counts"),
                });
                Ok(output(text, facts, cut, source_of(&v)))
            }
        },
    )));

    let s = sh.clone();
    tools.push(Arc::new(tool_fn(
        "page_text",
        "The visible text of the one element a ref or selector matches.",
        move |a: TargetArgs, _cx: ToolContext| {
            let s = s.clone();
            async move {
                let v = s.op("text", a.to_json()).await?;
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
        },
    )));

    let s = sh.clone();
    tools.push(Arc::new(
        tool_fn(
            "page_scrape",
            "Fetch a public https address without rendering it (no scripts run) and return its text. Sends a request off the machine, so it asks the person first; local and private addresses are refused.",
            move |a: ScrapeArgs, _cx: ToolContext| {
                let s = s.clone();
                async move {
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
            },
        )
        // The URL, its path and query are data sent off the machine: a page's instruction
        // could otherwise send what other tools read to any host.
        .gated(true)
        .parallel_safe(true),
    ));

    let s = sh.clone();
    tools.push(Arc::new(
        tool_fn(
            "page_navigate",
            "Load an address or a search phrase in the active tab, as the address bar would; returns the final URL after redirects. javascript:, file:, data: and other-app schemes are refused.",
            move |a: NavigateArgs, _cx: ToolContext| {
                let s = s.clone();
                async move {
                    let (url, kind) = s.resolve_address(&a.url).await?;
                    s.host.navigate(None, &url).await?;
                    s.settle().await?;
                    let final_url = s.current_url().await?;
                    let shown = shown_page_url(&final_url);
                    Ok(output(
                        format!("loaded {shown}{}", if kind == "search" { " (search)" } else { "" }),
                        json!({"ok": true, "kind": kind, "url": shown}),
                        false,
                        page_source(&final_url),
                    ))
                }
            },
        )
        .gated(true),
    ));

    let s = sh.clone();
    tools.push(Arc::new(
        tool_fn(
            "page_click",
            "Click the one element a ref or selector matches. Refuses hidden, covered, disabled and password targets, commit-like controls (submit, pay, checkout, send, confirm, delete, publish ...) and buttons that would submit a form; reports what changed, or NOT VERIFIED.",
            move |a: TargetArgs, _cx: ToolContext| {
                let s = s.clone();
                async move {
                    let tabs_before = s.tab_count().await;
                    let v = s.op("click", a.to_json()).await?;
                    let before = v.get("before").cloned().unwrap_or(Value::Null);
                    s.settle().await?;
                    let after = match s.op("snapshot", json!({})).await {
                        Ok(a) => a,
                        Err(_) => {
                            s.settle().await?;
                            s.op("snapshot", json!({})).await?
                        }
                    };
                    let mut reasons = Vec::new();
                    let g = |v: &Value, k: &str| v.get(k).cloned().unwrap_or(Value::Null);
                    if g(&before, "url") != g(&after, "url") {
                        reasons.push(format!("address is now {}", shown_page_url(g(&after, "url").as_str().unwrap_or(""))));
                    }
                    if g(&before, "title") != g(&after, "title") {
                        let title = one_line(g(&after, "title").as_str().unwrap_or(""), TITLE_CHARS);
                        reasons.push(format!("title is now {}", json!(title)));
                    }
                    if g(&before, "visibleFields") != g(&after, "visibleFields") {
                        reasons.push(format!("visible fields {} -> {}", g(&before, "visibleFields"), g(&after, "visibleFields")));
                    }
                    if g(&before, "fields") != g(&after, "fields") {
                        reasons.push("field values changed".into());
                    }
                    if g(&before, "expanded") != g(&after, "expanded") {
                        reasons.push("expansion state changed".into());
                    }
                    if g(&before, "textLength") != g(&after, "textLength") {
                        reasons.push(format!("text length {} -> {}", g(&before, "textLength"), g(&after, "textLength")));
                    }
                    if g(&before, "textLength") == g(&after, "textLength") && g(&before, "textHash") != g(&after, "textHash") {
                        reasons.push("page text changed".into());
                    }
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
                            format!("NOT VERIFIED: clicked {who}, but nothing observable changed (address, title, fields, expansion, text). Do not assume it worked."),
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
            },
        )
        .gated(true),
    ));

    let s = sh.clone();
    tools.push(Arc::new(
        tool_fn(
            "page_fill",
            "Type text into the one text field a ref or selector matches, then read it back. Refuses password, disabled, read-only, hidden and covered fields, non-text controls, and text longer than the field's maxlength; reports MISMATCH when the page changed the value.",
            move |a: FillArgs, _cx: ToolContext| {
                let s = s.clone();
                async move {
                    let mut args = a.target.to_json();
                    args["text"] = json!(a.text);
                    let v = s.op("fill", args).await?;
                    let who = target_desc(&v);
                    let expected = shown_value(v.get("expected").unwrap_or(&Value::Null));
                    let actual = shown_value(v.get("actual").unwrap_or(&Value::Null));
                    if v.get("ok").and_then(Value::as_bool) == Some(true) {
                        Ok(output(
                            format!("filled {who} with {expected}; read back the same"),
                            json!({"ok": true, "target": capped_target(&v), "value": actual}),
                            false,
                            source_of(&v),
                        ))
                    } else {
                        Ok(output(
                            format!("MISMATCH: filled {who} with {expected}, but the field now holds {actual} (the page rewrote or dropped it)"),
                            json!({"ok": false, "note": "MISMATCH", "expected": expected, "actual": actual, "target": capped_target(&v)}),
                            false,
                            source_of(&v),
                        ))
                    }
                }
            },
        )
        .gated(true),
    ));

    let s = sh.clone();
    tools.push(Arc::new(
        tool_fn(
            "page_select",
            "Choose an option of the one <select> a ref or selector matches, by value or by label (case-insensitive), then read it back.",
            move |a: SelectArgs, _cx: ToolContext| {
                let s = s.clone();
                async move {
                    let mut args = a.target.to_json();
                    args["value"] = json!(a.value);
                    let v = s.op("select", args).await?;
                    let who = target_desc(&v);
                    let expected = shown_value(v.get("expected").unwrap_or(&Value::Null));
                    let actual = shown_value(v.get("actual").unwrap_or(&Value::Null));
                    if v.get("ok").and_then(Value::as_bool) == Some(true) {
                        Ok(output(
                            format!("selected {expected} in {who}; read back the same"),
                            json!({"ok": true, "target": capped_target(&v), "value": actual}),
                            false,
                            source_of(&v),
                        ))
                    } else {
                        Ok(output(
                            format!("MISMATCH: selected {expected} in {who}, but it now shows {actual}"),
                            json!({"ok": false, "note": "MISMATCH", "expected": expected, "actual": actual}),
                            false,
                            source_of(&v),
                        ))
                    }
                }
            },
        )
        .gated(true),
    ));

    let s = sh.clone();
    tools.push(Arc::new(tool_fn(
        "tabs_list",
        "List the open tabs: id, url, title, and which one is active.",
        move |_a: NoArgs, _cx: ToolContext| {
            let s = s.clone();
            async move {
                let mut tabs = s.host.tabs().await?;
                let mut text = String::new();
                for t in &mut tabs {
                    t.title = one_line(&t.title, TITLE_CHARS);
                    t.url = shown_page_url(&t.url);
                    text.push_str(&format!(
                        "{}{} {} {}\n",
                        if t.active { "* " } else { "  " },
                        t.id,
                        json!(t.title),
                        t.url
                    ));
                }
                let source = Provenance::new("the open tabs' pages (titles and addresses)");
                Ok(output(text.trim_end().to_string(), json!(tabs), false, source))
            }
        },
    )));

    let s = sh.clone();
    tools.push(Arc::new(
        tool_fn(
            "tab_open",
            "Open a new tab (at an address or search phrase, or blank) and make it active.",
            move |a: OpenTabArgs, _cx: ToolContext| {
                let s = s.clone();
                async move {
                    let url = match a.url.as_deref().filter(|u| !u.trim().is_empty()) {
                        Some(u) => Some(s.resolve_address(u).await?.0),
                        None => None,
                    };
                    let tab = s.host.open_tab(url.as_deref()).await?;
                    s.settle().await?;
                    let final_url = s.current_url().await.unwrap_or(tab.url.clone());
                    let shown = shown_page_url(&final_url);
                    Ok(output(
                        format!("opened tab {} at {shown}; it is now active", tab.id),
                        json!({"ok": true, "id": tab.id, "url": shown}),
                        false,
                        page_source(&final_url),
                    ))
                }
            },
        )
        .gated(true),
    ));

    let s = sh.clone();
    tools.push(Arc::new(tool_fn(
        "tab_activate",
        "Make a tab (by id from tabs_list) the active one; page tools act on the active tab.",
        move |a: TabArgs, _cx: ToolContext| {
            let s = s.clone();
            async move {
                s.host.activate_tab(&a.id).await?;
                Ok(own_output(
                    format!("tab {} is now active", a.id),
                    json!({"ok": true, "id": a.id}),
                ))
            }
        },
    )));

    let s = sh;
    tools.push(Arc::new(
        tool_fn(
            "tab_close",
            "Close a tab by id from tabs_list.",
            move |a: TabArgs, _cx: ToolContext| {
                let s = s.clone();
                async move {
                    s.host.close_tab(&a.id).await?;
                    Ok(own_output(
                        format!("closed tab {}", a.id),
                        json!({"ok": true, "id": a.id}),
                    ))
                }
            },
        )
        .gated(true),
    ));
    tools
}
