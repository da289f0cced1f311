//! Page tools over a [`BrowserHost`]: page_read, page_text, page_scrape, page_navigate,
//! page_click, page_fill, page_select, and the tab tools.

pub(crate) mod address;
mod config;
pub(crate) mod format;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod html_text;
mod refusal;
mod scrape;
pub(crate) mod scrape_policy;
mod tools;

use std::sync::Arc;

use agent_core::Tool;

use crate::host::BrowserHost;
pub use config::PageToolsConfig;
pub use scrape_policy::ScrapePolicy;

/// The page logic every host runs through [`BrowserHost::evaluate`].
pub const PAGE_JS: &str = include_str!("page.js");

/// All page and tab tools over one host, with the default configuration.
///
/// Gated: page_scrape, page_navigate, page_click, page_fill, page_select, tab_open, tab_close
/// ([`crate::with_gated`] changes that, for example to let a host's page_scrape run freely).
pub fn page_tools(host: Arc<dyn BrowserHost>) -> Vec<Arc<dyn Tool>> {
    page_tools_with(host, PageToolsConfig::default())
}

/// All page and tab tools over one host.
pub fn page_tools_with(host: Arc<dyn BrowserHost>, cfg: PageToolsConfig) -> Vec<Arc<dyn Tool>> {
    // One shared state, so refs issued by one tool's read are known to the others.
    let sh = Arc::new(tools::Shared::new(host, cfg));
    vec![
        tools::page_read(&sh),
        tools::page_text(&sh),
        tools::page_scrape(&sh),
        tools::page_navigate(&sh),
        tools::page_click(&sh),
        tools::page_fill(&sh),
        tools::page_select(&sh),
        tools::tabs_list(&sh),
        tools::tab_open(&sh),
        tools::tab_activate(&sh),
        tools::tab_close(&sh),
    ]
}
