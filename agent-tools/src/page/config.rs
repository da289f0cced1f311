//! What a host may tune in the page tools.

use std::path::PathBuf;
use std::time::Duration;

use super::scrape_policy::ScrapePolicy;

/// Configuration of the page tools. As data it takes the [options format](agent_core::options)
/// (`{"max_elements": 100, "settle_timeout_ms": 2000, "scrape": {"allow_private": true}}`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PageToolsConfig {
    /// Where a search phrase goes; `{}` is replaced by the encoded phrase.
    pub search_template: String,
    /// How long to wait for a page to settle after an action or a navigation.
    #[serde(rename = "settle_timeout_ms", with = "agent_core::options::duration_ms")]
    #[schemars(schema_with = "agent_core::options::millis_schema")]
    pub settle_timeout: Duration,
    /// Cap on any result, in characters (default 20 000).
    pub max_chars: usize,
    /// Most element lines per page_read page (default 100; offset and find reach the rest).
    pub max_elements: usize,
    /// Characters of the page's text page_read shows first (default 1 500; page.js reads at
    /// most 4 000).
    pub preview_chars: usize,
    /// Let page_scrape fetch loopback addresses, over `http://` too (tests, local development);
    /// the same as [`ScrapePolicy::allow_loopback_http`].
    pub scrape_loopback_http: bool,
    /// Which addresses page_scrape may reach (by default public https addresses only) and which
    /// extra root certificates it trusts.
    pub scrape: ScrapePolicy,
    /// The folder page_upload may take files from (give it the filesystem tools' root); without
    /// one (the default) page_upload refuses every file.
    pub upload_root: Option<PathBuf>,
    /// The widest screenshot the model is sent, in pixels (default 1280): larger captures are
    /// scaled down, keeping their proportions.
    pub screenshot_max_width: u32,
    /// The tallest screenshot the model is sent, in pixels (default 1280).
    pub screenshot_max_height: u32,
}

impl Default for PageToolsConfig {
    fn default() -> Self {
        PageToolsConfig {
            search_template: "https://duckduckgo.com/?q={}".into(),
            settle_timeout: Duration::from_secs(5),
            max_chars: 20_000,
            max_elements: 100,
            preview_chars: 1_500,
            scrape_loopback_http: false,
            scrape: ScrapePolicy::default(),
            upload_root: None,
            screenshot_max_width: 1280,
            screenshot_max_height: 1280,
        }
    }
}
