//! Providers and stores as opaque native handles, and the scripted provider.

use std::sync::Arc;
use std::time::Duration;

use agent_core::{
    MemoryStore, ModelRequest, Provider, ProviderError, ScriptStep, ScriptedProvider, ScriptedReply, Store, Tool, Usage,
};
use pyo3::prelude::*;
use serde_json::Value;

use crate::convert::{json_to_py, py_to_json, to_json};
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
    /// A scripted provider replaying `steps` (dicts, see `agent_core.provider`), one per model call.
    #[staticmethod]
    fn scripted(steps: Vec<Bound<'_, PyAny>>, record_requests: bool) -> PyResult<Self> {
        let steps = steps
            .iter()
            .map(|s| parse_step(&py_to_json(s)?))
            .collect::<PyResult<Vec<_>>>()?;
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
            let pick = move || {
                crate::runtime::attach(|py| -> PyResult<ScriptStep> {
                    let step = choose.bind(py).call1((json_to_py(py, &request)?,))?;
                    parse_step(&py_to_json(&step)?)
                })
                .unwrap_or_else(|| Err(crate::runtime::shutting_down()))
            };
            // The scripted provider asks synchronously; keep the runtime's other tasks moving.
            let picked = match tokio::runtime::Handle::try_current() {
                Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                    tokio::task::block_in_place(pick)
                }
                _ => pick(),
            };
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

fn field<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|v| !v.is_null())
}

fn text_field(v: &Value, key: &str) -> String {
    field(v, key).and_then(Value::as_str).unwrap_or_default().to_owned()
}

/// Parses a step dict: `{"kind": "reply" | "error" | "fail_after" | "delay" | "hang", ...}`.
pub fn parse_step(v: &Value) -> PyResult<ScriptStep> {
    let kind = field(v, "kind").and_then(Value::as_str).unwrap_or("reply");
    Ok(match kind {
        "reply" => ScriptStep::Reply(parse_reply(v)?),
        "error" => ScriptStep::Error(parse_error(v)?),
        "fail_after" => ScriptStep::FailAfter(
            parse_reply(field(v, "reply").unwrap_or(&Value::Null))?,
            parse_error(field(v, "error").unwrap_or(&Value::Null))?,
        ),
        "delay" => {
            let secs = field(v, "seconds").and_then(Value::as_f64).unwrap_or(0.0);
            let then = field(v, "then").ok_or_else(|| config_error("a delay step needs `then`"))?;
            ScriptStep::Delay(crate::tool::seconds(secs)?, Box::new(parse_step(then)?))
        }
        "hang" => ScriptStep::Hang(text_field(v, "text")),
        other => return Err(config_error(format!("unknown script step kind {other:?}"))),
    })
}

fn parse_reply(v: &Value) -> PyResult<ScriptedReply> {
    let mut reply = ScriptedReply::text(text_field(v, "text"));
    if let Some(r) = field(v, "reasoning").and_then(Value::as_str) {
        reply = reply.with_reasoning(r);
    }
    for call in field(v, "tool_calls").and_then(Value::as_array).into_iter().flatten() {
        let name = text_field(call, "name");
        reply = match field(call, "arguments") {
            Some(Value::String(raw)) => reply.with_raw_call(name, raw.clone()),
            Some(args) => reply.with_call(name, args.clone()),
            None => reply.with_call(name, serde_json::json!({})),
        };
    }
    if let Some(u) = field(v, "usage") {
        reply.usage =
            Some(serde_json::from_value::<Usage>(u.clone()).map_err(|e| config_error(format!("invalid usage: {e}")))?);
    }
    Ok(reply)
}

fn parse_error(v: &Value) -> PyResult<ProviderError> {
    let message = text_field(v, "message");
    let status = field(v, "status").and_then(Value::as_u64).unwrap_or(500) as u16;
    Ok(match field(v, "error").and_then(Value::as_str).unwrap_or("server") {
        "rate_limited" => ProviderError::RateLimited {
            retry_after: field(v, "retry_after")
                .and_then(Value::as_f64)
                .map(Duration::from_secs_f64),
            message,
        },
        "timeout" => ProviderError::Timeout(message),
        "transport" => ProviderError::Transport(message),
        "server" => ProviderError::Server { status, message },
        "auth" => ProviderError::Auth {
            status: if status == 500 { 401 } else { status },
            message,
        },
        "bad_request" => ProviderError::BadRequest(message),
        "context_overflow" => ProviderError::ContextOverflow(message),
        "malformed" => ProviderError::Malformed(message),
        "config" => ProviderError::Config(message),
        "cancelled" => ProviderError::Cancelled,
        other => return Err(config_error(format!("unknown provider error kind {other:?}"))),
    })
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
