//! The tab tools: tabs_list, tab_open, tab_activate and tab_close. Page tools act on the active
//! tab, so these are how the model moves between pages it keeps open.

use std::sync::Arc;

use agent_core::untrusted::Provenance;
use agent_core::untrusted::one_line;
use agent_core::{Tool, ToolError, ToolOutput, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::super::format::{TITLE_CHARS, shown_page_url};
use super::output::{output, own_output, page_source};
use super::shared::{Shared, bind};

/// Arguments of tabs_list.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct NoArgs {}

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

/// tabs_list: the open tabs, marking the active one.
pub(crate) fn tabs_list(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(tool_fn(
        "tabs_list",
        "List the open tabs: id, url, title, and which one is active.",
        bind(sh, list),
    ))
}

async fn list(s: Arc<Shared>, _a: NoArgs) -> Result<ToolOutput, ToolError> {
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

/// tab_open: opens a tab, blank or at an address or search, and makes it active. Gated.
pub(crate) fn tab_open(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(
        tool_fn(
            "tab_open",
            "Open a new tab (at an address or search phrase, or blank) and make it active.",
            bind(sh, open),
        )
        .gated(true),
    )
}

async fn open(s: Arc<Shared>, a: OpenTabArgs) -> Result<ToolOutput, ToolError> {
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

/// tab_activate: makes a tab the one page tools act on.
pub(crate) fn tab_activate(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(tool_fn(
        "tab_activate",
        "Make a tab (by id from tabs_list) the active one; page tools act on the active tab.",
        bind(sh, activate),
    ))
}

async fn activate(s: Arc<Shared>, a: TabArgs) -> Result<ToolOutput, ToolError> {
    s.host.activate_tab(&a.id).await?;
    Ok(own_output(
        format!("tab {} is now active", a.id),
        json!({"ok": true, "id": a.id}),
    ))
}

/// tab_close: closes a tab. Gated.
pub(crate) fn tab_close(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(tool_fn("tab_close", "Close a tab by id from tabs_list.", bind(sh, close)).gated(true))
}

async fn close(s: Arc<Shared>, a: TabArgs) -> Result<ToolOutput, ToolError> {
    s.host.close_tab(&a.id).await?;
    Ok(own_output(
        format!("closed tab {}", a.id),
        json!({"ok": true, "id": a.id}),
    ))
}
