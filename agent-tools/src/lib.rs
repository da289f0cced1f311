//! # agent-tools
//!
//! Tools for [`agent_core`] agents:
//!
//! - **Filesystem and shell**: [`fs_tools`] builds fs_read, fs_write, fs_list, fs_mkdir,
//!   fs_delete and shell_exec over an [`FsPolicy`] (a root directory, or explicit unrestricted
//!   mode).
//! - **Page tools** over a [`BrowserHost`]: [`page_tools`] builds page_read, page_text,
//!   page_scrape, page_scroll, page_wait_for, page_navigate, page_back, page_forward,
//!   page_click, page_fill, page_select, page_hover, page_press_key, page_dialog, page_upload
//!   and the tab tools, acting on the active tab; [`page_tools_for_tab`] builds them for one agent's own
//!   tab (a host tab id, or the tab a [`TabHub`](agent_core::tabs::TabHub) tab is wired to),
//!   whatever tab is active. The page logic is JavaScript shipped in this crate and run through
//!   [`BrowserHost::evaluate`], so every host behaves the same ([`BrowserHost::hover`] and
//!   [`BrowserHost::press_key`] send real input for page_hover and page_press_key;
//!   [`BrowserHost::dialog`] and [`BrowserHost::answer_dialog`] serve page_dialog,
//!   [`BrowserHost::set_files`] page_upload).
//!   [`BrowserPrompt`] is the default system prompt for an agent with these tools (the rules it
//!   follows in someone else's browser), to extend or replace.
//! - **A CDP host** (feature `cdp`): `CdpHost` drives headless Chromium over the DevTools protocol.
//!
//! Gated by default: fs_write, fs_delete, shell_exec, page_scrape (it sends a request off the
//! machine), page_navigate, page_back, page_forward, page_click, page_fill, page_select,
//! page_press_key (Enter can submit), page_dialog (OK can confirm), page_upload (the person's
//! files go to the page), tab_open, tab_activate (it changes what the person sees) and
//! tab_close. Free: page_read, page_text, page_scroll, page_wait_for, page_hover and tabs_list. [`with_gated`] changes a tool's gating.
//!
//! Page tools mark their results with the page as provenance, so the loop shows them to the
//! model between untrusted-content markers (see [`agent_core::untrusted`]).

#![deny(missing_docs)]

// One path per item: every public item is re-exported here and the modules are private.
#[cfg(feature = "cdp")]
mod cdp;
#[cfg(feature = "cdp")]
mod cdp_dialogs;
#[cfg(feature = "cdp")]
mod cdp_screenshot;
#[cfg(feature = "cdp")]
mod cdp_world;
mod fs;
mod gating;
mod host;
mod page;

#[cfg(feature = "cdp")]
pub use cdp::{CLOSED_NETWORK_ARGS, CdpConfig, CdpHost, Sandbox};
pub use fs::{
    DEFAULT_MAX_LIST_ENTRIES, DEFAULT_MAX_READ_BYTES, DEFAULT_MAX_SHELL_OUTPUT, DEFAULT_MAX_WRITE_BYTES,
    DEFAULT_SHELL_TIMEOUT_MS, FsPolicy, MAX_SHELL_TIMEOUT_MS, ShellEnv, fs_file_tools, fs_tools, shell_tool,
};
pub use gating::with_gated;
pub use host::{
    BrowserHost, DialogInfo, HostError, SETTLE_JS, Screenshot, ScreenshotArea, ScreenshotRequest, TabHistory, TabInfo,
    settle_with_script,
};
pub use page::{
    BrowserPrompt, PAGE_JS, PageTab, PageToolsConfig, ScrapePolicy, page_tools, page_tools_for_tab,
    page_tools_for_tab_with, page_tools_with,
};

/// Entry points for the fuzz targets (feature `fuzzing`).
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub use page::fuzzing;
