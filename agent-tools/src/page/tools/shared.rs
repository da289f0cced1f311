//! What every page tool of one set shares: the host, the tab it works in, the configuration,
//! the ref counter and the scraper.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use agent_core::untrusted::{Provenance, wrap_untrusted};
use agent_core::{ToolContext, ToolError};
use serde_json::{Value, json};

use super::super::PAGE_JS;
use super::super::address::{Resolved, check_scheme, resolve};
use super::super::config::PageToolsConfig;
use super::super::format::cap_chars;
use super::super::refusal::format_refusal;
use super::super::scrape::Scraper;
use super::super::scrape_policy::ScrapePolicy;
use super::super::tab::{Binding, PageTab};
use super::last_read::LastRead;
use super::output::page_source;
use crate::host::{BrowserHost, DialogInfo, HostError};

/// The state one set of page tools shares (one per `page_tools_with` call).
pub(crate) struct Shared {
    pub(super) host: Arc<dyn BrowserHost>,
    pub(super) tab: Binding,
    pub(super) cfg: PageToolsConfig,
    /// Every ref number below this has been issued in some document.
    issued: AtomicU64,
    pub(super) scraper: Scraper,
    /// The last page_read, for the next `since_last` read.
    pub(super) last_read: LastRead,
    /// The dialog a tool last reported to the model and the tab it was in (`None`: the active
    /// one), until the model answers it; dismissed at the turn's end if it is still the one
    /// open there.
    pub(super) reported_dialog: Mutex<Option<(Option<String>, DialogInfo)>>,
}

impl Shared {
    pub(crate) fn new(host: Arc<dyn BrowserHost>, tab: PageTab, cfg: PageToolsConfig) -> Shared {
        Shared {
            host,
            tab: Binding::new(tab),
            issued: AtomicU64::new(1),
            last_read: LastRead::default(),
            reported_dialog: Mutex::new(None),
            // `scrape_loopback_http` and the policy's own switch mean the same: either turns it on.
            scraper: Scraper::new(ScrapePolicy {
                allow_loopback_http: cfg.scrape.allow_loopback_http || cfg.scrape_loopback_http,
                ..cfg.scrape.clone()
            }),
            cfg,
        }
    }

    /// The host tab this call acts on (`None`: the active tab), or why there is none. A tool
    /// resolves it once, so all of one call happens in one tab.
    pub(super) fn working(&self) -> Result<Option<String>, ToolError> {
        self.tab.working()
    }

    /// A host error from a call in `tab`; a tab that no longer exists is this agent's closed tab.
    pub(super) fn failed(&self, tab: Option<&str>, e: HostError) -> ToolError {
        match (tab, e) {
            (Some(id), HostError::NoSuchTab(gone)) if gone == id => self.tab.gone(id),
            (_, e) => e.into(),
        }
    }

    /// Runs one page.js operation in `tab`. A refusal becomes a model error.
    pub(super) async fn op(&self, tab: Option<&str>, op: &str, args: Value) -> Result<Value, ToolError> {
        match self.raw_op(tab, op, args).await {
            Ok(v) => refused(v),
            Err(e) => Err(self.explain(tab, e).await),
        }
    }

    /// A host error from a call in `tab`, explained: when a JavaScript dialog paused the page,
    /// the error names it and says how to answer it.
    pub(super) async fn explain(&self, tab: Option<&str>, e: HostError) -> ToolError {
        if !matches!(e, HostError::Disconnected(_) | HostError::NoSuchTab(_))
            && let Some(err) = self.dialog_error(tab).await
        {
            return err;
        }
        self.failed(tab, e)
    }

    /// A host call's answer, its error explained (see [`Shared::explain`]).
    pub(super) async fn checked<T>(&self, tab: Option<&str>, r: Result<T, HostError>) -> Result<T, ToolError> {
        match r {
            Ok(v) => Ok(v),
            Err(e) => Err(self.explain(tab, e).await),
        }
    }

    /// The error for a call into a page paused by a dialog, when one is open in `tab`.
    pub(super) async fn dialog_error(&self, tab: Option<&str>) -> Option<ToolError> {
        let d = self.host.dialog(tab).await.ok().flatten()?;
        let message = dialog_message(&d);
        *lock(&self.reported_dialog) = Some((tab.map(str::to_owned), d));
        Some(ToolError::model(message))
    }

    /// Runs one page.js operation in `tab` and returns its answer, refusal or not, or the host's
    /// error as it is (for callers that retry while a page navigates).
    pub(super) async fn raw_op(&self, tab: Option<&str>, op: &str, mut args: Value) -> Result<Value, HostError> {
        if let Some(obj) = args.as_object_mut() {
            obj.insert("base".into(), json!(self.issued.load(Ordering::SeqCst).max(1)));
        }
        let expr = format!("({PAGE_JS})({}, {})", json!(op), args);
        let v = match self.host.evaluate(tab, &expr).await? {
            // page.js answers a read as one JSON string (it crosses from the page faster).
            Value::String(text) => serde_json::from_str(&text)
                .map_err(|e| HostError::Script(format!("page.js answered with text that is not JSON: {e}")))?,
            v => v,
        };
        if let Some(n) = v.get("issued").and_then(Value::as_u64) {
            self.issued.fetch_max(n, Ordering::SeqCst);
        }
        Ok(v)
    }

    pub(super) async fn current_url(&self, tab: Option<&str>) -> Result<String, ToolError> {
        let url = self
            .checked(tab, self.host.evaluate(tab, "location.href").await)
            .await?;
        Ok(url.as_str().unwrap_or("").to_string())
    }

    pub(super) async fn settle(&self, tab: Option<&str>) -> Result<(), ToolError> {
        let settled = self.host.wait_settled(tab, self.cfg.settle_timeout).await;
        self.checked(tab, settled).await
    }

    pub(super) async fn navigate(&self, tab: Option<&str>, url: &str) -> Result<(), ToolError> {
        let navigated = self.host.navigate(tab, url).await;
        self.checked(tab, navigated).await
    }

    /// What the address bar would load for `input`: the host's own answer first (it may know
    /// bookmarks or app addresses), else a URL or a search. Returns the URL and its kind.
    pub(super) async fn resolve_address(&self, input: &str) -> Result<(String, &'static str), ToolError> {
        if let Some(url) = self.host.resolve_address(input).await? {
            check_scheme(&url).map_err(ToolError::model)?;
            return Ok((url, "host"));
        }
        match resolve(input, &self.cfg.search_template) {
            Resolved::Url { url, kind } => Ok((url, kind)),
            Resolved::Refused(why) => Err(ToolError::model(why)),
        }
    }

    pub(super) async fn tab_count(&self) -> Option<usize> {
        self.host.tabs().await.ok().map(|t| t.len())
    }
}

/// What the model is told when a dialog paused the page: its kind and what to do, then its
/// message (the page's words) between untrusted-content markers.
pub(super) fn dialog_message(d: &DialogInfo) -> String {
    let kind = agent_core::untrusted::one_line(&d.kind, 20);
    let mut out = format!(
        "the page in your tab opened a {kind} dialog and is paused until it is answered. Answer it with page_dialog (accept=true presses OK, accept=false presses Cancel) before anything else in this tab."
    );
    if !d.message.trim().is_empty() {
        out.push_str(" Its message follows as data:\n");
        out.push_str(&wrapped_dialog_message(d));
    }
    out
}

/// A dialog's message (the page's words), capped and between untrusted-content markers.
pub(super) fn wrapped_dialog_message(d: &DialogInfo) -> String {
    let source = Provenance::new("a dialog opened by the page in your tab");
    let (msg, _) = cap_chars(&d.message, 2000);
    wrap_untrusted(&source, &msg)
}

/// A page.js answer, or its refusal as a model error.
pub(super) fn refused(v: Value) -> Result<Value, ToolError> {
    if v.get("refused").and_then(Value::as_bool) == Some(true) {
        let url = v.get("at").and_then(Value::as_str).unwrap_or("");
        return Err(ToolError::model(format_refusal(&v, url, &page_source(url))));
    }
    Ok(v)
}

/// Whether a host error may pass once the page has finished navigating (its script context
/// went away mid-call), rather than meaning the tab or browser is gone.
pub(super) fn transient(e: &HostError) -> bool {
    matches!(e, HostError::Script(_) | HostError::Other(_) | HostError::Timeout(_))
}

/// A tool's run function over the shared state: each call gets its own handle to it, so the
/// returned future owns what it uses.
pub(super) fn bind<A, F, Fut>(
    sh: &Arc<Shared>,
    run: F,
) -> impl Fn(A, ToolContext) -> Fut + Send + Sync + 'static + use<A, F, Fut>
where
    F: Fn(Arc<Shared>, A) -> Fut + Send + Sync + 'static,
    Fut: Future,
{
    let sh = sh.clone();
    move |args, _cx| run(sh.clone(), args)
}

/// [`bind`] for a tool that reads its call's context (whether the model takes images).
pub(super) fn bind_cx<A, F, Fut>(
    sh: &Arc<Shared>,
    run: F,
) -> impl Fn(A, ToolContext) -> Fut + Send + Sync + 'static + use<A, F, Fut>
where
    F: Fn(Arc<Shared>, A, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future,
{
    let sh = sh.clone();
    move |args, cx| run(sh.clone(), args, cx)
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // The value stays meaningful whatever panicked while holding it.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Shared {
    /// Forgets the reported dialog: the model answered it.
    pub(super) fn dialog_answered(&self) {
        lock(&self.reported_dialog).take();
    }

    /// At a turn's end: Cancel on the dialog a tool reported to the model, if it is still the
    /// one open, so the page is not left paused behind the person's back. Dialogs the model
    /// never heard of (the person's own, in a tab brought to the front since) are left alone.
    pub(super) async fn dismiss_reported_dialog(&self) {
        let Some((tab, reported)) = lock(&self.reported_dialog).take() else {
            return;
        };
        let tab = tab.as_deref();
        if let Ok(Some(open)) = self.host.dialog(tab).await
            && open == reported
            && let Err(e) = self.host.answer_dialog(tab, false, None).await
        {
            tracing::warn!(error = %e, "could not dismiss the dialog left open at the turn's end");
        }
    }
}
