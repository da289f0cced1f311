//! `agent_core.enable_tracing`: the agent's OpenTelemetry GenAI spans exported over OTLP/HTTP
//! (agent-otel), behind a handle whose `shutdown()` sends what is still buffered.

use std::sync::Mutex;
use std::time::Duration;

use agent_otel::{OtlpConfig, TracingGuard};
use pyo3::prelude::*;

use crate::errors::{config_error, new_error};

/// The running export; `shutdown` ends it.
#[pyclass(module = "agent_core._native", name = "Tracing", frozen)]
pub struct NativeTracing {
    guard: Mutex<Option<TracingGuard>>,
}

fn flush_error(e: agent_otel::OtelError) -> PyErr {
    new_error("AgentCoreError", e.to_string(), None)
}

#[pymethods]
impl NativeTracing {
    /// Sends the spans still buffered, keeping the export running. Blocks (without the GIL)
    /// until the endpoint answers or the timeout passes.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        let guard = self.guard.lock().map_err(|_| config_error("tracing handle poisoned"))?;
        match guard.as_ref() {
            Some(guard) => py.detach(|| guard.flush()).map_err(flush_error),
            None => Ok(()),
        }
    }

    /// Sends the spans still buffered and stops the export; later calls do nothing.
    fn shutdown(&self, py: Python<'_>) -> PyResult<()> {
        let guard = self.guard.lock().ok().and_then(|mut g| g.take());
        match guard {
            Some(guard) => py.detach(|| guard.shutdown()).map_err(flush_error),
            None => Ok(()),
        }
    }
}

/// Installs the process's tracing subscriber, exporting to `endpoint` (once per process).
#[pyfunction]
#[pyo3(signature = (endpoint, service_name = None, timeout_ms = None))]
pub fn enable_tracing(
    endpoint: String,
    service_name: Option<String>,
    timeout_ms: Option<u64>,
) -> PyResult<NativeTracing> {
    let mut config = OtlpConfig::new(endpoint);
    if let Some(name) = service_name {
        config = config.service_name(name);
    }
    if let Some(ms) = timeout_ms {
        config = config.timeout(Duration::from_millis(ms));
    }
    let guard = agent_otel::install(config).map_err(|e| match e {
        agent_otel::OtelError::AlreadyInstalled => new_error("AgentCoreError", e.to_string(), None),
        other => config_error(other.to_string()),
    })?;
    Ok(NativeTracing {
        guard: Mutex::new(Some(guard)),
    })
}
