//! The tab tools: tabs_list, tab_open, tab_activate and tab_close: how the model moves between
//! the pages it keeps open. Page tools bound to an agent's tab touch only that agent's tabs.

use std::sync::Arc;

use agent_core::untrusted::Provenance;
use agent_core::untrusted::one_line;
use agent_core::{Tool, ToolError, ToolOutput, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::super::format::{TITLE_CHARS, shown_page_url};
use super::super::tab::{Adopted, Owner};
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

/// tabs_list: the open tabs, marking the active one and, for a bound agent, its own.
pub(crate) fn tabs_list(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(tool_fn(
        "tabs_list",
        "List the open tabs: id, url, title, which one is active (in front of the person), and which are yours and which one you work in.",
        bind(sh, list),
    ))
}

async fn list(s: Arc<Shared>, _a: NoArgs) -> Result<ToolOutput, ToolError> {
    let tabs = s.host.tabs().await?;
    let working = s.working().ok().flatten();
    let bound = !s.tab.follows_active();
    let mut text = String::new();
    let mut rows = Vec::with_capacity(tabs.len());
    for t in tabs {
        let title = one_line(&t.title, TITLE_CHARS);
        let url = shown_page_url(&t.url);
        let mut row = json!({"id": t.id, "url": url, "title": title, "active": t.active});
        let mut note = String::new();
        if bound {
            let owner = s.tab.owner(&t.id);
            let yours = matches!(owner, Owner::Mine);
            let here = working.as_deref() == Some(t.id.as_str());
            note = match owner {
                Owner::Mine if here => " (yours, you work here)".into(),
                Owner::Mine => " (yours)".into(),
                Owner::Tab(handle) => format!(" (tab {handle}'s agent)"),
                Owner::Unknown => String::new(),
            };
            row["yours"] = json!(yours);
            row["working"] = json!(here);
        }
        text.push_str(&format!(
            "{}{} {} {}{note}\n",
            if t.active { "* " } else { "  " },
            t.id,
            json!(title),
            url
        ));
        rows.push(row);
    }
    let source = Provenance::new("the open tabs' pages (titles and addresses)");
    Ok(output(text.trim_end().to_string(), json!(rows), false, source))
}

/// tab_open: opens a tab, blank or at an address or search, and makes it active. Gated.
pub(crate) fn tab_open(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(
        tool_fn(
            "tab_open",
            "Open a new tab (at an address or search phrase, or blank) and make it active. Usually you work in the new tab from then on; the result says when the host gave it to a new agent instead.",
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
    let in_new = (!s.tab.follows_active()).then_some(tab.id.as_str());
    s.settle(in_new).await?;
    let final_url = s.current_url(in_new).await.unwrap_or(tab.url.clone());
    let shown = shown_page_url(&final_url);
    match s.tab.adopt(&tab.id, &final_url).await? {
        Adopted::Mine => Ok(output(
            format!("opened tab {} at {shown}; it is now active and you work in it", tab.id),
            json!({"ok": true, "id": tab.id, "url": shown}),
            false,
            page_source(&final_url),
        )),
        Adopted::NewAgent(handle) => Ok(output(
            format!(
                "opened tab {} at {shown}; the host gave it to a new agent (tab {handle}), so your page tools stay on your own tab",
                tab.id
            ),
            json!({"ok": true, "id": tab.id, "url": shown, "agent_tab": handle}),
            false,
            page_source(&final_url),
        )),
    }
}

/// Refuses a tab that is not this agent's (a bound agent touches only its own tabs).
fn check_mine(s: &Shared, id: &str) -> Result<(), ToolError> {
    let whose = match s.tab.owner(id) {
        Owner::Mine => return Ok(()),
        Owner::Tab(handle) => format!("it belongs to the agent of tab {handle}"),
        Owner::Unknown => "it is not one of yours".to_string(),
    };
    let mine = s.tab.mine();
    let yours = if mine.is_empty() {
        "you have no open tab".to_string()
    } else {
        format!("your tabs: {}", mine.join(", "))
    };
    Err(ToolError::model(format!(
        "refused: tab {id} is not yours ({whose}); you may only act on your own tabs ({yours})"
    )))
}

/// tab_activate: brings a tab to the front (what the person sees). Gated.
pub(crate) fn tab_activate(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(
        tool_fn(
            "tab_activate",
            "Bring one of your tabs (by id from tabs_list) to the front, where the person sees it; your page tools act on it from then on.",
            bind(sh, activate),
        )
        // It changes what the person is looking at.
        .gated(true),
    )
}

async fn activate(s: Arc<Shared>, a: TabArgs) -> Result<ToolOutput, ToolError> {
    check_mine(&s, &a.id)?;
    s.host.activate_tab(&a.id).await?;
    s.tab.work_in(&a.id)?;
    Ok(own_output(
        format!("tab {} is now active and you work in it", a.id),
        json!({"ok": true, "id": a.id}),
    ))
}

/// tab_close: closes one of the agent's tabs. Gated.
pub(crate) fn tab_close(sh: &Arc<Shared>) -> Arc<dyn Tool> {
    Arc::new(
        tool_fn(
            "tab_close",
            "Close one of your tabs by id from tabs_list.",
            bind(sh, close),
        )
        .gated(true),
    )
}

async fn close(s: Arc<Shared>, a: TabArgs) -> Result<ToolOutput, ToolError> {
    check_mine(&s, &a.id)?;
    s.host.close_tab(&a.id).await?;
    let text = match s.tab.closed_by_agent(&a.id)? {
        Some(next) => format!("closed tab {}; you work in tab {next} now", a.id),
        None if !s.tab.follows_active() && s.working().is_err() => format!(
            "closed tab {}; it was your last tab, so the page tools have no page until you open one with tab_open",
            a.id
        ),
        None => format!("closed tab {}", a.id),
    };
    Ok(own_output(text, json!({"ok": true, "id": a.id})))
}
