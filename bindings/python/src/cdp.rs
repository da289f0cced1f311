//! The CDP host: headless Chromium driven over the DevTools protocol (`agent_tools::CdpHost`).

use std::time::Duration;

use agent_tools::{BrowserHost, CdpConfig, CdpHost, HostError, TabInfo};
use pyo3::prelude::*;

use crate::convert::{Json, to_json};
use crate::runtime::spawn_py;

/// Maps a host error to `agent_core.HostError` with its `host_kind`.
pub fn host_error(e: HostError) -> PyErr {
    let kind = match &e {
        HostError::Disconnected(_) => "disconnected",
        HostError::Timeout(_) => "timeout",
        HostError::Script(_) => "script",
        HostError::Navigation(_) => "navigation",
        HostError::NoSuchTab(_) => "no_such_tab",
        HostError::Other(_) => "other",
    };
    let message = e.to_string();
    crate::interpreter::attach(|py| {
        let build = || -> PyResult<PyErr> {
            let class = py.import("agent_core.errors")?.getattr("HostError")?;
            let exc = class.call1((message.clone(), kind))?;
            Ok(PyErr::from_value(exc))
        };
        build().unwrap_or_else(|_| pyo3::exceptions::PyRuntimeError::new_err(message.clone()))
    })
    .unwrap_or_else(crate::interpreter::shutting_down)
}

/// A Chromium browser driven over CDP (launched by this process, or connected to).
#[pyclass(module = "agent_core._native", name = "CdpHost", frozen)]
pub struct NativeCdpHost {
    pub(crate) inner: CdpHost,
}

#[pymethods]
impl NativeCdpHost {
    /// Launches the browser headless with a fresh profile and the closed-network flags, as a
    /// CdpConfig dict says (`executable`, `extra_args`, `window_size`, `launch_timeout_ms`,
    /// `call_timeout_ms`, `kill_on_parent_exit`, `sandbox`). Awaitable.
    #[staticmethod]
    #[pyo3(signature = (config=None))]
    fn launch<'py>(py: Python<'py>, config: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let config = crate::convert::options::<CdpConfig>("CdpConfig", config)?;
        spawn_py(py, async move {
            let inner = CdpHost::launch(config).await.map_err(host_error)?;
            Ok(NativeCdpHost { inner })
        })
    }

    /// Connects to a running browser by its `ws://` address (or `http://host:port`); each
    /// call may take `call_timeout_ms` (CdpConfig's default when None). Awaitable.
    #[staticmethod]
    #[pyo3(signature = (url, call_timeout_ms=None))]
    fn connect<'py>(py: Python<'py>, url: String, call_timeout_ms: Option<f64>) -> PyResult<Bound<'py, PyAny>> {
        let call_timeout = match call_timeout_ms {
            Some(ms) => crate::tool::millis(ms)?,
            None => CdpConfig::default().call_timeout,
        };
        spawn_py(py, async move {
            let inner = CdpHost::connect(&url, call_timeout).await.map_err(host_error)?;
            Ok(NativeCdpHost { inner })
        })
    }

    /// Closes the browser (when launched by this host) and removes its profile. Awaitable.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let inner = self.inner.clone();
        spawn_py(py, async move { inner.close().await.map_err(host_error) })
    }

    /// The browser's DevTools websocket address.
    #[getter]
    fn ws_url(&self) -> String {
        self.inner.ws_url().to_string()
    }

    /// The browser's process id when this host launched it.
    #[getter]
    fn pid(&self) -> Option<u32> {
        self.inner.pid()
    }

    /// Whether the browser is still reachable as far as this host knows.
    fn is_alive(&self) -> bool {
        self.inner.is_alive()
    }

    // The browser's side of the BrowserHost protocol, so that Python code can open, list and
    // close the tabs it wires to a tab hub, and look into a page.

    /// The open tabs (TabInfo dicts). Awaitable.
    fn tabs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let inner = self.inner.clone();
        spawn_py(py, async move {
            Ok(Json(to_json(&inner.tabs().await.map_err(host_error)?)))
        })
    }

    /// Opens a tab (at `url`, or blank) and makes it active; returns its TabInfo. Awaitable.
    #[pyo3(signature = (url=None))]
    fn open_tab<'py>(&self, py: Python<'py>, url: Option<String>) -> PyResult<Bound<'py, PyAny>> {
        let inner = self.inner.clone();
        spawn_py(py, async move {
            let tab: TabInfo = inner.open_tab(url.as_deref()).await.map_err(host_error)?;
            Ok(Json(to_json(&tab)))
        })
    }

    /// Closes a tab. Awaitable.
    fn close_tab<'py>(&self, py: Python<'py>, tab: String) -> PyResult<Bound<'py, PyAny>> {
        let inner = self.inner.clone();
        spawn_py(py, async move { inner.close_tab(&tab).await.map_err(host_error) })
    }

    /// Makes a tab the active one. Awaitable.
    fn activate_tab<'py>(&self, py: Python<'py>, tab: String) -> PyResult<Bound<'py, PyAny>> {
        let inner = self.inner.clone();
        spawn_py(py, async move { inner.activate_tab(&tab).await.map_err(host_error) })
    }

    /// Evaluates a JavaScript expression in a tab (None: the active one); returns its value as
    /// JSON data. Awaitable.
    fn evaluate<'py>(&self, py: Python<'py>, tab: Option<String>, expression: String) -> PyResult<Bound<'py, PyAny>> {
        let inner = self.inner.clone();
        spawn_py(py, async move {
            Ok(Json(
                inner.evaluate(tab.as_deref(), &expression).await.map_err(host_error)?,
            ))
        })
    }

    /// Loads `url` in a tab (None: the active one). Awaitable.
    fn navigate<'py>(&self, py: Python<'py>, tab: Option<String>, url: String) -> PyResult<Bound<'py, PyAny>> {
        let inner = self.inner.clone();
        spawn_py(py, async move {
            inner.navigate(tab.as_deref(), &url).await.map_err(host_error)
        })
    }

    /// Moves the mouse pointer to `(x, y)` (CSS pixels in the tab's viewport) as real input.
    /// Awaitable.
    fn hover<'py>(&self, py: Python<'py>, tab: Option<String>, x: f64, y: f64) -> PyResult<Bound<'py, PyAny>> {
        let inner = self.inner.clone();
        spawn_py(py, async move {
            inner.hover(tab.as_deref(), x, y).await.map_err(host_error)
        })
    }

    /// Presses one key (a DOM key value) with `modifiers` held, as real keyboard input to the
    /// tab's focused element. Awaitable.
    fn press_key<'py>(
        &self,
        py: Python<'py>,
        tab: Option<String>,
        key: String,
        modifiers: Vec<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let inner = self.inner.clone();
        spawn_py(py, async move {
            inner
                .press_key(tab.as_deref(), &key, &modifiers)
                .await
                .map_err(host_error)
        })
    }

    /// The JavaScript dialog open in a tab (a dict: `kind`, `message`, `default_text`), or
    /// None. Awaitable.
    fn dialog<'py>(&self, py: Python<'py>, tab: Option<String>) -> PyResult<Bound<'py, PyAny>> {
        let inner = self.inner.clone();
        spawn_py(py, async move {
            Ok(Json(to_json(&inner.dialog(tab.as_deref()).await.map_err(host_error)?)))
        })
    }

    /// Answers a tab's open dialog: OK (`accept`, with `text` for a prompt) or Cancel.
    /// Awaitable.
    #[pyo3(signature = (tab, accept, text=None))]
    fn answer_dialog<'py>(
        &self,
        py: Python<'py>,
        tab: Option<String>,
        accept: bool,
        text: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let inner = self.inner.clone();
        spawn_py(py, async move {
            inner
                .answer_dialog(tab.as_deref(), accept, text.as_deref())
                .await
                .map_err(host_error)
        })
    }

    /// Captures a tab (None: the active one) as PNG `bytes` no larger than `max_width` x
    /// `max_height`: `area` is `{"kind": "viewport"}` (the default), `{"kind": "full_page"}`,
    /// or `{"kind": "region", "x", "y", "width", "height"}` in CSS pixels from the viewport's
    /// top left. Awaitable.
    #[pyo3(signature = (tab=None, area=None, max_width=1280, max_height=1280))]
    fn screenshot<'py>(
        &self,
        py: Python<'py>,
        tab: Option<String>,
        area: Option<&Bound<'py, PyAny>>,
        max_width: u32,
        max_height: u32,
    ) -> PyResult<Bound<'py, PyAny>> {
        let area = match area {
            None => agent_tools::ScreenshotArea::Viewport,
            Some(a) => serde_json::from_value(crate::convert::py_to_json(a)?).map_err(|e| {
                crate::errors::config_error(format!(
                    "screenshot area: {e}; give {{\"kind\": \"viewport\"}}, {{\"kind\": \"full_page\"}} or {{\"kind\": \"region\", \"x\": ..., \"y\": ..., \"width\": ..., \"height\": ...}}"
                ))
            })?,
        };
        let request = agent_tools::ScreenshotRequest {
            area,
            max_width,
            max_height,
        };
        let inner = self.inner.clone();
        spawn_py(py, async move {
            let shot = inner.screenshot(tab.as_deref(), &request).await.map_err(host_error)?;
            Ok(crate::convert::Bytes(shot.data))
        })
    }

    /// Waits until a tab's page has settled, for at most `timeout` seconds. Awaitable.
    fn wait_settled<'py>(&self, py: Python<'py>, tab: Option<String>, timeout: f64) -> PyResult<Bound<'py, PyAny>> {
        let timeout = Duration::try_from_secs_f64(timeout).map_err(|_| {
            crate::errors::config_error(format!(
                "wait_settled timeout must be a non-negative number of seconds, not {timeout}"
            ))
        })?;
        let inner = self.inner.clone();
        spawn_py(py, async move {
            inner.wait_settled(tab.as_deref(), timeout).await.map_err(host_error)
        })
    }
}
