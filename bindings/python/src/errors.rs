//! Rust errors -> the Python exception hierarchy defined in `agent_core.errors`.

use agent_core::{AgentError, InvalidSessionId, StoreError};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// Builds an exception of the class `name` of `agent_core.errors` with `message`, and sets its
/// `kind` attribute when given. Falls back to `RuntimeError` if the module cannot be imported.
pub fn new_error(name: &str, message: impl Into<String>, kind: Option<&str>) -> PyErr {
    let message = message.into();
    crate::interpreter::attach(|py| {
        let build = || -> PyResult<PyErr> {
            let class = py.import("agent_core.errors")?.getattr(name)?;
            let exc = class.call1((message.clone(),))?;
            if let Some(kind) = kind {
                exc.setattr("kind", kind)?;
            }
            Ok(PyErr::from_value(exc))
        };
        build().unwrap_or_else(|_| PyRuntimeError::new_err(message.clone()))
    })
    .unwrap_or_else(|| PyRuntimeError::new_err(message))
}

/// `ConfigError(message)`.
pub fn config_error(message: impl Into<String>) -> PyErr {
    new_error("ConfigError", message, None)
}

/// Maps a store error to `StoreError` (or `SessionNotFoundError` / `SessionExistsError`).
pub fn store_error(e: &StoreError) -> PyErr {
    let text = e.to_string();
    match e {
        StoreError::SessionNotFound(_) => new_error("SessionNotFoundError", text, Some("store.not_found")),
        StoreError::AlreadyExists(_) => new_error("SessionExistsError", text, Some("store.already_exists")),
        _ => new_error("StoreError", text, Some("store")),
    }
}

/// Maps an agent error.
pub fn agent_error(e: AgentError) -> PyErr {
    match &e {
        AgentError::NoProvider | AgentError::NoRuntime | AgentError::Tool(_) | AgentError::Unpriced(_) => {
            config_error(e.to_string())
        }
        AgentError::SessionNotFound(_) => new_error("SessionNotFoundError", e.to_string(), Some("store.not_found")),
        AgentError::Store(s) => store_error(s),
    }
}

/// Maps an invalid session id.
pub fn invalid_id(e: InvalidSessionId) -> PyErr {
    new_error("InvalidSessionIdError", e.to_string(), None)
}
