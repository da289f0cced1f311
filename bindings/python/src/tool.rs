//! Python callables as agent-core tools and gates.

use std::sync::Arc;
use std::time::Duration;

use agent_core::{Gate, GateDecision, GateRequest, Tool, ToolContext, ToolError, ToolOutput, ToolSpec, async_trait};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

use crate::convert::{json_to_py, py_to_json};
use crate::pyloop::{Callback, Loops};

/// A tool whose body is a Python callable taking the arguments dict (and a context dict).
pub struct PyTool {
    spec: ToolSpec,
    callback: Callback,
    loops: Arc<Loops>,
    /// The function declares a `ToolContext` parameter: only then is the context made.
    wants_context: bool,
}

impl PyTool {
    /// Reads a `agent_core.Tool` object: `name`, `description`, `parameters`, `gated`,
    /// `parallel_safe`, `timeout` (seconds or None), `is_async`, `_invoke`, and whether it
    /// takes a context (`_context_params`).
    pub fn from_py(tool: &Bound<'_, PyAny>, loops: Arc<Loops>) -> PyResult<Self> {
        let name: String = tool.getattr("name")?.extract()?;
        let description: String = tool.getattr("description")?.extract()?;
        let parameters = py_to_json(&tool.getattr("parameters")?)?;
        let mut spec = ToolSpec::new(name, description, parameters)
            .gated(tool.getattr("gated")?.extract()?)
            .parallel_safe(tool.getattr("parallel_safe")?.extract()?);
        if let Some(secs) = tool.getattr("timeout")?.extract::<Option<f64>>()? {
            spec = spec.timeout(seconds(secs)?);
        }
        Ok(PyTool {
            spec,
            callback: Callback {
                func: Arc::new(tool.getattr("_invoke")?.unbind()),
                is_async: tool.getattr("is_async")?.extract()?,
            },
            loops,
            wants_context: tool.getattr("_context_params")?.is_truthy()?,
        })
    }
}

/// Seconds as a Duration, refusing negative or non-finite values.
pub fn seconds(secs: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(secs)
        .map_err(|_| crate::errors::config_error(format!("invalid duration {secs}: expected seconds >= 0")))
}

/// Milliseconds as a Duration, refusing negative or non-finite values.
pub fn millis(ms: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(ms / 1000.0)
        .map_err(|_| crate::errors::config_error(format!("invalid duration {ms}: expected milliseconds >= 0")))
}

#[async_trait]
impl Tool for PyTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: serde_json::Value, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        // The context's dict and strings are made only for a function that declares one.
        let context = self
            .wants_context
            .then(|| (cx.session_id.to_string(), cx.call_id.clone()));
        self.callback
            .call(
                &self.loops,
                &cx.session_id,
                move |py| {
                    let ctx = match context {
                        Some((session_id, call_id)) => {
                            let ctx = pyo3::types::PyDict::new(py);
                            ctx.set_item("session_id", session_id)?;
                            ctx.set_item("call_id", call_id)?;
                            ctx.into_any()
                        }
                        None => py.None().into_bound(py),
                    };
                    PyTuple::new(py, [json_to_py(py, &args)?, ctx])
                },
                |py, result| match result.and_then(|value| to_output(&value)) {
                    Ok(output) => Ok(output),
                    Err(e) => Err(tool_error(py, e)),
                },
            )
            .await
            .unwrap_or_else(|e| Err(ToolError::fatal(e)))
    }
}

fn to_output(value: &Bound<'_, PyAny>) -> PyResult<ToolOutput> {
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(ToolOutput::text(s.to_cow()?.into_owned()));
    }
    Ok(ToolOutput::json(py_to_json(value)?))
}

/// A Python exception -> a tool error. `agent_core.ToolError` with `fatal=True` ends the turn
/// and keeps the exception as the error's source; anything else is shown to the model.
pub fn tool_error(py: Python<'_>, err: PyErr) -> ToolError {
    {
        let value = err.value(py);
        let is_tool_error = py
            .import("agent_core.errors")
            .and_then(|m| m.getattr("ToolError"))
            .and_then(|cls| value.is_instance(&cls))
            .unwrap_or(false);
        let text = value.str().map(|s| s.to_string()).unwrap_or_default();
        if is_tool_error {
            let flag = |name: &str| value.getattr(name).and_then(|v| v.extract::<bool>()).unwrap_or(false);
            if flag("is_fatal") {
                return ToolError::Fatal {
                    message: text,
                    source: Some(Box::new(err)),
                };
            }
            return ToolError::ForModel {
                message: text,
                retryable: flag("retryable"),
            };
        }
        let type_name = value
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "Exception".into());
        ToolError::ForModel {
            message: if text.is_empty() {
                type_name
            } else {
                format!("{type_name}: {text}")
            },
            retryable: false,
        }
    }
}

/// A gate whose decision comes from a Python callable returning `{"decision": "allow"}` or
/// `{"decision": "deny", "reason": ...}` (the pure-Python layer normalizes what users return).
pub struct PyGate {
    callback: Callback,
    loops: Arc<Loops>,
}

impl PyGate {
    /// Wraps a normalized gate callable.
    pub fn new(func: Py<PyAny>, is_async: bool, loops: Arc<Loops>) -> Self {
        PyGate {
            callback: Callback {
                func: Arc::new(func),
                is_async,
            },
            loops,
        }
    }
}

#[async_trait]
impl Gate for PyGate {
    async fn check(&self, request: &GateRequest) -> GateDecision {
        let req = crate::convert::to_json(request);
        self.callback
            .call(
                &self.loops,
                &request.session_id,
                move |py| PyTuple::new(py, [json_to_py(py, &req)?]),
                |py, result| match result.and_then(|v| py_to_json(&v)) {
                    Ok(v) => serde_json::from_value::<GateDecision>(v)
                        .unwrap_or_else(|e| GateDecision::deny(format!("the gate returned an invalid decision: {e}"))),
                    Err(e) => {
                        let text = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
                        tracing::warn!(error = %text, "the Python gate raised; denying the call");
                        GateDecision::deny(format!("the gate failed: {text}"))
                    }
                },
            )
            .await
            .unwrap_or_else(|e| GateDecision::deny(format!("the gate failed: {e}")))
    }
}
