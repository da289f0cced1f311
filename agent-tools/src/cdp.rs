//! A [`BrowserHost`] for Chromium over the DevTools protocol (feature `cdp`, chromiumoxide).
//!
//! [`CdpHost::launch`] starts Debian's `/usr/bin/chromium` headless with a fresh profile and
//! every flag a closed network needs ([`CLOSED_NETWORK_ARGS`]); [`CdpHost::connect`] attaches to
//! a running browser by its websocket (or `http://host:port`) address. A dead browser fails
//! every call at once with [`HostError::Disconnected`], and every call has a timeout.
//!
//! ## The sandbox
//! Chromium's sandbox confines each renderer, so a page that exploits a renderer bug cannot
//! reach the rest of the machine. Debian's package ships no setuid sandbox helper: the sandbox
//! needs unprivileged user namespaces, and Chromium refuses to start as root unless told
//! `--no-sandbox`. [`Sandbox::Auto`] (the default) therefore adds `--no-sandbox` only when this
//! process runs as root or user namespaces are unavailable (or the sandboxed start fails for
//! lack of them, as in containers whose seccomp filter blocks them), and logs a warning when it
//! does. Running the host as an ordinary user keeps the sandbox on.
//!
//! ## The DevTools endpoint
//! The browser listens on a port the kernel picks (`--remote-debugging-port=0`, read back from
//! its stderr), never a fixed one. That port is on loopback, so other local users could still
//! find it by scanning; chromiumoxide 0.9 speaks only websocket over TCP, so a pipe
//! (`--remote-debugging-pipe`) would need its own transport. Where other users share the
//! machine, run the browser in its own network namespace or container.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::async_trait;
use chromiumoxide::cdp::browser_protocol::dom::SetFileInputFilesParams;
use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, DispatchMouseEventParams, DispatchMouseEventType,
};
use chromiumoxide::cdp::browser_protocol::page::{GetNavigationHistoryParams, HandleJavaScriptDialogParams};
use chromiumoxide::cdp::browser_protocol::target::CreateTargetParams;
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::error::CdpError;
use chromiumoxide::handler::HandlerConfig;
use chromiumoxide::{Browser, Page};
use futures::StreamExt;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio_util::sync::CancellationToken;

use crate::cdp_dialogs::Dialogs;
use crate::host::{
    BrowserHost, DialogInfo, HostError, Screenshot, ScreenshotRequest, TabHistory, TabInfo, settle_with_script,
};

/// The flags every launch uses, so that the browser never reaches the network by itself
/// (background services, component updates, autofill, optimization hints) and resolves only
/// loopback names. Merged into one `--disable-features` switch (Chromium honours only the last).
///
/// `--no-sandbox` is not among them: [`CdpConfig::sandbox`] decides it.
pub const CLOSED_NETWORK_ARGS: &[&str] = &[
    "--headless",
    "--disable-gpu",
    "--no-first-run",
    "--no-startup-window",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--disable-breakpad",
    "--disable-client-side-phishing-detection",
    "--metrics-recording-only",
    "--no-pings",
    "--mute-audio",
    "--hide-scrollbars",
    "--password-store=basic",
    "--use-mock-keychain",
    "--disable-features=AutofillServerCommunication,OptimizationHints,OptimizationGuideModelDownloading,OptimizationHintsFetching,OptimizationTargetPrediction,NetworkTimeServiceQuerying,MediaRouter,DialMediaRouteProvider,Translate",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1",
];

/// How [`CdpHost::launch`] starts the browser. As data it takes the
/// [options format](agent_core::options) (`{"window_size": [1280, 800], "sandbox": "auto"}`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CdpConfig {
    /// The browser binary (default `/usr/bin/chromium`, Debian's package).
    pub executable: PathBuf,
    /// Extra flags, added after [`CLOSED_NETWORK_ARGS`].
    pub extra_args: Vec<String>,
    /// Window size (also the viewport).
    pub window_size: (u32, u32),
    /// How long the browser may take to start.
    #[serde(rename = "launch_timeout_ms", with = "agent_core::options::duration_ms")]
    #[schemars(schema_with = "agent_core::options::millis_schema")]
    pub launch_timeout: Duration,
    /// The longest any single host call may take.
    #[serde(rename = "call_timeout_ms", with = "agent_core::options::duration_ms")]
    #[schemars(schema_with = "agent_core::options::millis_schema")]
    pub call_timeout: Duration,
    /// Kill the browser when this process exits, even without a clean shutdown (a small
    /// watchdog `sh` process polls this process's pid).
    pub kill_on_parent_exit: bool,
    /// Whether the browser runs in its sandbox (default: wherever this host can run it).
    pub sandbox: Sandbox,
}

/// Whether Chromium runs in its sandbox. As data: `"auto"`, `"on"` or `"off"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Sandbox {
    /// On, unless this process runs as root or user namespaces are unavailable (Chromium cannot
    /// run its sandbox there); when a sandboxed start fails for lack of a usable sandbox, the
    /// launch is retried once without it. A warning is logged whenever it is off.
    #[default]
    Auto,
    /// Always on: the launch fails where the sandbox cannot run.
    On,
    /// Always off (`--no-sandbox`).
    Off,
}

/// What the sandbox decision depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SandboxHost {
    /// This process runs as root.
    root: bool,
    /// Unprivileged user namespaces look available.
    user_namespaces: bool,
}

impl SandboxHost {
    fn probe() -> SandboxHost {
        let read = |path: &str| std::fs::read_to_string(path).ok().map(|s| s.trim().to_string());
        // Each knob, where the kernel has it, can switch unprivileged user namespaces off.
        let max = read("/proc/sys/user/max_user_namespaces");
        let debian = read("/proc/sys/kernel/unprivileged_userns_clone");
        let apparmor = read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
        SandboxHost {
            root: nix::unistd::geteuid().is_root(),
            user_namespaces: max.as_deref() != Some("0")
                && debian.as_deref() != Some("0")
                && apparmor.as_deref() != Some("1"),
        }
    }
}

/// Whether a launch adds `--no-sandbox`.
fn without_sandbox(mode: Sandbox, host: SandboxHost) -> bool {
    match mode {
        Sandbox::On => false,
        Sandbox::Off => true,
        Sandbox::Auto => host.root || !host.user_namespaces,
    }
}

impl Default for CdpConfig {
    fn default() -> Self {
        CdpConfig {
            executable: PathBuf::from("/usr/bin/chromium"),
            extra_args: Vec::new(),
            window_size: (1280, 800),
            launch_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(30),
            kill_on_parent_exit: true,
            sandbox: Sandbox::Auto,
        }
    }
}

struct Tabs {
    pages: Vec<Page>,
    active: usize,
}

struct Owned {
    child: tokio::process::Child,
    watchdog: Option<tokio::process::Child>,
    profile: PathBuf,
}

struct Inner {
    browser: tokio::sync::Mutex<Browser>,
    tabs: Mutex<Tabs>,
    dead: CancellationToken,
    call_timeout: Duration,
    owned: Mutex<Option<Owned>>,
    ws_url: String,
    dialogs: Dialogs,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Ok(mut owned) = self.owned.lock()
            && let Some(mut o) = owned.take()
        {
            let _ = o.child.start_kill();
            if let Some(w) = o.watchdog.as_mut() {
                let _ = w.start_kill();
            }
            let _ = std::fs::remove_dir_all(&o.profile);
        }
    }
}

/// Chromium driven over CDP. Cheap to clone; clones share the browser.
#[derive(Clone)]
pub struct CdpHost {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for CdpHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CdpHost").field("ws_url", &self.inner.ws_url).finish()
    }
}

fn cdp_err(e: CdpError) -> HostError {
    match e {
        CdpError::Ws(e) => HostError::Disconnected(e.to_string()),
        CdpError::Timeout => HostError::Timeout("CDP request timed out".into()),
        CdpError::JavascriptException(ex) => {
            let text = ex
                .exception
                .as_ref()
                .and_then(|o| o.description.clone())
                .unwrap_or_else(|| ex.text.clone());
            HostError::Script(text)
        }
        CdpError::ChannelSendError(e) => HostError::Disconnected(e.to_string()),
        CdpError::NoResponse => HostError::Disconnected("no response from the browser".into()),
        other => HostError::Other(other.to_string()),
    }
}

fn fresh_profile_dir() -> PathBuf {
    use rand::Rng;
    let tag: String = (0..12)
        .map(|_| format!("{:x}", rand::rng().random_range(0..16u8)))
        .collect();
    std::env::temp_dir().join(format!("agent-tools-chromium-{}-{tag}", std::process::id()))
}

impl CdpHost {
    /// Launches `/usr/bin/chromium` headless with the default [`CdpConfig`].
    pub async fn launch_default() -> Result<CdpHost, HostError> {
        Self::launch(CdpConfig::default()).await
    }

    /// Launches the browser headless with a fresh profile directory (removed on drop) and the
    /// closed-network flags, in its sandbox where [`CdpConfig::sandbox`] says so, and opens one
    /// blank tab.
    pub async fn launch(config: CdpConfig) -> Result<CdpHost, HostError> {
        let no_sandbox = without_sandbox(config.sandbox, SandboxHost::probe());
        match Self::launch_once(&config, no_sandbox).await {
            // Containers often block user namespaces in ways the probe cannot see.
            Err(HostError::Other(msg))
                if config.sandbox == Sandbox::Auto && !no_sandbox && msg.contains("No usable sandbox") =>
            {
                tracing::warn!(target: "agent_tools::cdp", "Chromium has no usable sandbox here; launching it with --no-sandbox");
                Self::launch_once(&config, true).await
            }
            other => other,
        }
    }

    async fn launch_once(config: &CdpConfig, no_sandbox: bool) -> Result<CdpHost, HostError> {
        if no_sandbox && config.sandbox == Sandbox::Auto {
            tracing::warn!(target: "agent_tools::cdp", "running Chromium without its sandbox (this process is root, or user namespaces are unavailable)");
        }
        if !config.executable.exists() {
            return Err(HostError::Other(format!(
                "Chromium not found at {}: install it (Debian: `apt-get install chromium`, or run scripts/lib/ensure-chromium.sh)",
                config.executable.display()
            )));
        }
        let profile = fresh_profile_dir();
        std::fs::create_dir_all(&profile)
            .map_err(|e| HostError::Other(format!("cannot create the profile directory: {e}")))?;
        let mut cmd = tokio::process::Command::new(&config.executable);
        cmd.args(CLOSED_NETWORK_ARGS);
        if no_sandbox {
            cmd.arg("--no-sandbox");
        }
        cmd.arg(format!("--user-data-dir={}", profile.display()))
            .arg(format!(
                "--window-size={},{}",
                config.window_size.0, config.window_size.1
            ))
            // The kernel picks the port: nothing to guess from a well-known number.
            .arg("--remote-debugging-port=0")
            .args(&config.extra_args)
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = cmd
            .spawn()
            .map_err(|e| HostError::Other(format!("cannot start {}: {e}", config.executable.display())))?;
        let pid = child.id().unwrap_or(0);
        let watchdog = if config.kill_on_parent_exit && pid > 0 {
            // Polls this process; when it is gone, kills the browser's whole process group.
            let script = format!(
                "while kill -0 {} 2>/dev/null; do sleep 1; done; kill -KILL -{pid} 2>/dev/null",
                std::process::id()
            );
            tokio::process::Command::new("sh")
                .arg("-c")
                .arg(script)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0)
                .spawn()
                .ok()
        } else {
            None
        };
        let Some(stderr) = child.stderr.take() else {
            return Err(HostError::Other("no stderr from the browser".into()));
        };
        let mut lines = BufReader::new(stderr).lines();
        let mut seen = Vec::new();
        let find_ws = async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(i) = line.find("ws://") {
                    return Some(line[i..].trim().to_string());
                }
                if seen.len() < 20 {
                    seen.push(line);
                }
            }
            None
        };
        let ws = tokio::time::timeout(config.launch_timeout, find_ws).await;
        let ws = match ws {
            Ok(Some(ws)) => ws,
            other => {
                let _ = child.start_kill();
                let _ = std::fs::remove_dir_all(&profile);
                let why = if other.is_err() { "timed out" } else { "exited" };
                return Err(HostError::Other(format!(
                    "the browser {why} before it was ready; stderr: {}",
                    seen.join(" | ")
                )));
            }
        };
        // Keep draining stderr, or the browser blocks on a full pipe.
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::trace!(target: "agent_tools::cdp", "chromium: {line}");
            }
        });
        let owned = Owned {
            child,
            watchdog,
            profile,
        };
        Self::attach(ws, Some(owned), config.call_timeout, true).await
    }

    /// Connects to a running browser by its `ws://` address (or `http://host:port`, which is
    /// looked up at `/json/version`). Existing pages become tabs.
    pub async fn connect(url: &str, call_timeout: Duration) -> Result<CdpHost, HostError> {
        Self::attach(url.to_string(), None, call_timeout, false).await
    }

    async fn attach(
        ws: String,
        owned: Option<Owned>,
        call_timeout: Duration,
        launched: bool,
    ) -> Result<CdpHost, HostError> {
        let cfg = HandlerConfig {
            viewport: None,
            request_timeout: call_timeout,
            ..HandlerConfig::default()
        };
        let connect = Browser::connect_with_config(ws.clone(), cfg);
        let (mut browser, mut handler) = match tokio::time::timeout(call_timeout, connect).await {
            Ok(Ok(pair)) => pair,
            Ok(Err(e)) => return Err(HostError::Disconnected(format!("cannot connect to {ws}: {e}"))),
            Err(_) => return Err(HostError::Timeout(format!("connecting to {ws}"))),
        };
        let dead = CancellationToken::new();
        {
            let dead = dead.clone();
            tokio::spawn(async move {
                while let Some(event) = handler.next().await {
                    // A websocket error means the browser is gone: stop, so calls fail at once.
                    if let Err(CdpError::Ws(e)) = event {
                        tracing::debug!(target: "agent_tools::cdp", "browser connection lost: {e}");
                        break;
                    }
                }
                dead.cancel();
            });
        }
        let timed = |what: &'static str| move |_| HostError::Timeout(what.into());
        let _ = tokio::time::timeout(call_timeout, browser.fetch_targets())
            .await
            .map_err(timed("listing targets"))?;
        // Give fetched targets a moment to attach.
        if !launched {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let mut pages = tokio::time::timeout(call_timeout, browser.pages())
            .await
            .map_err(timed("listing pages"))?
            .map_err(cdp_err)?;
        if pages.is_empty() {
            let page = tokio::time::timeout(call_timeout, browser.new_page("about:blank"))
                .await
                .map_err(timed("opening a tab"))?
                .map_err(cdp_err)?;
            pages.push(page);
        }
        let dialogs = Dialogs::default();
        for page in &pages {
            dialogs.watch(page).await;
        }
        Ok(CdpHost {
            inner: Arc::new(Inner {
                browser: tokio::sync::Mutex::new(browser),
                tabs: Mutex::new(Tabs { pages, active: 0 }),
                dead,
                call_timeout,
                owned: Mutex::new(owned),
                ws_url: ws,
                dialogs,
            }),
        })
    }

    /// The browser's DevTools websocket address (another client can connect to it).
    pub fn ws_url(&self) -> &str {
        &self.inner.ws_url
    }

    /// The browser's process id, when this host launched it.
    pub fn pid(&self) -> Option<u32> {
        self.inner
            .owned
            .lock()
            .ok()
            .and_then(|o| o.as_ref().and_then(|o| o.child.id()))
    }

    /// Whether the browser is still reachable as far as this host knows.
    pub fn is_alive(&self) -> bool {
        !self.check_dead()
    }

    fn check_dead(&self) -> bool {
        if self.inner.dead.is_cancelled() {
            return true;
        }
        if let Ok(mut owned) = self.inner.owned.lock()
            && let Some(o) = owned.as_mut()
            && let Ok(Some(_)) = o.child.try_wait()
        {
            self.inner.dead.cancel();
            return true;
        }
        false
    }

    /// Closes the browser (when this host launched it) and removes its profile directory.
    pub async fn close(&self) -> Result<(), HostError> {
        if !self.check_dead() {
            let mut b = self.inner.browser.lock().await;
            let _ = tokio::time::timeout(Duration::from_secs(5), b.close()).await;
        }
        let owned = self.inner.owned.lock().ok().and_then(|mut o| o.take());
        if let Some(mut o) = owned {
            if tokio::time::timeout(Duration::from_secs(5), o.child.wait())
                .await
                .is_err()
            {
                let _ = o.child.kill().await;
            }
            if let Some(mut w) = o.watchdog {
                let _ = w.kill().await;
            }
            let _ = std::fs::remove_dir_all(&o.profile);
        }
        self.inner.dead.cancel();
        Ok(())
    }

    /// Runs a browser call with the dead check and the call timeout.
    /// The isolated world the tools evaluate in (see `cdp_world`); an error rather than the
    /// page's own world when it cannot be had.
    async fn tools_world(
        &self,
        page: &Page,
    ) -> Result<chromiumoxide::cdp::js_protocol::runtime::ExecutionContextId, HostError> {
        match self
            .call("finding the tools' script world", crate::cdp_world::tools_context(page))
            .await
        {
            Ok(Some(context)) => Ok(context),
            Ok(None) => Err(HostError::Other(
                "the page's document has no isolated script world for the tools yet; try again".into(),
            )),
            Err(e) => Err(self.in_tab(page, e)),
        }
    }

    async fn call<T>(&self, what: &str, fut: impl Future<Output = Result<T, CdpError>>) -> Result<T, HostError> {
        if self.check_dead() {
            return Err(HostError::Disconnected(
                "the browser has exited or the connection was lost".into(),
            ));
        }
        tokio::select! {
            r = fut => r.map_err(|e| {
                // Only the connection failing means the browser is gone: a closed tab's own
                // channel fails too, and must not fail every other tab.
                let lost = matches!(e, CdpError::Ws(_));
                let e = cdp_err(e);
                if lost { self.inner.dead.cancel(); }
                e
            }),
            _ = self.inner.dead.cancelled() => Err(HostError::Disconnected(format!("the browser went away during {what}"))),
            _ = tokio::time::sleep(self.inner.call_timeout) => {
                if self.check_dead() {
                    Err(HostError::Disconnected(format!("the browser went away during {what}")))
                } else {
                    Err(HostError::Timeout(what.to_string()))
                }
            }
        }
    }

    /// Runs a call into tab `id`'s page unless a JavaScript dialog pauses it: an open dialog
    /// fails the call at once, and one that opens during the call ends the wait for it.
    async fn paused_by_dialog<T>(
        &self,
        id: &str,
        call: impl Future<Output = Result<T, HostError>>,
    ) -> Result<T, HostError> {
        let paused = |d: DialogInfo| {
            HostError::Other(format!(
                "a {} dialog is open in the tab; the page is paused until it is answered",
                d.kind
            ))
        };
        if let Some(d) = self.inner.dialogs.open(id) {
            return Err(paused(d));
        }
        // Biased: a call that finished is answered even when a dialog it scheduled (a
        // `setTimeout` that calls `confirm()`) opened before this task looked.
        tokio::select! {
            biased;
            r = call => r,
            _ = self.inner.dialogs.opened(id) => Err(paused(self.inner.dialogs.open(id).unwrap_or(DialogInfo {
                kind: "JavaScript".into(),
                message: String::new(),
                default_text: String::new(),
            }))),
        }
    }

    fn page(&self, tab: Option<&str>) -> Result<Page, HostError> {
        let tabs = self
            .inner
            .tabs
            .lock()
            .map_err(|_| HostError::Other("tab registry poisoned".into()))?;
        match tab {
            None => tabs
                .pages
                .get(tabs.active)
                .cloned()
                .ok_or_else(|| HostError::Other("no tab is open".into())),
            Some(id) => tabs
                .pages
                .iter()
                .find(|p| p.target_id().as_ref() == id)
                .cloned()
                .ok_or_else(|| HostError::NoSuchTab(id.to_string())),
        }
    }

    /// A failed call in `page`: when the browser still answers but the tab's channel is gone,
    /// the tab has closed (a script's `window.close()`, another client): it leaves the list
    /// and the call fails with [`HostError::NoSuchTab`].
    fn in_tab(&self, page: &Page, e: HostError) -> HostError {
        if !matches!(e, HostError::Disconnected(_)) || self.check_dead() {
            return e;
        }
        let id = page.target_id().as_ref().to_string();
        if let Ok(mut t) = self.inner.tabs.lock()
            && let Some(idx) = t.pages.iter().position(|p| p.target_id().as_ref() == id)
        {
            t.pages.remove(idx);
            if t.active >= idx && t.active > 0 {
                t.active -= 1;
            }
        }
        HostError::NoSuchTab(id)
    }

    async fn info(&self, page: &Page, active: bool) -> TabInfo {
        let url = self
            .call("reading a tab's url", page.url())
            .await
            .ok()
            .flatten()
            .unwrap_or_default();
        // The title is read by a script, which a dialog pauses until it is answered: while one
        // is open (or opens meanwhile) the title is left empty rather than waiting out the
        // call timeout. The address comes from the browser and is there.
        let id = page.target_id().as_ref().to_string();
        let title = tokio::select! {
            title = self.call("reading a tab's title", page.get_title()) => title.ok().flatten().unwrap_or_default(),
            _ = self.inner.dialogs.opened(&id) => String::new(),
        };
        TabInfo {
            id: page.target_id().as_ref().to_string(),
            url,
            title,
            active,
        }
    }
}

#[async_trait]
impl BrowserHost for CdpHost {
    async fn evaluate(&self, tab: Option<&str>, expression: &str) -> Result<serde_json::Value, HostError> {
        let page = self.page(tab)?;
        let id = page.target_id().as_ref().to_string();
        let mut attempt = 0;
        loop {
            let mut params = EvaluateParams::new(expression);
            params.await_promise = Some(true);
            params.return_by_value = Some(true);
            params.context_id = Some(self.tools_world(&page).await?);
            let evaluated = self.paused_by_dialog(&id, self.call("evaluate", page.evaluate_expression(params)));
            match evaluated.await {
                Ok(result) => return Ok(result.value().cloned().unwrap_or(serde_json::Value::Null)),
                // A navigation just replaced the document: its old script context is gone.
                Err(HostError::Other(msg) | HostError::Script(msg))
                    if attempt < 3
                        && (msg.contains("Cannot find context") || msg.contains("context was destroyed")) =>
                {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => return Err(self.in_tab(&page, e)),
            }
        }
    }

    async fn navigate(&self, tab: Option<&str>, url: &str) -> Result<(), HostError> {
        let page = self.page(tab)?;
        let id = page.target_id().as_ref().to_string();
        match self.paused_by_dialog(&id, self.call("navigate", page.goto(url))).await {
            Ok(_) => Ok(()),
            Err(HostError::Other(msg)) | Err(HostError::Script(msg)) => {
                Err(HostError::Navigation(format!("{url}: {msg}")))
            }
            Err(e) => Err(self.in_tab(&page, e)),
        }
    }

    async fn wait_settled(&self, tab: Option<&str>, timeout: Duration) -> Result<(), HostError> {
        let page = self.page(tab)?;
        let id = page.target_id().as_ref().to_string();
        // A page paused by a dialog never settles: say so at once rather than retry until the
        // timeout.
        self.paused_by_dialog(&id, async { settle_with_script(self, tab, timeout).await })
            .await
    }

    async fn tabs(&self) -> Result<Vec<TabInfo>, HostError> {
        if self.check_dead() {
            return Err(HostError::Disconnected(
                "the browser has exited or the connection was lost".into(),
            ));
        }
        let (pages, active) = {
            let t = self
                .inner
                .tabs
                .lock()
                .map_err(|_| HostError::Other("tab registry poisoned".into()))?;
            (t.pages.clone(), t.active)
        };
        let mut out = Vec::with_capacity(pages.len());
        for (i, p) in pages.iter().enumerate() {
            out.push(self.info(p, i == active).await);
        }
        Ok(out)
    }

    async fn open_tab(&self, url: Option<&str>) -> Result<TabInfo, HostError> {
        let target = CreateTargetParams::new(url.unwrap_or("about:blank"));
        let page = {
            let browser = self.inner.browser.lock().await;
            self.call("opening a tab", browser.new_page(target)).await?
        };
        self.inner.dialogs.watch(&page).await;
        let _ = self.call("activating a tab", page.activate()).await;
        {
            let mut t = self
                .inner
                .tabs
                .lock()
                .map_err(|_| HostError::Other("tab registry poisoned".into()))?;
            t.pages.push(page.clone());
            t.active = t.pages.len() - 1;
        }
        Ok(self.info(&page, true).await)
    }

    async fn close_tab(&self, tab: &str) -> Result<(), HostError> {
        let page = self.page(Some(tab))?;
        {
            let mut t = self
                .inner
                .tabs
                .lock()
                .map_err(|_| HostError::Other("tab registry poisoned".into()))?;
            if t.pages.len() <= 1 {
                return Err(HostError::Other("refused: this is the last open tab".into()));
            }
            let Some(idx) = t.pages.iter().position(|p| p.target_id().as_ref() == tab) else {
                return Err(HostError::NoSuchTab(tab.to_string()));
            };
            t.pages.remove(idx);
            if t.active >= idx && t.active > 0 {
                t.active -= 1;
            }
        }
        self.call("closing a tab", page.close()).await?;
        let next = self.page(None)?;
        let _ = self.call("activating a tab", next.activate()).await;
        Ok(())
    }

    /// `Page.getNavigationHistory`: answered by the browser, not the page, so a dialog that
    /// pauses the page's scripts does not hold it up.
    async fn history(&self, tab: Option<&str>) -> Result<Option<TabHistory>, HostError> {
        let page = self.page(tab)?;
        let read = self.call(
            "reading a tab's history",
            page.execute(GetNavigationHistoryParams::default()),
        );
        let history = match read.await {
            Ok(r) => r.result,
            Err(e) => return Err(self.in_tab(&page, e)),
        };
        let current = usize::try_from(history.current_index)
            .ok()
            .filter(|i| *i < history.entries.len())
            .ok_or_else(|| HostError::Other("the browser reported a history position outside its entries".into()))?;
        Ok(Some(TabHistory {
            entries: history.entries.into_iter().map(|e| e.url).collect(),
            current,
        }))
    }

    async fn hover(&self, tab: Option<&str>, x: f64, y: f64) -> Result<(), HostError> {
        let page = self.page(tab)?;
        let id = page.target_id().as_ref().to_string();
        let moved = DispatchMouseEventParams::new(DispatchMouseEventType::MouseMoved, x, y);
        match self
            .paused_by_dialog(&id, self.call("moving the mouse", page.execute(moved)))
            .await
        {
            Ok(_) => Ok(()),
            Err(e) => Err(self.in_tab(&page, e)),
        }
    }

    async fn press_key(&self, tab: Option<&str>, key: &str, modifiers: &[String]) -> Result<(), HostError> {
        let page = self.page(tab)?;
        let unknown = |k: &str| HostError::Other(format!("the key {k:?} is not on this host's keyboard"));
        let def = chromiumoxide::keys::get_key_definition(key).ok_or_else(|| unknown(key))?;
        // CDP's modifier bits: Alt 1, Control 2, Meta 4, Shift 8.
        let mut held = Vec::with_capacity(modifiers.len());
        for m in modifiers {
            let bit = match m.as_str() {
                "Alt" => 1,
                "Control" => 2,
                "Meta" => 4,
                "Shift" => 8,
                _ => return Err(HostError::Other(format!("{m:?} is not a modifier key"))),
            };
            held.push((
                bit,
                chromiumoxide::keys::get_key_definition(m).ok_or_else(|| unknown(m))?,
            ));
        }
        let all: i64 = held.iter().map(|(bit, _)| bit).sum();
        // With Control, Alt or Meta held a key types nothing (it is a shortcut).
        let text = if all & !8 != 0 {
            None
        } else {
            def.text.or((def.key.chars().count() == 1).then_some(def.key))
        };
        let mut events = Vec::new();
        let mut mask = 0;
        for (bit, m) in &held {
            mask |= bit;
            events.push(key_event(DispatchKeyEventType::RawKeyDown, m, mask, None)?);
        }
        let down = if text.is_some() {
            DispatchKeyEventType::KeyDown
        } else {
            DispatchKeyEventType::RawKeyDown
        };
        events.push(key_event(down, def, mask, text)?);
        events.push(key_event(DispatchKeyEventType::KeyUp, def, mask, None)?);
        for (bit, m) in held.iter().rev() {
            mask &= !bit;
            events.push(key_event(DispatchKeyEventType::KeyUp, m, mask, None)?);
        }
        let id = page.target_id().as_ref().to_string();
        for event in events {
            if let Err(e) = self
                .paused_by_dialog(&id, self.call("pressing a key", page.execute(event)))
                .await
            {
                return Err(self.in_tab(&page, e));
            }
        }
        Ok(())
    }

    async fn set_files(&self, tab: Option<&str>, element: &str, paths: &[String]) -> Result<(), HostError> {
        let page = self.page(tab)?;
        let id = page.target_id().as_ref().to_string();
        let mut params = EvaluateParams::new(element);
        params.return_by_value = Some(false);
        params.context_id = Some(self.tools_world(&page).await?);
        let found = self.paused_by_dialog(&id, self.call("finding a file input", page.evaluate_expression(params)));
        let object = match found.await {
            Ok(r) => r.object().object_id.clone(),
            Err(e) => return Err(self.in_tab(&page, e)),
        };
        let Some(object) = object else {
            return Err(HostError::Other("the file input is gone from the page".into()));
        };
        let mut set = SetFileInputFilesParams::new(paths.to_vec());
        set.object_id = Some(object);
        match self
            .paused_by_dialog(&id, self.call("choosing files", page.execute(set)))
            .await
        {
            Ok(_) => Ok(()),
            Err(e) => Err(self.in_tab(&page, e)),
        }
    }

    async fn screenshot(&self, tab: Option<&str>, request: &ScreenshotRequest) -> Result<Screenshot, HostError> {
        let page = self.page(tab)?;
        let id = page.target_id().as_ref().to_string();
        let capture = crate::cdp_screenshot::capture(&page, request);
        match self
            .paused_by_dialog(&id, self.call("taking a screenshot", capture))
            .await
        {
            Ok(data) => Ok(Screenshot {
                media_type: "image/png".into(),
                data,
            }),
            Err(e) => Err(self.in_tab(&page, e)),
        }
    }

    async fn dialog(&self, tab: Option<&str>) -> Result<Option<DialogInfo>, HostError> {
        let page = self.page(tab)?;
        Ok(self.inner.dialogs.open(page.target_id().as_ref()))
    }

    async fn answer_dialog(&self, tab: Option<&str>, accept: bool, text: Option<&str>) -> Result<(), HostError> {
        let page = self.page(tab)?;
        let id = page.target_id().as_ref().to_string();
        if self.inner.dialogs.open(&id).is_none() {
            return Err(HostError::Other("no dialog is open in this tab".into()));
        }
        let mut params = HandleJavaScriptDialogParams::new(accept);
        params.prompt_text = text.map(str::to_string);
        match self.call("answering a dialog", page.execute(params)).await {
            Ok(_) => {
                self.inner.dialogs.clear(&id);
                Ok(())
            }
            Err(e) => Err(self.in_tab(&page, e)),
        }
    }

    async fn activate_tab(&self, tab: &str) -> Result<(), HostError> {
        let page = self.page(Some(tab))?;
        self.call("activating a tab", page.activate()).await?;
        let mut t = self
            .inner
            .tabs
            .lock()
            .map_err(|_| HostError::Other("tab registry poisoned".into()))?;
        if let Some(idx) = t.pages.iter().position(|p| p.target_id().as_ref() == tab) {
            t.active = idx;
        }
        Ok(())
    }
}

/// One `Input.dispatchKeyEvent` for `key` with the `modifiers` bits held.
fn key_event(
    kind: DispatchKeyEventType,
    key: &chromiumoxide::keys::KeyDefinition,
    modifiers: i64,
    text: Option<&str>,
) -> Result<DispatchKeyEventParams, HostError> {
    let mut b = DispatchKeyEventParams::builder()
        .r#type(kind)
        .modifiers(modifiers)
        .key(key.key)
        .code(key.code)
        .windows_virtual_key_code(key.key_code)
        .native_virtual_key_code(key.key_code);
    if let Some(text) = text {
        b = b.text(text).unmodified_text(text);
    }
    b.build().map_err(HostError::Other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sandbox_is_off_only_where_chromium_cannot_run_it() {
        let host = |root, user_namespaces| SandboxHost { root, user_namespaces };
        assert!(!without_sandbox(Sandbox::Auto, host(false, true)));
        assert!(
            without_sandbox(Sandbox::Auto, host(true, true)),
            "Chromium refuses root without --no-sandbox"
        );
        assert!(
            without_sandbox(Sandbox::Auto, host(false, false)),
            "Debian's sandbox needs user namespaces"
        );
        assert!(!without_sandbox(Sandbox::On, host(true, false)));
        assert!(without_sandbox(Sandbox::Off, host(false, true)));
    }
}
