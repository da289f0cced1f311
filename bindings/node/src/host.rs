//! A BrowserHost implemented in JavaScript: the JS layer wraps the user's host object into one
//! function that answers every request with a promise of a reply object.

use std::sync::Arc;
use std::time::Duration;

use agent_core::async_trait;
use agent_tools::{BrowserHost, HostError, TabInfo};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;

use crate::callbacks::Callback;

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

/// A JS BrowserHost as the native side holds it: one per `pageTools(host)` call or hub, shared
/// by every set of page tools made over it.
#[napi]
pub struct NativeBrowserHost {
    pub(crate) inner: Arc<JsHost>,
}

#[napi]
impl NativeBrowserHost {
    /// Wraps the JS host function. `hostWaits` says whether the JS host implements
    /// `waitSettled` (otherwise a settle script is evaluated).
    #[napi(
        constructor,
        ts_args_type = "host: (request: HostRequest) => Promise<HostReply>, hostWaits: boolean"
    )]
    pub fn new(host: Function<'_, HostRequest, Promise<HostReply>>, host_waits: bool) -> Result<Self> {
        // Weak: a host never keeps the process alive on its own.
        let func: HostFn = host.build_threadsafe_function().weak::<true>().build()?;
        Ok(NativeBrowserHost {
            inner: Arc::new(JsHost {
                func,
                has_wait: host_waits,
            }),
        })
    }
}

impl NativeBrowserHost {
    /// The host as the page tools take it.
    pub(crate) fn host(&self) -> Arc<dyn BrowserHost> {
        self.inner.clone()
    }
}
