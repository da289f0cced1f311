//! What a tab hub built from Python knows of a browser: page tools bound to the browser tab
//! each hub tab is wired to, and who gets a browser tab an agent opens.

use std::sync::Arc;

use agent_core::Tool;
use agent_core::tabs::{OpenedTab, OpenedTabOwner, TabHubBuilder, TabId, WeakTabHub};
use agent_tools::{BrowserHost, PageTab, PageToolsConfig, page_tools_for_tab_with};
use pyo3::prelude::*;

use crate::errors::config_error;

/// Gives every tab's agent page tools over `host`, bound to the browser tab its hub tab is
/// wired to (looked up on every call, so rewiring takes effect at once).
pub fn with_page_tools(builder: TabHubBuilder, host: Arc<dyn BrowserHost>, cfg: PageToolsConfig) -> TabHubBuilder {
    builder.tab_tools(move |tab: &TabId, hub: &WeakTabHub| -> Vec<Arc<dyn Tool>> {
        let bound = PageTab::Hub {
            hub: hub.clone(),
            tab: tab.clone(),
        };
        page_tools_for_tab_with(host.clone(), bound, cfg.clone())
    })
}

/// `"same_agent"` or `"new_agent"` as the Rust choice; anything else is refused saying what
/// is accepted.
pub fn owner(text: &str) -> Result<OpenedTabOwner, String> {
    match text {
        "same_agent" => Ok(OpenedTabOwner::SameAgent),
        "new_agent" => Ok(OpenedTabOwner::NewAgent),
        other => Err(format!(
            "an opened-tab policy chooses \"same_agent\" or \"new_agent\", not {other:?}"
        )),
    }
}

/// Sets who gets the browser tabs agents open: a fixed `"same_agent"` / `"new_agent"`, or a
/// Python callable `(opener, host_tab, url) -> "same_agent" | "new_agent"` (the package wraps
/// the user's function, which takes an `OpenedTab`).
pub fn with_opened_tab_policy(builder: TabHubBuilder, policy: &Bound<'_, PyAny>) -> PyResult<TabHubBuilder> {
    if let Ok(text) = policy.extract::<String>() {
        let fixed = owner(&text).map_err(config_error)?;
        return Ok(builder.opened_tab_policy(move |_: &OpenedTab| fixed));
    }
    if !policy.is_callable() {
        return Err(config_error(
            "opened_tab_policy must be \"same_agent\", \"new_agent\" or a function of the opened tab returning one of them",
        ));
    }
    let policy = Arc::new(policy.clone().unbind());
    Ok(builder.opened_tab_policy(move |opened: &OpenedTab| ask(&policy, opened)))
}

/// Asks the Python policy about one opened tab. The hub asks synchronously from a runtime
/// worker (a tool call of the opener's turn); a callable that fails leaves the tab with the
/// agent that opened it (the hub's default), and its exception is printed.
fn ask(policy: &Arc<Py<PyAny>>, opened: &OpenedTab) -> OpenedTabOwner {
    let args = (opened.opener.to_string(), opened.host_tab.clone(), opened.url.clone());
    let answer = crate::interpreter::attach_blocking(|py| {
        let answer = policy
            .bind(py)
            .call1(args)
            .and_then(|v| v.extract::<String>())
            .and_then(|text| owner(&text).map_err(config_error));
        answer.unwrap_or_else(|e| {
            e.print(py);
            OpenedTabOwner::default()
        })
    });
    answer.unwrap_or_else(|| {
        tracing::warn!("the opened-tab policy could not run (the interpreter is shutting down); the agent that opened the tab keeps it");
        OpenedTabOwner::default()
    })
}
