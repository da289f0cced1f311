//! The PostgreSQL store.

use std::sync::Arc;

use agent_store_postgres::{PostgresOptions, PostgresStore};
use pyo3::prelude::*;

use crate::errors::store_error;
use crate::provider::NativeStore;

/// A PostgreSQL-backed store handle with the extra operations of `PostgresStore`.
#[pyclass(module = "agent_core._native", name = "PostgresStore", frozen)]
pub struct NativePostgres {
    inner: PostgresStore,
}

#[pymethods]
impl NativePostgres {
    /// Connects to the database at `url` and migrates its schema, with a PostgresOptions dict
    /// (`max_connections`, `schema`, `connect_timeout_ms`). Blocks (without the GIL) until
    /// connected: the pool's connections live on the binding's runtime, where it runs.
    #[new]
    #[pyo3(signature = (url, options=None))]
    fn new(py: Python<'_>, url: String, options: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let options = crate::convert::options::<PostgresOptions>("PostgresOptions", options)?;
        let runtime = pyo3_async_runtimes::tokio::get_runtime();
        // On a thread of its own: Python may call this from a thread that already runs the
        // binding's runtime (a `def` tool, say), where waiting on that runtime would panic.
        let connected = py.detach(|| {
            std::thread::scope(|scope| {
                scope
                    .spawn(|| runtime.block_on(PostgresStore::connect_with(&url, options)))
                    .join()
            })
        });
        let inner = match connected {
            Ok(result) => result.map_err(|e| store_error(&e))?,
            Err(_) => {
                return Err(pyo3::exceptions::PyRuntimeError::new_err(
                    "connecting to PostgreSQL failed unexpectedly (the connecting thread panicked)",
                ));
            }
        };
        Ok(NativePostgres { inner })
    }

    /// The store as a generic store handle for agents.
    fn as_store(&self) -> NativeStore {
        NativeStore::new(Arc::new(self.inner.clone()))
    }

    /// The schema the tables live in, if one was given.
    #[getter]
    fn schema(&self) -> Option<String> {
        self.inner.schema().map(str::to_owned)
    }

    /// The database's schema version. Awaitable.
    fn schema_version<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let store = self.inner.clone();
        crate::runtime::spawn_py(
            py,
            async move { store.schema_version().await.map_err(|e| store_error(&e)) },
        )
    }

    /// Every session (dicts), most recently updated first. Awaitable.
    fn list_sessions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::store::list_sessions(py, &self.inner)
    }

    /// Deletes a session and everything in it. Awaitable.
    fn delete_session<'py>(&self, py: Python<'py>, id: String) -> PyResult<Bound<'py, PyAny>> {
        crate::store::delete_session(py, &self.inner, &id)
    }

    /// The session's tool-call records (dicts). Awaitable.
    fn tool_calls<'py>(&self, py: Python<'py>, id: String) -> PyResult<Bound<'py, PyAny>> {
        crate::store::tool_calls(py, &self.inner, &id)
    }

    /// Closes the pool: later calls fail.
    fn close(&self) {
        self.inner.close();
    }
}
