//! The [`BrowserHost`] trait: what a browser supplies so the page tools can work in its tabs.

use std::time::Duration;

use agent_core::ToolError;
use agent_core::async_trait;
use serde::{Deserialize, Serialize};

/// One tab as a host reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TabInfo {
    /// The host's id for the tab (opaque to the tools).
    pub id: String,
    /// The tab's address.
    pub url: String,
    /// The tab's title.
    pub title: String,
    /// Whether it is the active tab (the one page tools act on).
    pub active: bool,
}

/// A JavaScript dialog open in a tab (`alert`, `confirm`, `prompt`, `beforeunload`): the page's
/// scripts are paused until it is answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DialogInfo {
    /// "alert", "confirm", "prompt" or "beforeunload".
    pub kind: String,
    /// The page's message (page text: untrusted).
    pub message: String,
    /// A prompt's prefilled answer (empty for the other kinds).
    #[serde(default)]
    pub default_text: String,
}

/// A tab's session history as the browser records it: the addresses of its entries, oldest
/// first, and which one the tab is on. Entries a page adds with the history API are there too
/// (same origin as the page that added them: their host is that page's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TabHistory {
    /// The entries' addresses, oldest first.
    pub entries: Vec<String>,
    /// The index in `entries` of the one the tab is on.
    pub current: usize,
}

impl TabHistory {
    /// The address one step back (`-1`) or forward (`1`) from the current entry, if there is one.
    pub fn step(&self, offset: isize) -> Option<&str> {
        let at = self.current.checked_add_signed(offset)?;
        self.entries.get(at).map(String::as_str)
    }
}

/// What part of a tab a screenshot shows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ScreenshotArea {
    /// What the person would see: the viewport.
    Viewport,
    /// The whole document, scrolled or not (very long pages may be cut at the bottom).
    FullPage,
    /// A rectangle in CSS pixels from the viewport's top left (an element's box); it may reach
    /// beyond the viewport.
    Region {
        /// Left edge.
        x: f64,
        /// Top edge.
        y: f64,
        /// Width.
        width: f64,
        /// Height.
        height: f64,
    },
}

/// A screenshot to take: the area, and the largest image the model may be sent. The host
/// scales the capture down to fit (keeping proportions, never up).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ScreenshotRequest {
    /// What to capture.
    pub area: ScreenshotArea,
    /// The widest image, in pixels.
    pub max_width: u32,
    /// The tallest image, in pixels.
    pub max_height: u32,
}

/// An encoded image a host captured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screenshot {
    /// `image/png` or `image/jpeg`.
    pub media_type: String,
    /// The encoded bytes.
    pub data: Vec<u8>,
}

/// Why a host call failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum HostError {
    /// The browser is gone (crashed, closed, connection dropped). Ends the turn.
    #[error("the browser is not reachable: {0}")]
    Disconnected(String),
    /// The call did not finish in time.
    #[error("the browser did not answer in time: {0}")]
    Timeout(String),
    /// The page's script threw.
    #[error("script error in the page: {0}")]
    Script(String),
    /// A navigation failed (DNS, connection refused, aborted).
    #[error("navigation failed: {0}")]
    Navigation(String),
    /// No tab with that id.
    #[error("no tab with id {0:?}; tabs_list shows the open tabs")]
    NoSuchTab(String),
    /// Anything else.
    #[error("{0}")]
    Other(String),
}

impl From<HostError> for ToolError {
    fn from(e: HostError) -> Self {
        match e {
            HostError::Disconnected(_) => ToolError::fatal(e.to_string()),
            HostError::Timeout(_) => ToolError::retryable(e.to_string()),
            _ => ToolError::model(e.to_string()),
        }
    }
}

/// What a browser supplies so that the page tools work in its tabs. Small and JSON-shaped, so
/// that Python and Node hosts can implement it too.
///
/// `tab` is a host tab id from [`BrowserHost::tabs`]; `None` means the active tab.
#[async_trait]
pub trait BrowserHost: Send + Sync {
    /// Evaluates a JavaScript expression in the tab's main frame and returns its value as JSON.
    /// A promise is awaited. A thrown exception is [`HostError::Script`]. A host should evaluate
    /// in a script world of its own where the browser has one (the DOM is shared, the page's
    /// globals are not): the page's scripts then cannot see or change the tools' state. The
    /// CDP host and the WebKitGTK example do.
    async fn evaluate(&self, tab: Option<&str>, expression: &str) -> Result<serde_json::Value, HostError>;

    /// Starts loading `url` in the tab and waits for the load to finish (or fail).
    async fn navigate(&self, tab: Option<&str>, url: &str) -> Result<(), HostError>;

    /// Waits until the page settles: loaded, and no DOM changes for a short while, within
    /// `timeout`. Hosts without their own notion can use [`settle_with_script`].
    async fn wait_settled(&self, tab: Option<&str>, timeout: Duration) -> Result<(), HostError>;

    /// The open tabs.
    async fn tabs(&self) -> Result<Vec<TabInfo>, HostError>;

    /// Opens a tab (at `url`, or a blank page) and makes it active.
    async fn open_tab(&self, url: Option<&str>) -> Result<TabInfo, HostError>;

    /// Closes a tab. When it was active, another one becomes active.
    async fn close_tab(&self, tab: &str) -> Result<(), HostError>;

    /// Makes a tab the active one.
    async fn activate_tab(&self, tab: &str) -> Result<(), HostError>;

    /// The host's own address-bar resolver: turns what a person would type (an address or a
    /// search phrase) into a URL. `Ok(None)` (the default) uses the built-in resolver.
    async fn resolve_address(&self, input: &str) -> Result<Option<String>, HostError> {
        let _ = input;
        Ok(None)
    }

    /// The tab's session history, from the browser's own record (never from the page's
    /// scripts): page_back and page_forward name the host of the entry they go to, for the
    /// consent gate and host rules. `Ok(None)` (the default): this host cannot tell; those two
    /// tools then name no host, so no host rule approves them and the person is asked.
    async fn history(&self, tab: Option<&str>) -> Result<Option<TabHistory>, HostError> {
        let _ = tab;
        Ok(None)
    }

    /// Moves the mouse pointer to `(x, y)`, in CSS pixels from the top left of the tab's
    /// viewport, as real input: the page gets its mouse events and `:hover` styles apply
    /// (page_hover). The default answers that this host cannot.
    async fn hover(&self, tab: Option<&str>, x: f64, y: f64) -> Result<(), HostError> {
        let _ = (tab, x, y);
        Err(HostError::Other(
            "not supported by this host: it cannot move a real mouse pointer, so page_hover is unavailable here".into(),
        ))
    }

    /// Presses one key as real keyboard input to the tab's focused element, with `modifiers`
    /// held (each one of "Alt", "Control", "Meta", "Shift"). `key` is a DOM key value: "Enter",
    /// "Tab", "Escape", "ArrowDown", "Backspace", " ", "a", "A", "1" (page_press_key). The
    /// default answers that this host cannot.
    async fn press_key(&self, tab: Option<&str>, key: &str, modifiers: &[String]) -> Result<(), HostError> {
        let _ = (tab, key, modifiers);
        Err(HostError::Other(
            "not supported by this host: it cannot send real key presses, so page_press_key is unavailable here".into(),
        ))
    }

    /// Puts files into a file input, as a person choosing them in the file picker: `element`
    /// is a JavaScript expression that evaluates, in the tab's main frame, to the
    /// `<input type=file>`; `paths` are absolute paths of files the tools have checked. The
    /// page gets its `input` and `change` events (page_upload). The default answers that this
    /// host cannot.
    async fn set_files(&self, tab: Option<&str>, element: &str, paths: &[String]) -> Result<(), HostError> {
        let _ = (tab, element, paths);
        Err(HostError::Other(
            "not supported by this host: it cannot choose files for a file input, so page_upload is unavailable here"
                .into(),
        ))
    }

    /// The JavaScript dialog open in the tab, if any. While one is open the page's scripts are
    /// paused, so [`BrowserHost::evaluate`] cannot answer; a host that reports dialogs should
    /// fail such a call at once rather than wait. The default reports none.
    async fn dialog(&self, tab: Option<&str>) -> Result<Option<DialogInfo>, HostError> {
        let _ = tab;
        Ok(None)
    }

    /// Captures part of the tab as an image no larger than the request's bounds
    /// (page_screenshot). The default answers that this host cannot.
    async fn screenshot(&self, tab: Option<&str>, request: &ScreenshotRequest) -> Result<Screenshot, HostError> {
        let _ = (tab, request);
        Err(HostError::Other(
            "not supported by this host: it cannot capture the page as an image, so page_screenshot is unavailable here"
                .into(),
        ))
    }

    /// Answers the tab's open dialog: `accept` presses OK (for a prompt, with `text`, else its
    /// prefilled answer), otherwise Cancel (page_dialog). The default answers that this host
    /// cannot.
    async fn answer_dialog(&self, tab: Option<&str>, accept: bool, text: Option<&str>) -> Result<(), HostError> {
        let _ = (tab, accept, text);
        Err(HostError::Other(
            "not supported by this host: it does not report or answer dialogs, so page_dialog is unavailable here"
                .into(),
        ))
    }
}

/// The script [`settle_with_script`] runs: waits for `readyState == "complete"`, then for a
/// quiet period without DOM mutations (at most the given milliseconds in all).
pub const SETTLE_JS: &str = r#"(async (quietMs, maxMs) => {
  const start = performance.now();
  const left = () => Math.max(0, maxMs - (performance.now() - start));
  while (document.readyState !== 'complete' && left() > 0) await new Promise(r => setTimeout(r, 25));
  await new Promise((resolve) => {
    let timer;
    const done = () => { obs.disconnect(); clearTimeout(timer); clearTimeout(cap); resolve(); };
    const obs = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(done, quietMs); });
    obs.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    timer = setTimeout(done, quietMs);
    const cap = setTimeout(done, left());
  });
  return document.readyState;
})"#;

/// Settles a tab by evaluating [`SETTLE_JS`], retrying while a navigation replaces the
/// document (its script context goes away mid-call).
pub async fn settle_with_script<H: BrowserHost + ?Sized>(
    host: &H,
    tab: Option<&str>,
    timeout: Duration,
) -> Result<(), HostError> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        let expr = format!("{SETTLE_JS}(120, {})", left.as_millis().min(30_000));
        match tokio::time::timeout(left + Duration::from_millis(500), host.evaluate(tab, &expr)).await {
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(HostError::Script(_))) | Ok(Err(HostError::Other(_))) | Ok(Err(HostError::Timeout(_))) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Ok(Err(e)) => return Err(e),
            Err(_) => return Ok(()),
        }
    }
}
