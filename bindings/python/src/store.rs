//! The SQLite store, the encrypted key store and Python `Crypt` objects.

use std::sync::Arc;

use agent_core::{SessionId, Store};
use agent_store::{Crypt, CryptError, FileKeyCrypt, KeyStore, KeyStoreError, SqliteOptions, SqliteStore};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::convert::{Json, to_json};
use crate::errors::{config_error, invalid_id, new_error, store_error};
use crate::provider::NativeStore;

/// A SQLite-backed store handle with the extra operations of `SqliteStore`.
#[pyclass(module = "agent_core._native", name = "SqliteStore", frozen)]
pub struct NativeSqlite {
    inner: SqliteStore,
}

#[pymethods]
impl NativeSqlite {
    /// Opens (creating and migrating) the database file with a SqliteOptions dict
    /// (`durability`, `busy_timeout_ms`, `max_idle_readers`, `write_behind`,
    /// `group_commit_delay_ms`, `max_size_bytes`).
    #[new]
    #[pyo3(signature = (path, options=None))]
    fn new(py: Python<'_>, path: std::path::PathBuf, options: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let options = crate::convert::options::<SqliteOptions>("SqliteOptions", options)?;
        let inner = py
            .detach(|| SqliteStore::open_blocking(&path, options))
            .map_err(|e| store_error(&e))?;
        Ok(NativeSqlite { inner })
    }

    /// The store as a generic store handle for agents.
    fn as_store(&self) -> NativeStore {
        NativeStore::new(Arc::new(self.inner.clone()))
    }

    /// The database file.
    #[getter]
    fn path(&self) -> std::path::PathBuf {
        self.inner.path().to_path_buf()
    }

    /// The schema version of the file. Awaitable.
    fn schema_version<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let store = self.inner.clone();
        crate::runtime::spawn_py(
            py,
            async move { store.schema_version().await.map_err(|e| store_error(&e)) },
        )
    }

    /// Every session (dicts), most recently updated first. Awaitable.
    fn list_sessions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        list_sessions(py, &self.inner)
    }

    /// Deletes a session and everything in it. Awaitable.
    fn delete_session<'py>(&self, py: Python<'py>, id: String) -> PyResult<Bound<'py, PyAny>> {
        delete_session(py, &self.inner, &id)
    }

    /// The session's tool-call records (dicts). Awaitable.
    fn tool_calls<'py>(&self, py: Python<'py>, id: String) -> PyResult<Bound<'py, PyAny>> {
        tool_calls(py, &self.inner, &id)
    }
}

// The session calls both store classes (SQLite and PostgreSQL) offer, over either store.

/// Every session (dicts), most recently updated first. Awaitable.
pub(crate) fn list_sessions<'py>(
    py: Python<'py>,
    store: &(impl Store + Clone + 'static),
) -> PyResult<Bound<'py, PyAny>> {
    let store = store.clone();
    crate::runtime::spawn_py(py, async move {
        let sessions = store.list_sessions().await.map_err(|e| store_error(&e))?;
        Ok(Json(to_json(&sessions)))
    })
}

/// Deletes a session and everything in it. Awaitable.
pub(crate) fn delete_session<'py>(
    py: Python<'py>,
    store: &(impl Store + Clone + 'static),
    id: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let id = SessionId::parse(id).map_err(invalid_id)?;
    let store = store.clone();
    crate::runtime::spawn_py(py, async move {
        store.delete_session(&id).await.map_err(|e| store_error(&e))
    })
}

/// The session's tool-call records (dicts). Awaitable.
pub(crate) fn tool_calls<'py>(
    py: Python<'py>,
    store: &(impl Store + Clone + 'static),
    id: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let id = SessionId::parse(id).map_err(invalid_id)?;
    let store = store.clone();
    crate::runtime::spawn_py(py, async move {
        let calls = store.tool_calls(&id).await.map_err(|e| store_error(&e))?;
        Ok(Json(to_json(&calls)))
    })
}

/// A `Crypt` implemented by a Python object with `is_encryption_available()`,
/// `encrypt_string(str) -> bytes` and `decrypt_string(bytes) -> str`.
struct PyCrypt(Py<PyAny>);

impl PyCrypt {
    fn with<T>(&self, f: impl FnOnce(Python<'_>, &Bound<'_, PyAny>) -> PyResult<T> + Send) -> Result<T, CryptError>
    where
        T: Send,
    {
        let result = crate::interpreter::attach_blocking(|py| f(py, self.0.bind(py)))
            .unwrap_or_else(|| Err(crate::interpreter::shutting_down()));
        result.map_err(|e| {
            CryptError::Failed(
                crate::interpreter::attach(|py| e.value(py).to_string()).unwrap_or_else(|| e.to_string()),
            )
        })
    }
}

impl Crypt for PyCrypt {
    fn is_encryption_available(&self) -> bool {
        self.with(|_, c| c.call_method0("is_encryption_available")?.extract::<bool>())
            .unwrap_or(false)
    }

    fn encrypt_string(&self, plaintext: &str) -> Result<Vec<u8>, CryptError> {
        let text = plaintext.to_owned();
        self.with(move |_, c| c.call_method1("encrypt_string", (text,))?.extract::<Vec<u8>>())
    }

    fn decrypt_string(&self, ciphertext: &[u8]) -> Result<String, CryptError> {
        let data = ciphertext.to_vec();
        self.with(move |py, c| {
            c.call_method1("decrypt_string", (PyBytes::new(py, &data),))?
                .extract::<String>()
        })
    }
}

/// One API key per provider, encrypted with a host `Crypt`, in a SQLite store.
#[pyclass(module = "agent_core._native", name = "KeyStore", frozen)]
pub struct NativeKeyStore {
    inner: KeyStore,
}

fn key_error(e: KeyStoreError) -> PyErr {
    let text = e.to_string();
    match e {
        KeyStoreError::UnknownProvider { .. } | KeyStoreError::EmptyKey(_) => config_error(text),
        KeyStoreError::EncryptionUnavailable(_) | KeyStoreError::Crypt(_) => new_error("CryptError", text, None),
        KeyStoreError::Store(s) => store_error(&s),
    }
}

#[pymethods]
impl NativeKeyStore {
    /// A key store over `store` using `crypt`: a Python object, or None with `key_file` for the
    /// built-in file-key crypt.
    #[new]
    #[pyo3(signature = (store, crypt=None, key_file=None, providers=None))]
    fn new(
        store: &NativeSqlite,
        crypt: Option<Py<PyAny>>,
        key_file: Option<std::path::PathBuf>,
        providers: Option<Vec<String>>,
    ) -> PyResult<Self> {
        let crypt: Arc<dyn Crypt> = match (crypt, key_file) {
            (Some(c), None) => Arc::new(PyCrypt(c)),
            (None, Some(path)) => {
                Arc::new(FileKeyCrypt::open(path).map_err(|e| new_error("CryptError", e.to_string(), None))?)
            }
            _ => return Err(config_error("give exactly one of crypt= or key_file=")),
        };
        let mut inner = KeyStore::new(store.inner.clone(), crypt);
        if let Some(p) = providers {
            inner = inner.with_providers(p);
        }
        Ok(NativeKeyStore { inner })
    }

    /// Stores a provider's key, encrypted. Awaitable.
    fn set_key<'py>(&self, py: Python<'py>, provider: String, key: String) -> PyResult<Bound<'py, PyAny>> {
        let ks = self.inner.clone();
        crate::runtime::spawn_py(py, async move { ks.set_key(&provider, &key).await.map_err(key_error) })
    }

    /// A provider's key, or None (also when it cannot be decrypted here). Awaitable.
    fn get_key<'py>(&self, py: Python<'py>, provider: String) -> PyResult<Bound<'py, PyAny>> {
        let ks = self.inner.clone();
        crate::runtime::spawn_py(py, async move { ks.get_key(&provider).await.map_err(key_error) })
    }

    /// Which providers have a usable key (never the keys). Awaitable.
    fn status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let ks = self.inner.clone();
        crate::runtime::spawn_py(
            py,
            async move { Ok(Json(to_json(&ks.status().await.map_err(key_error)?))) },
        )
    }

    /// Removes a provider's key. Awaitable.
    fn clear_key<'py>(&self, py: Python<'py>, provider: String) -> PyResult<Bound<'py, PyAny>> {
        let ks = self.inner.clone();
        crate::runtime::spawn_py(py, async move { ks.clear_key(&provider).await.map_err(key_error) })
    }

    /// The providers the store accepts.
    fn providers(&self) -> Vec<String> {
        self.inner.providers().to_vec()
    }
}
