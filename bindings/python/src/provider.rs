//! Providers and stores as opaque native handles, and the scripted provider.

use std::sync::Arc;

use agent_core::{
    MemoryStore, ModelRequest, Provider, ProviderError, ScriptStep, ScriptStepSpec, ScriptedProvider, Store, Tool,
};
use pyo3::prelude::*;

use crate::convert::{json_to_py, options, to_json};
use crate::errors::config_error;

/// A model provider (built by `agent_core.ScriptedProvider`, `agent_core.OpenAICompatible`, ...).
#[pyclass(module = "agent_core._native", name = "Provider", frozen)]
pub struct NativeProvider {
    pub(crate) inner: Arc<dyn Provider>,
    scripted: Option<Arc<ScriptedProvider>>,
}

impl NativeProvider {
    /// Wraps any provider.
    pub fn new(inner: Arc<dyn Provider>) -> Self {
        NativeProvider { inner, scripted: None }
    }
}

#[pymethods]
impl NativeProvider {
    /// A scripted provider replaying `steps` (ScriptStepSpec dicts or strings), one per model call.
    #[staticmethod]
    fn scripted(steps: Vec<Bound<'_, PyAny>>, record_requests: bool) -> PyResult<Self> {
        let steps = steps.iter().map(parse_step).collect::<PyResult<Vec<_>>>()?;
        let mut provider = ScriptedProvider::new(steps);
        if record_requests {
            provider = provider.record_requests();
        }
        let provider = Arc::new(provider);
        Ok(NativeProvider {
            inner: provider.clone(),
            scripted: Some(provider),
        })
    }

    /// A scripted provider whose steps come from `choose(request_dict) -> step dict`.
    #[staticmethod]
    fn scripted_fn(choose: Py<PyAny>, record_requests: bool) -> Self {
        let choose = Arc::new(choose);
        let mut provider = ScriptedProvider::from_fn(move |request: &ModelRequest| {
            let request = to_json(request);
            let choose = choose.clone();
            // The scripted provider asks synchronously.
            let picked = crate::interpreter::attach_blocking(|py| -> PyResult<ScriptStep> {
                let step = choose.bind(py).call1((json_to_py(py, &request)?,))?;
                parse_step(&step)
            })
            .unwrap_or_else(|| Err(crate::interpreter::shutting_down()));
            picked.unwrap_or_else(|e| {
                ScriptStep::Error(ProviderError::BadRequest(format!("the script function raised: {e}")))
            })
        });
        if record_requests {
            provider = provider.record_requests();
        }
        let provider = Arc::new(provider);
        NativeProvider {
            inner: provider.clone(),
            scripted: Some(provider),
        }
    }

    /// The provider's id.
    #[getter]
    fn id(&self) -> String {
        self.inner.id().to_owned()
    }

    /// The model's name.
    #[getter]
    fn model(&self) -> String {
        self.inner.model().to_owned()
    }

    /// Model calls made (scripted providers only; 0 otherwise).
    fn call_count(&self) -> u64 {
        self.scripted.as_ref().map(|s| s.call_count()).unwrap_or(0)
    }

    /// The recorded requests as dicts (scripted providers built with `record_requests`).
    fn requests<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let requests = self.scripted.as_ref().map(|s| s.requests()).unwrap_or_default();
        json_to_py(py, &to_json(&requests))
    }

    /// Response streams alive now (scripted providers; 0 once every call ended or was dropped).
    fn live_streams(&self) -> usize {
        self.scripted.as_ref().map(|s| s.live_streams()).unwrap_or(0)
    }
}

/// Reads one step in the ScriptStepSpec format: a string (a text reply) or a dict
/// (`{text, reasoning, tool_calls, usage, error}`, `{delay_ms, then}`, `{hang}`).
pub fn parse_step(step: &Bound<'_, PyAny>) -> PyResult<ScriptStep> {
    let spec = options::<ScriptStepSpec>("script step", Some(step))?;
    ScriptStep::try_from(spec).map_err(|e| config_error(e.to_string()))
}

/// Where sessions are persisted (built by `agent_core.MemoryStore`, `agent_core.SqliteStore`).
#[pyclass(module = "agent_core._native", name = "Store", frozen)]
pub struct NativeStore {
    pub(crate) inner: Arc<dyn Store>,
}

impl NativeStore {
    /// Wraps any store.
    pub fn new(inner: Arc<dyn Store>) -> Self {
        NativeStore { inner }
    }
}

#[pymethods]
impl NativeStore {
    /// An in-memory store.
    #[staticmethod]
    fn memory() -> Self {
        NativeStore::new(Arc::new(MemoryStore::new()))
    }
}

/// A tool implemented in Rust (fs/shell tools, page tools, tab tools, ...).
#[pyclass(module = "agent_core._native", name = "NativeTool", frozen)]
pub struct NativeTool {
    pub(crate) inner: Arc<dyn Tool>,
}

impl NativeTool {
    /// Wraps any tool.
    pub fn new(inner: Arc<dyn Tool>) -> Self {
        NativeTool { inner }
    }
}

#[pymethods]
impl NativeTool {
    /// The tool's spec as a dict.
    fn spec<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &to_json(self.inner.spec()))
    }

    /// The tool's name.
    #[getter]
    fn name(&self) -> String {
        self.inner.spec().name.clone()
    }
}
