//! Built-in tool sets (filesystem and shell, page and tab tools over a JS BrowserHost) and the
//! SQLite store.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use agent_core::{Tool, async_trait};
use agent_tools::{BrowserHost, FsPolicy, HostError, PageToolsConfig, TabInfo};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;

use crate::agent::NativeStore;
use crate::callbacks::{Callback, call_either};
use crate::error::coded;

/// A group of native tools, added to an agent as a whole.
#[napi]
pub struct NativeToolSet {
    pub(crate) tools: Vec<Arc<dyn Tool>>,
}

#[napi]
impl NativeToolSet {
    /// The tools' specs (name, description, parameters, gated, parallelSafe), as JSON text.
    #[napi]
    pub fn specs_json(&self) -> String {
        let specs: Vec<Value> = self
            .tools
            .iter()
            .map(|t| serde_json::to_value(t.spec()).unwrap_or(Value::Null))
            .collect();
        crate::convert::camel_keys(Value::Array(specs)).to_string()
    }

    /// The same tools with `gated` overridden for the named ones.
    #[napi]
    pub fn regated(&self, names: Vec<String>, gated: bool) -> NativeToolSet {
        let tools = self
            .tools
            .iter()
            .map(|t| {
                if names.contains(&t.spec().name) {
                    agent_tools::with_gated(t.clone(), gated)
                } else {
                    t.clone()
                }
            })
            .collect();
        NativeToolSet { tools }
    }
}

/// Options of the filesystem and shell tools.
#[napi(object)]
pub struct FsToolsOptions {
    /// Confine every path to this directory (relative paths only, no `..`, no symlinks).
    pub root: Option<String>,
    /// No confinement at all (must be chosen explicitly when `root` is absent).
    pub unrestricted: Option<bool>,
    /// Cap on the text `fs_read` returns, in bytes.
    pub max_read_bytes: Option<u32>,
    /// Cap on the entries `fs_list` returns.
    pub max_list_entries: Option<u32>,
    /// Cap on each of shell_exec's stdout and stderr, in bytes.
    pub max_shell_output: Option<u32>,
    /// Cap on the content one `fs_write` call writes, in bytes (default 10 MiB).
    pub max_write_bytes: Option<u32>,
    /// The environment shell_exec's commands get (by default only a safe list of variables).
    pub shell_env: Option<ShellEnvOptions>,
}

/// The environment shell_exec's commands get (`agent_tools::ShellEnv`).
#[napi(object)]
pub struct ShellEnvOptions {
    /// Inherit the host's whole environment, secrets included.
    pub inherit_all: Option<bool>,
    /// More variables to inherit, by exact name, on top of the safe list.
    pub passthrough: Option<Vec<String>>,
    /// Variables set for every command (they win over inherited ones).
    pub set: Option<HashMap<String, String>>,
}

/// fs_read, fs_write, fs_list, fs_mkdir, fs_delete and shell_exec (writes, deletes and the
/// shell are gated).
#[napi]
pub fn fs_tools(options: FsToolsOptions) -> Result<NativeToolSet> {
    let mut policy = match (options.root, options.unrestricted.unwrap_or(false)) {
        (Some(root), _) => FsPolicy::root(root),
        (None, true) => FsPolicy::unrestricted(),
        (None, false) => {
            return Err(coded(
                "invalid_argument",
                "fsTools needs `root` (a directory to confine paths to) or `unrestricted: true`",
            ));
        }
    };
    if let Some(n) = options.max_read_bytes {
        policy.max_read_bytes = n as usize;
    }
    if let Some(n) = options.max_list_entries {
        policy.max_list_entries = n as usize;
    }
    if let Some(n) = options.max_shell_output {
        policy.max_shell_output = n as usize;
    }
    if let Some(n) = options.max_write_bytes {
        policy.max_write_bytes = n as usize;
    }
    if let Some(env) = options.shell_env {
        policy.shell_env.inherit_all = env.inherit_all.unwrap_or(false);
        policy.shell_env.passthrough = env.passthrough.unwrap_or_default();
        let mut set: Vec<_> = env.set.unwrap_or_default().into_iter().collect();
        set.sort();
        policy.shell_env.set = set;
    }
    Ok(NativeToolSet {
        tools: agent_tools::fs_tools(policy),
    })
}

/// How a SQLite store writes (every field optional).
#[napi(object)]
pub struct SqliteStoreOptions {
    /// `normal` (default: survives the process being killed) or `full` (also a power loss,
    /// one fsync per commit).
    pub durability: Option<String>,
    /// Queue the loop's writes and commit them in groups (default true); false makes every
    /// write wait for its own commit.
    pub write_behind: Option<bool>,
    /// The longest wait for more writes before a group is committed, in ms (default 2).
    pub group_commit_delay_ms: Option<f64>,
    /// Caps the database file; a write past it fails like a full disk.
    pub max_size_bytes: Option<f64>,
}

fn sqlite_options(options: Option<SqliteStoreOptions>) -> Result<agent_store::SqliteOptions> {
    let mut out = agent_store::SqliteOptions::default();
    let Some(options) = options else {
        return Ok(out);
    };
    out.durability = match options.durability.as_deref() {
        None | Some("normal") => agent_store::Durability::Normal,
        Some("full") => agent_store::Durability::Full,
        Some(other) => {
            return Err(coded(
                "invalid_argument",
                format!("durability must be \"normal\" or \"full\", not {other:?}"),
            ));
        }
    };
    if let Some(on) = options.write_behind {
        out.write_behind = on;
    }
    if let Some(ms) = options.group_commit_delay_ms {
        out.group_commit_delay = std::time::Duration::try_from_secs_f64(ms / 1000.0)
            .map_err(|_| coded("invalid_argument", format!("groupCommitDelayMs must be >= 0, not {ms}")))?;
    }
    if let Some(bytes) = options.max_size_bytes {
        if !(bytes.is_finite() && bytes >= 0.0) {
            return Err(coded(
                "invalid_argument",
                format!("maxSizeBytes must be >= 0, not {bytes}"),
            ));
        }
        out.max_size_bytes = Some(bytes as u64);
    }
    Ok(out)
}

/// Opens (or creates) a SQLite session store at `path`.
#[napi]
pub async fn open_sqlite_store(path: String, options: Option<SqliteStoreOptions>) -> Result<NativeStore> {
    let store = agent_store::SqliteStore::open_with(&path, sqlite_options(options)?)
        .await
        .map_err(|e| coded("store", e))?;
    Ok(NativeStore {
        inner: Arc::new(store.clone()),
        sqlite: Some(store),
    })
}

/// One request to the JS BrowserHost.
#[napi(object)]
pub struct HostRequest {
    /// `evaluate`, `navigate`, `waitSettled`, `tabs`, `openTab`, `closeTab`, `activateTab` or
    /// `resolveAddress`.
    pub op: String,
    /// The tab (absent: the active tab).
    pub tab: Option<String>,
    /// The expression (`evaluate`), URL (`navigate`, `openTab`) or text (`resolveAddress`).
    pub arg: Option<String>,
    /// The timeout (`waitSettled`), in ms.
    pub timeout_ms: Option<f64>,
}

/// The JS host wrapper's answer: `{"ok": value}` or `{"error": {"code", "message"}}`, as JSON.
pub type HostFn = Callback<HostRequest, Either<String, Promise<String>>>;

/// A BrowserHost implemented in JavaScript.
pub struct JsHost {
    func: HostFn,
    has_wait: bool,
}

impl JsHost {
    async fn ask(
        &self,
        op: &str,
        tab: Option<&str>,
        arg: Option<&str>,
        timeout: Option<Duration>,
    ) -> std::result::Result<Value, HostError> {
        let request = HostRequest {
            op: op.to_owned(),
            tab: tab.map(str::to_owned),
            arg: arg.map(str::to_owned),
            timeout_ms: timeout.map(|d| d.as_millis() as f64),
        };
        let text = call_either(&self.func, request)
            .await
            .map_err(|e| HostError::Other(format!("the host callback failed: {}", e.reason)))?;
        let mut reply: Value = serde_json::from_str(&text)
            .map_err(|e| HostError::Other(format!("the host answered malformed JSON: {e}")))?;
        if let Some(error) = reply.get("error") {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("host error")
                .to_owned();
            return Err(match error.get("code").and_then(Value::as_str).unwrap_or("") {
                "disconnected" => HostError::Disconnected(message),
                "timeout" => HostError::Timeout(message),
                "script" => HostError::Script(message),
                "navigation" => HostError::Navigation(message),
                "no_such_tab" => HostError::NoSuchTab(tab.unwrap_or_default().to_owned()),
                _ => HostError::Other(message),
            });
        }
        Ok(reply.get_mut("ok").map(Value::take).unwrap_or(Value::Null))
    }
}

fn tab_info(v: Value) -> std::result::Result<TabInfo, HostError> {
    serde_json::from_value(v).map_err(|e| HostError::Other(format!("the host answered a malformed tab: {e}")))
}

#[async_trait]
impl BrowserHost for JsHost {
    async fn evaluate(&self, tab: Option<&str>, expression: &str) -> std::result::Result<Value, HostError> {
        self.ask("evaluate", tab, Some(expression), None).await
    }

    async fn navigate(&self, tab: Option<&str>, url: &str) -> std::result::Result<(), HostError> {
        self.ask("navigate", tab, Some(url), None).await.map(|_| ())
    }

    async fn wait_settled(&self, tab: Option<&str>, timeout: Duration) -> std::result::Result<(), HostError> {
        if self.has_wait {
            self.ask("waitSettled", tab, None, Some(timeout)).await.map(|_| ())
        } else {
            agent_tools::settle_with_script(self, tab, timeout).await
        }
    }

    async fn tabs(&self) -> std::result::Result<Vec<TabInfo>, HostError> {
        let v = self.ask("tabs", None, None, None).await?;
        match v {
            Value::Array(items) => items.into_iter().map(tab_info).collect(),
            _ => Err(HostError::Other("the host's tabs() must return an array".into())),
        }
    }

    async fn open_tab(&self, url: Option<&str>) -> std::result::Result<TabInfo, HostError> {
        tab_info(self.ask("openTab", None, url, None).await?)
    }

    async fn close_tab(&self, tab: &str) -> std::result::Result<(), HostError> {
        self.ask("closeTab", Some(tab), None, None).await.map(|_| ())
    }

    async fn activate_tab(&self, tab: &str) -> std::result::Result<(), HostError> {
        self.ask("activateTab", Some(tab), None, None).await.map(|_| ())
    }

    async fn resolve_address(&self, input: &str) -> std::result::Result<Option<String>, HostError> {
        let v = self.ask("resolveAddress", None, Some(input), None).await?;
        Ok(v.as_str().map(str::to_owned))
    }
}

/// Options of the page tools.
#[napi(object)]
pub struct PageToolsOptions {
    /// Where a search phrase goes; `{}` is replaced by the encoded phrase.
    pub search_template: Option<String>,
    /// How long to wait for a page to settle after an action, in ms.
    pub settle_timeout_ms: Option<f64>,
    /// Cap on any result, in characters.
    pub max_chars: Option<u32>,
    /// Most element lines per page_read page.
    pub max_elements: Option<u32>,
    /// Let page_scrape fetch loopback addresses, over `http://` too (tests, local development).
    pub scrape_loopback_http: Option<bool>,
    /// Let page_scrape fetch loopback addresses (127.0.0.0/8, ::1) over https.
    pub scrape_allow_loopback: Option<bool>,
    /// Let page_scrape fetch private, link-local and other non-public addresses over https.
    pub scrape_allow_private: Option<bool>,
    /// Extra root certificates page_scrape trusts, PEM text each.
    pub scrape_extra_roots_pem: Option<Vec<String>>,
    /// Whether the JS host implements `waitSettled` (otherwise a settle script is evaluated).
    pub host_waits: Option<bool>,
}

/// The page and tab tools (page_read, page_text, page_scrape, page_navigate, page_click,
/// page_fill, page_select, tabs_list, tab_open, tab_activate, tab_close) over a JS host.
#[napi(ts_args_type = "host: (request: HostRequest) => string | Promise<string>, options: PageToolsOptions")]
pub fn page_tools(
    host: Function<'_, HostRequest, Either<String, Promise<String>>>,
    options: PageToolsOptions,
) -> Result<NativeToolSet> {
    let func: HostFn = host.build_threadsafe_function().weak::<true>().build()?;
    let mut cfg = PageToolsConfig::default();
    if let Some(t) = options.search_template {
        cfg.search_template = t;
    }
    if let Some(ms) = options.settle_timeout_ms {
        cfg.settle_timeout = Duration::from_secs_f64(ms.max(0.0) / 1000.0);
    }
    if let Some(n) = options.max_chars {
        cfg.max_chars = n as usize;
    }
    if let Some(n) = options.max_elements {
        cfg.max_elements = n as usize;
    }
    cfg.scrape.allow_loopback_http = options.scrape_loopback_http.unwrap_or(false);
    cfg.scrape.allow_loopback = options.scrape_allow_loopback.unwrap_or(false);
    cfg.scrape.allow_private = options.scrape_allow_private.unwrap_or(false);
    cfg.scrape.extra_roots_pem = options.scrape_extra_roots_pem.unwrap_or_default();
    let host = Arc::new(JsHost {
        func,
        has_wait: options.host_waits.unwrap_or(false),
    });
    Ok(NativeToolSet {
        tools: agent_tools::page_tools_with(host, cfg),
    })
}
