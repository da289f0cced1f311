//! A BrowserHost implemented in JavaScript: the JS layer wraps the user's host object into one
//! function that answers every request with a promise of a reply object.

use std::sync::Arc;
use std::time::Duration;

use agent_core::async_trait;
use agent_tools::{BrowserHost, DialogInfo, HostError, Screenshot, ScreenshotRequest, TabHistory, TabInfo};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;

use crate::callbacks::Callback;

/// One request to the JS BrowserHost. Only the fields of its `op` are set.
#[derive(Default)]
#[napi(object)]
pub struct HostRequest {
    /// `evaluate`, `navigate`, `waitSettled`, `tabs`, `openTab`, `closeTab`, `activateTab`,
    /// `resolveAddress`, `hover`, `pressKey`, `dialog`, `answerDialog`, `setFiles` or
    /// `screenshot`.
    pub op: String,
    /// The tab (absent: the active tab).
    pub tab: Option<String>,
    /// The expression (`evaluate`), URL (`navigate`, `openTab`), text (`resolveAddress`), key
    /// (`pressKey`), prompt answer (`answerDialog`) or file input expression (`setFiles`).
    pub arg: Option<String>,
    /// The timeout (`waitSettled`), in ms.
    pub timeout_ms: Option<f64>,
    /// The pointer position in CSS pixels from the viewport's top left (`hover`).
    pub x: Option<f64>,
    /// See `x`.
    pub y: Option<f64>,
    /// The modifier keys held (`pressKey`): "Alt", "Control", "Meta", "Shift".
    pub modifiers: Option<Vec<String>>,
    /// OK (true) or Cancel (`answerDialog`).
    pub accept: Option<bool>,
    /// Absolute paths of the files to choose (`setFiles`).
    pub paths: Option<Vec<String>>,
    /// What to capture (`screenshot`): `{ kind: 'viewport' }`, `{ kind: 'full_page' }` or
    /// `{ kind: 'region', x, y, width, height }` (CSS px from the viewport's top left).
    #[napi(
        ts_type = "{ kind: 'viewport' } | { kind: 'full_page' } | { kind: 'region', x: number, y: number, width: number, height: number }"
    )]
    pub area: Option<Value>,
    /// The widest image allowed, in pixels (`screenshot`).
    pub max_width: Option<u32>,
    /// The tallest image allowed, in pixels (`screenshot`).
    pub max_height: Option<u32>,
}

impl HostRequest {
    fn new(op: &str, tab: Option<&str>) -> Self {
        HostRequest {
            op: op.to_owned(),
            tab: tab.map(str::to_owned),
            ..HostRequest::default()
        }
    }

    fn arg(mut self, arg: Option<&str>) -> Self {
        self.arg = arg.map(str::to_owned);
        self
    }
}

/// The JS host wrapper's answer: `{ ok: value }`, `{ bytes: Buffer }` (a screenshot) or
/// `{ error: { code, message } }`.
#[napi(object)]
pub struct HostReply {
    /// The host method's result (plain JSON data; absent: null).
    pub ok: Option<Value>,
    /// The image a `screenshot` returned, as it came (no base64 text in between).
    pub bytes: Option<Buffer>,
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

/// Which optional methods the JS host implements; the others answer as the `BrowserHost`
/// trait's defaults do (not supported, or no dialog), without a call into JS.
#[derive(Default, Clone, Copy)]
#[napi(object)]
pub struct HostMethods {
    /// `waitSettled` (otherwise a settle script is evaluated).
    pub wait_settled: Option<bool>,
    /// `hover` (page_hover).
    pub hover: Option<bool>,
    /// `pressKey` (page_press_key).
    pub press_key: Option<bool>,
    /// `dialog` (otherwise the host reports no dialog).
    pub dialog: Option<bool>,
    /// `answerDialog` (page_dialog).
    pub answer_dialog: Option<bool>,
    /// `setFiles` (page_upload).
    pub set_files: Option<bool>,
    /// `screenshot` (page_screenshot, page_read's screenshot).
    pub screenshot: Option<bool>,
    /// `history` (otherwise page_back and page_forward name no host).
    pub history: Option<bool>,
}

/// The JS host wrapper as the native side calls it. It always answers a promise (a reply
/// object would be ambiguous with a promise: every field of [`HostReply`] is optional).
pub type HostFn = Callback<HostRequest, Promise<HostReply>>;

/// A BrowserHost implemented in JavaScript.
pub struct JsHost {
    func: HostFn,
    has: HostMethods,
}

/// What the model is told when the JS host lacks an optional method (the Python binding's
/// wording, with the JS method's name).
fn unsupported(method: &str, ability: &str, tool: &str) -> HostError {
    HostError::Other(format!(
        "not supported by this host: it cannot {ability} (the host has no `{method}` method), so {tool} is unavailable here"
    ))
}

/// The media type of encoded image bytes: JPEG by its marker, PNG otherwise (the page tools
/// check the header and refuse anything else).
fn media_type(data: &[u8]) -> &'static str {
    if data.starts_with(&[0xFF, 0xD8]) {
        "image/jpeg"
    } else {
        "image/png"
    }
}

impl JsHost {
    /// Sends one request and reads the reply's error, if any.
    async fn reply(&self, request: HostRequest) -> std::result::Result<HostReply, HostError> {
        let tab = request.tab.clone();
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
                "no_such_tab" => HostError::NoSuchTab(tab.unwrap_or_default()),
                _ => HostError::Other(message),
            });
        }
        Ok(reply)
    }

    /// Sends one request; the reply's JSON value.
    async fn ask(&self, request: HostRequest) -> std::result::Result<Value, HostError> {
        let mut value = self.reply(request).await?.ok.unwrap_or(Value::Null);
        crate::convert::integral_numbers(&mut value);
        Ok(value)
    }

    /// What the optional method `op(tab)` answers: a record (camelCase keys), or `None` when
    /// it answers null or the host lacks the method (`has`).
    async fn optional_record<T: serde::de::DeserializeOwned>(
        &self,
        has: Option<bool>,
        op: &str,
        tab: Option<&str>,
    ) -> std::result::Result<Option<T>, HostError> {
        if has != Some(true) {
            return Ok(None);
        }
        match self.ask(HostRequest::new(op, tab)).await? {
            Value::Null => Ok(None),
            v => serde_json::from_value(crate::convert::snake_keys(v))
                .map(Some)
                .map_err(|e| HostError::Other(format!("the host's {op}() answered a malformed {op}: {e}"))),
        }
    }
}

fn tab_info(v: Value) -> std::result::Result<TabInfo, HostError> {
    serde_json::from_value(v).map_err(|e| HostError::Other(format!("the host answered a malformed tab: {e}")))
}

#[async_trait]
impl BrowserHost for JsHost {
    async fn evaluate(&self, tab: Option<&str>, expression: &str) -> std::result::Result<Value, HostError> {
        self.ask(HostRequest::new("evaluate", tab).arg(Some(expression))).await
    }

    async fn navigate(&self, tab: Option<&str>, url: &str) -> std::result::Result<(), HostError> {
        self.ask(HostRequest::new("navigate", tab).arg(Some(url)))
            .await
            .map(drop)
    }

    async fn wait_settled(&self, tab: Option<&str>, timeout: Duration) -> std::result::Result<(), HostError> {
        if self.has.wait_settled == Some(true) {
            let request = HostRequest {
                timeout_ms: Some(timeout.as_millis() as f64),
                ..HostRequest::new("waitSettled", tab)
            };
            self.ask(request).await.map(drop)
        } else {
            agent_tools::settle_with_script(self, tab, timeout).await
        }
    }

    async fn tabs(&self) -> std::result::Result<Vec<TabInfo>, HostError> {
        let v = self.ask(HostRequest::new("tabs", None)).await?;
        match v {
            Value::Array(items) => items.into_iter().map(tab_info).collect(),
            _ => Err(HostError::Other("the host's tabs() must return an array".into())),
        }
    }

    async fn open_tab(&self, url: Option<&str>) -> std::result::Result<TabInfo, HostError> {
        tab_info(self.ask(HostRequest::new("openTab", None).arg(url)).await?)
    }

    async fn close_tab(&self, tab: &str) -> std::result::Result<(), HostError> {
        self.ask(HostRequest::new("closeTab", Some(tab))).await.map(drop)
    }

    async fn activate_tab(&self, tab: &str) -> std::result::Result<(), HostError> {
        self.ask(HostRequest::new("activateTab", Some(tab))).await.map(drop)
    }

    async fn resolve_address(&self, input: &str) -> std::result::Result<Option<String>, HostError> {
        let v = self
            .ask(HostRequest::new("resolveAddress", None).arg(Some(input)))
            .await?;
        Ok(v.as_str().map(str::to_owned))
    }

    async fn hover(&self, tab: Option<&str>, x: f64, y: f64) -> std::result::Result<(), HostError> {
        if self.has.hover != Some(true) {
            return Err(unsupported("hover", "move a real mouse pointer", "page_hover"));
        }
        let request = HostRequest {
            x: Some(x),
            y: Some(y),
            ..HostRequest::new("hover", tab)
        };
        self.ask(request).await.map(drop)
    }

    async fn press_key(
        &self,
        tab: Option<&str>,
        key: &str,
        modifiers: &[String],
    ) -> std::result::Result<(), HostError> {
        if self.has.press_key != Some(true) {
            return Err(unsupported("pressKey", "send real key presses", "page_press_key"));
        }
        let request = HostRequest {
            modifiers: Some(modifiers.to_vec()),
            ..HostRequest::new("pressKey", tab).arg(Some(key))
        };
        self.ask(request).await.map(drop)
    }

    async fn set_files(
        &self,
        tab: Option<&str>,
        element: &str,
        paths: &[String],
    ) -> std::result::Result<(), HostError> {
        if self.has.set_files != Some(true) {
            return Err(unsupported("setFiles", "choose files for a file input", "page_upload"));
        }
        let request = HostRequest {
            paths: Some(paths.to_vec()),
            ..HostRequest::new("setFiles", tab).arg(Some(element))
        };
        self.ask(request).await.map(drop)
    }

    async fn dialog(&self, tab: Option<&str>) -> std::result::Result<Option<DialogInfo>, HostError> {
        self.optional_record(self.has.dialog, "dialog", tab).await
    }

    async fn history(&self, tab: Option<&str>) -> std::result::Result<Option<TabHistory>, HostError> {
        self.optional_record(self.has.history, "history", tab).await
    }

    async fn answer_dialog(
        &self,
        tab: Option<&str>,
        accept: bool,
        text: Option<&str>,
    ) -> std::result::Result<(), HostError> {
        if self.has.answer_dialog != Some(true) {
            return Err(unsupported("answerDialog", "answer dialogs", "page_dialog"));
        }
        let request = HostRequest {
            accept: Some(accept),
            ..HostRequest::new("answerDialog", tab).arg(text)
        };
        self.ask(request).await.map(drop)
    }

    async fn screenshot(
        &self,
        tab: Option<&str>,
        request: &ScreenshotRequest,
    ) -> std::result::Result<Screenshot, HostError> {
        if self.has.screenshot != Some(true) {
            return Err(unsupported(
                "screenshot",
                "capture the page as an image",
                "page_screenshot",
            ));
        }
        let area = serde_json::to_value(request.area)
            .map_err(|e| HostError::Other(format!("the screenshot area could not be written: {e}")))?;
        let ask = HostRequest {
            area: Some(area),
            max_width: Some(request.max_width),
            max_height: Some(request.max_height),
            ..HostRequest::new("screenshot", tab)
        };
        let Some(bytes) = self.reply(ask).await?.bytes else {
            return Err(HostError::Other(
                "the host's screenshot() returned no image bytes (a Buffer or Uint8Array of PNG or JPEG)".into(),
            ));
        };
        let data = bytes.to_vec();
        Ok(Screenshot {
            media_type: media_type(&data).to_owned(),
            data,
        })
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
    /// Wraps the JS host function. `methods` says which optional methods the JS host
    /// implements.
    #[napi(
        constructor,
        ts_args_type = "host: (request: HostRequest) => Promise<HostReply>, methods: HostMethods"
    )]
    pub fn new(host: Function<'_, HostRequest, Promise<HostReply>>, methods: HostMethods) -> Result<Self> {
        // Weak: a host never keeps the process alive on its own.
        let func: HostFn = host.build_threadsafe_function().weak::<true>().build()?;
        Ok(NativeBrowserHost {
            inner: Arc::new(JsHost { func, has: methods }),
        })
    }
}

impl NativeBrowserHost {
    /// The host as the page tools take it.
    pub(crate) fn host(&self) -> Arc<dyn BrowserHost> {
        self.inner.clone()
    }
}
