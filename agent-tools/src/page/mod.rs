//! Page tools over a [`BrowserHost`]: page_read, page_screenshot, page_text, page_scrape, page_scroll,
//! page_wait_for, page_navigate, page_back, page_forward, page_click, page_fill, page_select,
//! page_hover, page_press_key, page_dialog, page_upload, and the tab tools.

pub(crate) mod address;
mod config;
pub(crate) mod format;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod html_text;
mod image_size;
mod keys;
mod prompt;
mod refusal;
mod scrape;
pub(crate) mod scrape_policy;
mod tab;
mod tools;

use std::sync::Arc;

use agent_core::Tool;

use crate::host::BrowserHost;
pub use config::PageToolsConfig;
pub use prompt::BrowserPrompt;
pub use scrape_policy::ScrapePolicy;
pub use tab::PageTab;

/// The page logic every host runs through [`BrowserHost::evaluate`], as `(PAGE_JS)(op, args)`.
/// It answers with a JSON value; a `read` answers with that value written as one JSON string.
pub const PAGE_JS: &str = include_str!("page.js");

/// All page and tab tools over one host, acting on whichever tab is active, with the default
/// configuration. An agent that belongs to one tab wants [`page_tools_for_tab`].
///
/// Gated: page_scrape, page_navigate, page_back, page_forward, page_click, page_fill,
/// page_select, page_press_key, page_dialog, page_upload, tab_open, tab_activate, tab_close
/// ([`crate::with_gated`] changes that, for example to let a host's page_scrape run freely).
/// The page_* tools name the host of the page they act on ([`Tool::target_host`]): the gate
/// sees it, and the person can remember a decision for the pages of one site
/// ([`agent_core::RememberScope::Host`]). That is their tab's page (from [`BrowserHost::tabs`]),
/// except for the tools that load another: page_navigate names the host of the address it
/// loads, page_back and page_forward that of the history entry they go to (from
/// [`BrowserHost::history`]; none on a host that cannot tell, so the person is asked).
pub fn page_tools(host: Arc<dyn BrowserHost>) -> Vec<Arc<dyn Tool>> {
    page_tools_with(host, PageToolsConfig::default())
}

/// All page and tab tools over one host, acting on whichever tab is active.
pub fn page_tools_with(host: Arc<dyn BrowserHost>, cfg: PageToolsConfig) -> Vec<Arc<dyn Tool>> {
    page_tools_for_tab_with(host, PageTab::Active, cfg)
}

/// All page and tab tools over one host, acting on one browser tab whatever tab is active (a
/// host tab id, or a hub tab's wired tab: see [`PageTab`]), with the default configuration.
/// The agent may activate and close only its own tabs; a closed tab fails every page tool with
/// an error that tells the model what to do.
///
/// ```no_run
/// # use std::sync::Arc;
/// # use agent_tools::{BrowserHost, page_tools_for_tab};
/// # async fn wire(host: Arc<dyn BrowserHost>) -> Result<(), agent_tools::HostError> {
/// let tab = host.open_tab(None).await?;
/// let tools = page_tools_for_tab(host.clone(), tab.id.as_str());
/// # Ok(()) }
/// ```
pub fn page_tools_for_tab(host: Arc<dyn BrowserHost>, tab: impl Into<PageTab>) -> Vec<Arc<dyn Tool>> {
    page_tools_for_tab_with(host, tab, PageToolsConfig::default())
}

/// All page and tab tools over one host, acting on one browser tab (see [`page_tools_for_tab`]).
pub fn page_tools_for_tab_with(
    host: Arc<dyn BrowserHost>,
    tab: impl Into<PageTab>,
    cfg: PageToolsConfig,
) -> Vec<Arc<dyn Tool>> {
    // One shared state, so refs issued by one tool's read are known to the others.
    let sh = Arc::new(tools::Shared::new(host, tab.into(), cfg));
    // The page tools name the host of the page they act on, for the gate and host-scoped
    // remembered decisions: their tab's, or the one they load; the tab tools act on tabs, not
    // on a page.
    use tools::Acts::{Back, Forward, Loads, OnPage};
    let on_page = [
        (tools::page_read(&sh), OnPage),
        (tools::page_screenshot(&sh), OnPage),
        (tools::page_text(&sh), OnPage),
        (tools::page_scrape(&sh), OnPage),
        (tools::page_scroll(&sh), OnPage),
        (tools::page_wait_for(&sh), OnPage),
        (tools::page_navigate(&sh), Loads),
        (tools::page_back(&sh), Back),
        (tools::page_forward(&sh), Forward),
        (tools::page_click(&sh), OnPage),
        (tools::page_fill(&sh), OnPage),
        (tools::page_select(&sh), OnPage),
        (tools::page_hover(&sh), OnPage),
        (tools::page_press_key(&sh), OnPage),
        (tools::page_dialog(&sh), OnPage),
        (tools::page_upload(&sh), OnPage),
    ];
    let mut all: Vec<Arc<dyn Tool>> = on_page
        .into_iter()
        .map(|(t, acts)| tools::on_page(&sh, t, acts))
        .collect();
    all.extend([
        tools::tabs_list(&sh),
        tools::tab_open(&sh),
        tools::tab_activate(&sh),
        tools::tab_close(&sh),
    ]);
    all
}
