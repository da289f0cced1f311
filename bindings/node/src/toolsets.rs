//! Built-in tool sets (filesystem and shell, page and tab tools over a JS BrowserHost) and the
//! SQLite store.

use std::sync::Arc;
use std::time::Duration;

use agent_core::{Tool, async_trait};
use agent_tools::{BrowserHost, FsPolicy, HostError, PageToolsConfig, TabInfo};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;

use crate::agent::NativeStore;
use crate::callbacks::Callback;
use crate::error::coded;

/// A group of native tools, added to an agent as a whole.
#[napi]
pub struct NativeToolSet {
    pub(crate) tools: Vec<Arc<dyn Tool>>,
}

#[napi]
impl NativeToolSet {
    /// The tools' specs (name, description, parameters, gated, parallelSafe, timeout).
    #[napi(ts_return_type = "any[]")]
    pub fn specs(&self) -> crate::convert::Json {
        let specs: Vec<&agent_core::ToolSpec> = self.tools.iter().map(|t| t.spec()).collect();
        crate::convert::js(&specs)
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

/// fs_read, fs_write, fs_list, fs_mkdir, fs_delete and shell_exec (writes, deletes and the
/// shell are gated). `options` is an `FsPolicy` options object (camelCase keys of the options
/// format): `root` or `unrestricted: true`, the caps and `shellEnv`.
#[napi(ts_args_type = "options: object")]
pub fn fs_tools(options: Unknown<'_>) -> Result<NativeToolSet> {
    const WHAT: &str = "fsTools options";
    let policy: FsPolicy = crate::options::parse(WHAT, crate::options::value_of(WHAT, options)?)?;
    Ok(NativeToolSet {
        tools: agent_tools::fs_tools(policy),
    })
}

/// Opens (or creates) a SQLite session store at `path`. `options` is a `SqliteOptions` options
/// object (camelCase keys of the options format; absent: the defaults).
#[napi(
    ts_args_type = "path: string, options?: object | undefined | null",
    ts_return_type = "Promise<NativeStore>"
)]
pub fn open_sqlite_store<'env>(
    env: &'env Env,
    path: String,
    options: Option<Unknown<'_>>,
) -> Result<PromiseRaw<'env, NativeStore>> {
    let options: agent_store::SqliteOptions = crate::options::from_js("SqliteStore options", options)?;
    env.spawn_future(async move {
        let store = agent_store::SqliteStore::open_with(&path, options)
            .await
            .map_err(|e| coded("store", e))?;
        Ok(NativeStore {
            inner: Arc::new(store.clone()),
            sqlite: Some(store),
        })
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

/// The JS host wrapper's answer: `{ ok: value }` or `{ error: { code, message } }`.
#[napi(object)]
pub struct HostReply {
    /// The host method's result (plain JSON data; absent: null).
    pub ok: Option<Value>,
    /// What went wrong.
    pub error: Option<HostReplyError>,
}

/// A host failure: a `HostError` code (`disconnected`, `timeout`, `script`, `navigation`,
/// `no_such_tab`, `other`) and its message.
#[napi(object)]
pub struct HostReplyError {
    /// The code.
    pub code: String,
    /// The message.
    pub message: String,
}

/// The JS host wrapper as the native side calls it. It always answers a promise (a reply
/// object would be ambiguous with a promise: every field of [`HostReply`] is optional).
pub type HostFn = Callback<HostRequest, Promise<HostReply>>;

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
        let reply = match self.func.call_async_catch(request).await {
            Ok(promise) => promise.await,
            Err(e) => Err(e),
        }
        .map_err(|e| HostError::Other(format!("the host callback failed: {}", e.reason)))?;
        if let Some(HostReplyError { code, message }) = reply.error {
            return Err(match code.as_str() {
                "disconnected" => HostError::Disconnected(message),
                "timeout" => HostError::Timeout(message),
                "script" => HostError::Script(message),
                "navigation" => HostError::Navigation(message),
                "no_such_tab" => HostError::NoSuchTab(tab.unwrap_or_default().to_owned()),
                _ => HostError::Other(message),
            });
        }
        let mut value = reply.ok.unwrap_or(Value::Null);
        crate::convert::integral_numbers(&mut value);
        Ok(value)
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

/// The page and tab tools (page_read, page_text, page_scrape, page_navigate, page_click,
/// page_fill, page_select, tabs_list, tab_open, tab_activate, tab_close) over a JS host.
/// `options` is a `PageToolsConfig` options object (camelCase keys of the options format);
/// `hostWaits` says whether the JS host implements `waitSettled` (otherwise a settle script is
/// evaluated).
#[napi(
    ts_args_type = "host: (request: HostRequest) => Promise<HostReply>, options: object | undefined | null, hostWaits: boolean"
)]
pub fn page_tools(
    host: Function<'_, HostRequest, Promise<HostReply>>,
    options: Option<Unknown<'_>>,
    host_waits: bool,
) -> Result<NativeToolSet> {
    let cfg: PageToolsConfig = crate::options::from_js("pageTools options", options)?;
    let func: HostFn = host.build_threadsafe_function().weak::<true>().build()?;
    let host = Arc::new(JsHost {
        func,
        has_wait: host_waits,
    });
    Ok(NativeToolSet {
        tools: agent_tools::page_tools_with(host, cfg),
    })
}
