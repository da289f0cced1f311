//! The runtime side of the binding: the Tokio runtime, the thread that runs Python work for
//! it, and Rust futures as asyncio futures.

use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};

use pyo3::IntoPyObjectExt;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use tokio::task::AbortHandle;

use crate::loop_bridge::{LoopBridge, LoopJob};
use crate::python_thread::PythonThread;

/// The thread that runs Python work for the runtime. One per process, like the runtime it
/// serves (pyo3-async-runtimes keeps one) and the interpreter whose GIL it takes.
pub fn python_thread() -> &'static Arc<PythonThread> {
    static THREAD: OnceLock<Arc<PythonThread>> = OnceLock::new();
    THREAD.get_or_init(|| Arc::new(PythonThread::default()))
}

/// Sets up the runtime before its first use: its workers wake the Python thread when they
/// run out of work (see [`PythonThread::on_worker_park`]).
///
/// A process allowed one CPU (by its affinity mask, as `taskset` or a container's cpuset sets
/// it, or by a cgroup CPU quota: what `available_parallelism` reads) gets a current-thread
/// runtime driven by a thread of its own: a multi-thread runtime with its one worker costs
/// more CPU there for nothing, mostly in the kernel (it wakes the peers of its sockets more
/// often). With more CPUs, one worker per CPU.
pub fn configure() {
    if std::thread::available_parallelism().is_ok_and(|n| n.get() == 1) && start_single_thread().is_ok() {
        return;
    }
    pyo3_async_runtimes::tokio::init(with_hooks(tokio::runtime::Builder::new_multi_thread()));
}

/// Every driver on, and the Python thread woken when a worker parks.
fn with_hooks(mut builder: tokio::runtime::Builder) -> tokio::runtime::Builder {
    builder.enable_all().on_thread_park(|| python_thread().on_worker_park());
    builder
}

/// Builds the current-thread runtime and the thread that drives it for the life of the
/// process. `Err` leaves the default (multi-thread) runtime in place.
fn start_single_thread() -> std::io::Result<()> {
    let runtime = with_hooks(tokio::runtime::Builder::new_current_thread()).build()?;
    // The runtime lives as long as the process, like the multi-thread one pyo3-async-runtimes
    // keeps in a static.
    let runtime: &'static tokio::runtime::Runtime = Box::leak(Box::new(runtime));
    std::thread::Builder::new()
        .name("agent-core-runtime".into())
        .spawn(move || runtime.block_on(std::future::pending::<()>()))?;
    // The driver starts first: a runtime set up without one would never run a task. Setting
    // it up only fails when it already was, which `configure`, run once at import, precedes.
    let _ = pyo3_async_runtimes::tokio::init_with_runtime(runtime);
    Ok(())
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
    let bridge = LoopBridge::of(py, &event_loop);
    let target = (event_loop.unbind(), py_fut.clone().unbind());
    let handle = pyo3_async_runtimes::tokio::get_runtime().spawn(async move {
        let result = fut.await;
        let (event_loop, py_fut) = target;
        let deliver: LoopJob = Box::new(move |py| {
            let (ok, value) = match result.and_then(|v| v.into_py_any(py)) {
                Ok(v) => (true, v.into_bound(py)),
                Err(e) => (false, e.into_value(py).into_bound(py).into_any()),
            };
            let on_loop = pyo3_async_runtimes::get_running_loop(py).is_ok_and(|l| l.is(event_loop.bind(py)));
            let delivered = resolver(py).and_then(|resolve| {
                if on_loop {
                    resolve.bind(py).call1((py_fut.bind(py), ok, value))
                } else {
                    event_loop
                        .bind(py)
                        .call_method1("call_soon_threadsafe", (resolve, py_fut.bind(py), ok, value))
                }
            });
            // A closed loop means nobody waits for the result any more.
            drop(delivered);
        });
        // Straight to the loop's thread when it has a bridge; else through the Python thread.
        let deliver = match bridge {
            Some(bridge) => bridge.push(deliver).err(),
            None => Some(deliver),
        };
        if let Some(deliver) = deliver {
            // Err only when the interpreter is shutting down: nobody waits any more.
            drop(python_thread().run(deliver).await);
        }
    });
    py_fut.call_method1(
        "add_done_callback",
        (AbortOnCancel {
            handle: Mutex::new(Some(handle.abort_handle())),
        },),
    )?;
    Ok(py_fut)
}

/// [`spawn_py`] for futures that are often ready at once (a buffered event, a session
/// created in memory): polled once on the calling thread first (with the GIL released), and
/// only spawned when not ready, which saves waking a runtime worker and then the loop.
///
/// Only for futures whose first poll does no blocking work: it runs on the loop's thread.
pub fn spawn_py_eager<'py, F, T>(py: Python<'py>, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = PyResult<T>> + Send + 'static,
    T: for<'a> IntoPyObject<'a> + Send + 'static,
{
    let mut fut = Box::pin(fut);
    let first = py.detach(|| {
        let _runtime = pyo3_async_runtimes::tokio::get_runtime().enter();
        let mut cx = Context::from_waker(Waker::noop());
        fut.as_mut().poll(&mut cx)
    });
    let Poll::Ready(result) = first else {
        // Polled with a waker that does nothing: the runtime polls it again at once.
        return spawn_py(py, fut);
    };
    let py_fut = pyo3_async_runtimes::get_running_loop(py)?.call_method0("create_future")?;
    match result.and_then(|v| v.into_py_any(py)) {
        Ok(v) => py_fut.call_method1("set_result", (v,))?,
        Err(e) => py_fut.call_method1("set_exception", (e.into_value(py),))?,
    };
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
