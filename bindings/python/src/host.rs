//! A `BrowserHost` written in Python, and the Rust page tools over it (or over a `CdpHost`).

use std::sync::Arc;
use std::time::Duration;

use agent_core::async_trait;
use agent_tools::{
    BrowserHost, DialogInfo, HostError, PageTab, PageToolsConfig, Screenshot, ScreenshotRequest, TabHistory, TabInfo,
    page_tools_for_tab_with, settle_with_script,
};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use serde_json::Value;

use crate::cdp::NativeCdpHost;
use crate::convert::py_to_json;
use crate::provider::NativeTool;
use crate::pyloop::{Callback, Loops};

/// The methods of a Python host object, each a sync or async callable.
struct PyHost {
    evaluate: Callback,
    navigate: Callback,
    wait_settled: Option<Callback>,
    tabs: Callback,
    open_tab: Callback,
    close_tab: Callback,
    activate_tab: Callback,
    resolve_address: Option<Callback>,
    hover: Option<Callback>,
    press_key: Option<Callback>,
    dialog: Option<Callback>,
    answer_dialog: Option<Callback>,
    set_files: Option<Callback>,
    screenshot: Option<Callback>,
    history: Option<Callback>,
    loops: Arc<Loops>,
}

pub(crate) fn method(host: &Bound<'_, PyAny>, name: &str, required: bool) -> PyResult<Option<Callback>> {
    let inspect = host.py().import("inspect")?;
    match host.getattr(name) {
        Ok(f) if !f.is_none() => {
            let is_async = inspect.call_method1("iscoroutinefunction", (&f,))?.extract::<bool>()?;
            Ok(Some(Callback {
                func: Arc::new(f.unbind()),
                is_async,
            }))
        }
        _ if required => Err(crate::errors::config_error(format!(
            "the browser host has no `{name}` method (see agent_core.BrowserHost)"
        ))),
        _ => Ok(None),
    }
}

fn host_error(py: Python<'_>, err: PyErr) -> HostError {
    let value = err.value(py);
    let text = value.str().map(|s| s.to_string()).unwrap_or_default();
    let kind = value
        .getattr("host_kind")
        .and_then(|k| k.extract::<String>())
        .unwrap_or_default();
    let is = |name: &str| {
        py.import("builtins")
            .and_then(|b| b.getattr(name))
            .and_then(|cls| value.is_instance(&cls))
            .unwrap_or(false)
    };
    match kind.as_str() {
        "disconnected" => HostError::Disconnected(text),
        "timeout" => HostError::Timeout(text),
        "script" => HostError::Script(text),
        "navigation" => HostError::Navigation(text),
        "no_such_tab" => HostError::NoSuchTab(text),
        _ if is("TimeoutError") => HostError::Timeout(if text.is_empty() { "timed out".into() } else { text }),
        _ if is("ConnectionError") => HostError::Disconnected(text),
        _ => {
            let type_name = value.get_type().name().map(|n| n.to_string()).unwrap_or_default();
            HostError::Other(if text.is_empty() {
                type_name
            } else {
                format!("{type_name}: {text}")
            })
        }
    }
}

impl PyHost {
    async fn call<F>(&self, callback: &Callback, make_args: F) -> Result<Value, HostError>
    where
        F: for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>> + Send + 'static,
    {
        callback
            .call_on(self.loops.latest(), make_args, |py, result| match result {
                Ok(v) => py_to_json(&v).map_err(|e| host_error(py, e)),
                Err(e) => Err(host_error(py, e)),
            })
            .await
            .unwrap_or_else(|e| Err(HostError::Disconnected(e)))
    }
}

fn opt(py: Python<'_>, s: Option<String>) -> Bound<'_, PyAny> {
    match s {
        Some(s) => pyo3::types::PyString::new(py, &s).into_any(),
        None => py.None().into_bound(py),
    }
}

fn tab_info(v: Value) -> Result<TabInfo, HostError> {
    serde_json::from_value(v).map_err(|e| HostError::Other(format!("the host returned an invalid tab: {e}")))
}

#[async_trait]
impl BrowserHost for PyHost {
    async fn evaluate(&self, tab: Option<&str>, expression: &str) -> Result<Value, HostError> {
        let (tab, expression) = (tab.map(str::to_owned), expression.to_owned());
        self.call(&self.evaluate, move |py| {
            PyTuple::new(
                py,
                [opt(py, tab), pyo3::types::PyString::new(py, &expression).into_any()],
            )
        })
        .await
    }

    async fn navigate(&self, tab: Option<&str>, url: &str) -> Result<(), HostError> {
        let (tab, url) = (tab.map(str::to_owned), url.to_owned());
        self.call(&self.navigate, move |py| {
            PyTuple::new(py, [opt(py, tab), pyo3::types::PyString::new(py, &url).into_any()])
        })
        .await
        .map(drop)
    }

    async fn wait_settled(&self, tab: Option<&str>, timeout: Duration) -> Result<(), HostError> {
        match &self.wait_settled {
            Some(cb) => {
                let tab = tab.map(str::to_owned);
                let secs = timeout.as_secs_f64();
                self.call(cb, move |py| {
                    PyTuple::new(py, [opt(py, tab), pyo3::types::PyFloat::new(py, secs).into_any()])
                })
                .await
                .map(drop)
            }
            None => settle_with_script(self, tab, timeout).await,
        }
    }

    async fn tabs(&self) -> Result<Vec<TabInfo>, HostError> {
        let v = self.call(&self.tabs, |py| Ok(PyTuple::empty(py))).await?;
        serde_json::from_value(v).map_err(|e| HostError::Other(format!("the host returned invalid tabs: {e}")))
    }

    async fn open_tab(&self, url: Option<&str>) -> Result<TabInfo, HostError> {
        let url = url.map(str::to_owned);
        tab_info(
            self.call(&self.open_tab, move |py| PyTuple::new(py, [opt(py, url)]))
                .await?,
        )
    }

    async fn close_tab(&self, tab: &str) -> Result<(), HostError> {
        let tab = tab.to_owned();
        self.call(&self.close_tab, move |py| PyTuple::new(py, [tab]))
            .await
            .map(drop)
    }

    async fn activate_tab(&self, tab: &str) -> Result<(), HostError> {
        let tab = tab.to_owned();
        self.call(&self.activate_tab, move |py| PyTuple::new(py, [tab]))
            .await
            .map(drop)
    }

    async fn resolve_address(&self, input: &str) -> Result<Option<String>, HostError> {
        let Some(cb) = &self.resolve_address else {
            return Ok(None);
        };
        let input = input.to_owned();
        match self.call(cb, move |py| PyTuple::new(py, [input])).await? {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s)),
            other => Err(HostError::Other(format!(
                "resolve_address returned {other}, not a string"
            ))),
        }
    }

    async fn hover(&self, tab: Option<&str>, x: f64, y: f64) -> Result<(), HostError> {
        let Some(cb) = &self.hover else {
            return Err(unsupported("hover", "move a real mouse pointer", "page_hover"));
        };
        let tab = tab.map(str::to_owned);
        self.call(cb, move |py| {
            PyTuple::new(
                py,
                [
                    opt(py, tab),
                    pyo3::types::PyFloat::new(py, x).into_any(),
                    pyo3::types::PyFloat::new(py, y).into_any(),
                ],
            )
        })
        .await
        .map(drop)
    }

    async fn dialog(&self, tab: Option<&str>) -> Result<Option<DialogInfo>, HostError> {
        self.open_dialog(tab).await
    }

    async fn history(&self, tab: Option<&str>) -> Result<Option<TabHistory>, HostError> {
        self.optional_record(self.history.as_ref(), tab, "history").await
    }

    async fn answer_dialog(&self, tab: Option<&str>, accept: bool, text: Option<&str>) -> Result<(), HostError> {
        self.answer_open_dialog(tab, accept, text).await
    }

    async fn set_files(&self, tab: Option<&str>, element: &str, paths: &[String]) -> Result<(), HostError> {
        self.choose_files(tab, element, paths).await
    }

    async fn screenshot(&self, tab: Option<&str>, request: &ScreenshotRequest) -> Result<Screenshot, HostError> {
        self.capture(tab, request).await
    }

    async fn press_key(&self, tab: Option<&str>, key: &str, modifiers: &[String]) -> Result<(), HostError> {
        let Some(cb) = &self.press_key else {
            return Err(unsupported("press_key", "send real key presses", "page_press_key"));
        };
        let (tab, key, modifiers) = (tab.map(str::to_owned), key.to_owned(), modifiers.to_vec());
        self.call(cb, move |py| {
            PyTuple::new(
                py,
                [
                    opt(py, tab),
                    pyo3::types::PyString::new(py, &key).into_any(),
                    pyo3::types::PyList::new(py, modifiers)?.into_any(),
                ],
            )
        })
        .await
        .map(drop)
    }
}

/// The capture half of a Python host: `set_files(tab, element, paths)` puts files into the file
/// input `element` (a JavaScript expression) evaluates to; `screenshot(tab, area, max_width,
/// max_height)` returns PNG or JPEG `bytes` within the bounds, `area` being a dict (`kind`:
/// `viewport`, `full_page`, or `region` with `x`, `y`, `width`, `height`).
impl PyHost {
    async fn choose_files(&self, tab: Option<&str>, element: &str, paths: &[String]) -> Result<(), HostError> {
        let Some(cb) = &self.set_files else {
            return Err(unsupported("set_files", "choose files for a file input", "page_upload"));
        };
        let (tab, element, paths) = (tab.map(str::to_owned), element.to_owned(), paths.to_vec());
        self.call(cb, move |py| {
            PyTuple::new(
                py,
                [
                    opt(py, tab),
                    pyo3::types::PyString::new(py, &element).into_any(),
                    pyo3::types::PyList::new(py, paths)?.into_any(),
                ],
            )
        })
        .await
        .map(drop)
    }

    async fn capture(&self, tab: Option<&str>, request: &ScreenshotRequest) -> Result<Screenshot, HostError> {
        let Some(cb) = &self.screenshot else {
            return Err(unsupported(
                "screenshot",
                "capture the page as an image",
                "page_screenshot",
            ));
        };
        let tab = tab.map(str::to_owned);
        let (area, max_width, max_height) = (
            crate::convert::to_json(&request.area),
            request.max_width,
            request.max_height,
        );
        let data = cb
            .call_on(
                self.loops.latest(),
                move |py| {
                    PyTuple::new(
                        py,
                        [
                            opt(py, tab),
                            crate::convert::json_to_py(py, &area)?,
                            max_width.into_pyobject(py)?.into_any(),
                            max_height.into_pyobject(py)?.into_any(),
                        ],
                    )
                },
                |py, result| match result {
                    Ok(v) => image_bytes(&v),
                    Err(e) => Err(host_error(py, e)),
                },
            )
            .await
            .unwrap_or_else(|e| Err(HostError::Disconnected(e)))?;
        let media_type = if data.starts_with(&[0xFF, 0xD8]) {
            "image/jpeg"
        } else {
            "image/png"
        };
        Ok(Screenshot {
            media_type: media_type.into(),
            data,
        })
    }
}

/// The bytes a host's `screenshot` returned (`bytes`, `bytearray` or `memoryview`).
fn image_bytes(v: &Bound<'_, PyAny>) -> Result<Vec<u8>, HostError> {
    if let Ok(b) = v.cast::<pyo3::types::PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(b) = v.cast::<pyo3::types::PyByteArray>() {
        return Ok(b.to_vec());
    }
    v.call_method0("tobytes")
        .and_then(|b| b.cast_into::<pyo3::types::PyBytes>().map_err(Into::into))
        .map(|b| b.as_bytes().to_vec())
        .map_err(|_| {
            let kind = v.get_type().name().map(|n| n.to_string()).unwrap_or_default();
            HostError::Other(format!("the host's screenshot returned {kind}, not the image's bytes"))
        })
}

/// The dialog half of a Python host: `dialog(tab)` returns None or a dict with `kind`,
/// `message` and `default_text`; `answer_dialog(tab, accept, text)` presses OK or Cancel.
impl PyHost {
    async fn open_dialog(&self, tab: Option<&str>) -> Result<Option<DialogInfo>, HostError> {
        self.optional_record(self.dialog.as_ref(), tab, "dialog").await
    }

    /// What an optional method `name(tab)` returns: a record, or `None` when it returns None
    /// or the host lacks the method.
    async fn optional_record<T: serde::de::DeserializeOwned>(
        &self,
        method: Option<&Callback>,
        tab: Option<&str>,
        name: &str,
    ) -> Result<Option<T>, HostError> {
        let Some(cb) = method else {
            return Ok(None);
        };
        let tab = tab.map(str::to_owned);
        match self.call(cb, move |py| PyTuple::new(py, [opt(py, tab)])).await? {
            Value::Null => Ok(None),
            v => serde_json::from_value(v)
                .map(Some)
                .map_err(|e| HostError::Other(format!("{name} returned an invalid {name}: {e}"))),
        }
    }

    async fn answer_open_dialog(&self, tab: Option<&str>, accept: bool, text: Option<&str>) -> Result<(), HostError> {
        let Some(cb) = &self.answer_dialog else {
            return Err(unsupported("answer_dialog", "answer dialogs", "page_dialog"));
        };
        let (tab, text) = (tab.map(str::to_owned), text.map(str::to_owned));
        self.call(cb, move |py| {
            PyTuple::new(
                py,
                [
                    opt(py, tab),
                    pyo3::types::PyBool::new(py, accept).to_owned().into_any(),
                    opt(py, text),
                ],
            )
        })
        .await
        .map(drop)
    }
}

/// What the model is told when the Python host lacks an optional input method.
fn unsupported(method: &str, ability: &str, tool: &str) -> HostError {
    HostError::Other(format!(
        "not supported by this host: it cannot {ability} (the host has no `{method}` method), so {tool} is unavailable here"
    ))
}

/// The host behind the page tools: a `CdpHost`, or a Python object with the `BrowserHost`
/// methods. A Python host's async methods run on the asyncio loop running now, so this is
/// called from inside that loop.
pub fn browser_host(py: Python<'_>, host: &Bound<'_, PyAny>) -> PyResult<Arc<dyn BrowserHost>> {
    if let Ok(cdp) = host.cast::<NativeCdpHost>() {
        return Ok(Arc::new(cdp.get().inner.clone()));
    }
    let loops = Arc::new(Loops::default());
    loops.remember_current(py);
    let req = |name| method(host, name, true).and_then(|m| m.ok_or_else(|| crate::errors::config_error(name)));
    Ok(Arc::new(PyHost {
        evaluate: req("evaluate")?,
        navigate: req("navigate")?,
        wait_settled: method(host, "wait_settled", false)?,
        tabs: req("tabs")?,
        open_tab: req("open_tab")?,
        close_tab: req("close_tab")?,
        activate_tab: req("activate_tab")?,
        resolve_address: method(host, "resolve_address", false)?,
        hover: method(host, "hover", false)?,
        press_key: method(host, "press_key", false)?,
        dialog: method(host, "dialog", false)?,
        answer_dialog: method(host, "answer_dialog", false)?,
        set_files: method(host, "set_files", false)?,
        screenshot: method(host, "screenshot", false)?,
        history: method(host, "history", false)?,
        loops,
    }))
}

/// The page and tab tools (page_read, page_click and the other page_* tools, tabs_list,
/// tab_open, tab_activate, tab_close: docs/page-tools.md) over a Python host or a `CdpHost`,
/// configured by a PageToolsConfig dict (`search_template`, `settle_timeout_ms`, `max_chars`,
/// `max_elements`, `scrape_loopback_http`, `scrape`). They act on the active tab, or, given
/// `tab` (a host tab id), on that tab whatever tab is active.
#[pyfunction]
#[pyo3(signature = (host, config=None, tab=None))]
pub fn page_tools(
    py: Python<'_>,
    host: &Bound<'_, PyAny>,
    config: Option<&Bound<'_, PyAny>>,
    tab: Option<String>,
) -> PyResult<Vec<NativeTool>> {
    let cfg = crate::convert::options::<PageToolsConfig>("PageToolsConfig", config)?;
    let browser_host = browser_host(py, host)?;
    let bound = match tab {
        Some(id) if id.trim().is_empty() => {
            return Err(crate::errors::config_error(
                "page_tools(tab=...) got an empty tab id: pass the id of one of the host's tabs (TabInfo.id), or leave tab out for the active tab",
            ));
        }
        Some(id) => PageTab::Host(id),
        None => PageTab::Active,
    };
    Ok(page_tools_for_tab_with(browser_host, bound, cfg)
        .into_iter()
        .map(NativeTool::new)
        .collect())
}
