//! The runtime side of the binding: Rust futures as asyncio futures, and taking the GIL from
//! Rust threads safely around interpreter shutdown.
//!
//! A Rust thread that takes the GIL while the interpreter finalizes is killed by CPython in the
//! middle of Rust code (a crash at exit). So every GIL acquisition from a runtime thread goes
//! through [`attach`], and an `atexit` hook ([`shutdown`]) stops new ones and waits for those in
//! flight before finalization starts.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use pyo3::IntoPyObjectExt;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use tokio::task::AbortHandle;

use crate::python_thread::PythonThread;

static ACTIVE: AtomicUsize = AtomicUsize::new(0);
static FINALIZING: AtomicBool = AtomicBool::new(false);

/// Runs `f` with the GIL, unless the interpreter is shutting down (then `None`).
pub fn attach<T>(f: impl FnOnce(Python<'_>) -> T) -> Option<T> {
    if !enter() {
        return None;
    }
    let result = Python::attach(f);
    leave();
    Some(result)
}

/// Announces that this thread is about to take the GIL: false (and nothing announced) when
/// the interpreter is shutting down. Each `true` is paired with one [`leave`].
pub fn enter() -> bool {
    ACTIVE.fetch_add(1, Ordering::SeqCst);
    if FINALIZING.load(Ordering::SeqCst) {
        ACTIVE.fetch_sub(1, Ordering::SeqCst);
        return false;
    }
    true
}

/// This thread is done with the GIL (see [`enter`]).
pub fn leave() {
    ACTIVE.fetch_sub(1, Ordering::SeqCst);
}

/// The thread that runs Python work for the runtime. One per process, like the runtime it
/// serves (pyo3-async-runtimes keeps one) and the interpreter whose GIL it takes.
pub fn python_thread() -> &'static Arc<PythonThread> {
    static THREAD: OnceLock<Arc<PythonThread>> = OnceLock::new();
    THREAD.get_or_init(|| Arc::new(PythonThread::default()))
}

/// Sets up the runtime before its first use: its workers wake the Python thread when they
/// run out of work (see [`PythonThread::on_worker_park`]).
pub fn configure() {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all().on_thread_park(|| python_thread().on_worker_park());
    pyo3_async_runtimes::tokio::init(builder);
}

/// The error used when Python is gone.
pub fn shutting_down() -> PyErr {
    PyRuntimeError::new_err("the Python interpreter is shutting down")
}

/// Registered with `atexit`: refuses new GIL acquisitions from Rust threads and waits (up to
/// two seconds, without the GIL) for those in flight.
#[pyfunction]
pub fn shutdown(py: Python<'_>) {
    FINALIZING.store(true, Ordering::SeqCst);
    py.detach(|| {
        let deadline = Instant::now() + Duration::from_secs(2);
        while ACTIVE.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
}

fn resolver(py: Python<'_>) -> PyResult<&Py<PyAny>> {
    static RESOLVE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    RESOLVE.get_or_try_init(py, || Ok(py.import("agent_core._glue")?.getattr("resolve")?.unbind()))
}

/// Runs `fut` on the runtime and returns an asyncio future of the running loop for its result.
/// Cancelling the asyncio future (task cancellation, `wait_for` timing out) drops `fut`.
pub fn spawn_py<'py, F, T>(py: Python<'py>, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = PyResult<T>> + Send + 'static,
    T: for<'a> IntoPyObject<'a> + Send + 'static,
{
    let event_loop = pyo3_async_runtimes::get_running_loop(py)?;
    let py_fut = event_loop.call_method0("create_future")?;
    let target = (event_loop.clone().unbind(), py_fut.clone().unbind());
    let handle = pyo3_async_runtimes::tokio::get_runtime().spawn(async move {
        let result = fut.await;
        let (event_loop, py_fut) = target;
        let delivered = python_thread().run(move |py| {
            let (ok, value) = match result.and_then(|v| v.into_py_any(py)) {
                Ok(v) => (true, v.into_bound(py)),
                Err(e) => (false, e.into_value(py).into_bound(py).into_any()),
            };
            let delivered = resolver(py).and_then(|resolve| {
                event_loop
                    .bind(py)
                    .call_method1("call_soon_threadsafe", (resolve, py_fut.bind(py), ok, value))
            });
            // A closed loop means nobody waits for the result any more.
            drop(delivered);
        });
        // Err only when the interpreter is shutting down: nobody waits any more.
        drop(delivered.await);
    });
    py_fut.call_method1(
        "add_done_callback",
        (AbortOnCancel {
            handle: Mutex::new(Some(handle.abort_handle())),
        },),
    )?;
    Ok(py_fut)
}

/// Drops the Rust future when its asyncio future is cancelled.
#[pyclass(module = "agent_core._native")]
struct AbortOnCancel {
    handle: Mutex<Option<AbortHandle>>,
}

#[pymethods]
impl AbortOnCancel {
    fn __call__(&self, fut: &Bound<'_, PyAny>) {
        let cancelled = fut
            .call_method0("cancelled")
            .and_then(|c| c.extract::<bool>())
            .unwrap_or(false);
        if let Some(handle) = self.handle.lock().ok().and_then(|mut h| h.take())
            && cancelled
        {
            handle.abort();
        }
    }
}
