//! Calling Python callables from the Rust runtime.
//!
//! Rules (see the shared bindings notes): the GIL is never taken on a runtime worker; a plain
//! `def` runs on the Python thread (`crate::python_thread`); an `async def` is scheduled on the asyncio
//! loop of the session that started the run (`run_coroutine_threadsafe`), and dropping the Rust
//! future (cancel, timeout) cancels the Python task.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::SessionId;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyTuple;
use tokio::sync::oneshot;

use crate::loop_bridge::{LoopBridge, LoopJob};

/// The asyncio loops runs were started from: per session, plus the latest one as a fallback.
#[derive(Default)]
pub struct Loops {
    inner: Mutex<LoopsInner>,
}

/// An asyncio loop and its bridge (see [`LoopBridge`]), when it has one.
pub struct SessionLoop {
    /// The loop.
    pub event_loop: Py<PyAny>,
    /// Wakes the loop's thread to run work, without the GIL.
    pub bridge: Option<Arc<LoopBridge>>,
}

impl SessionLoop {
    /// The loop running on this thread, with its bridge (made on first use).
    fn running(py: Python<'_>) -> Option<Arc<SessionLoop>> {
        let event_loop = pyo3_async_runtimes::get_running_loop(py).ok()?;
        Some(Arc::new(SessionLoop {
            bridge: LoopBridge::of(py, &event_loop),
            event_loop: event_loop.unbind(),
        }))
    }
}

#[derive(Default)]
struct LoopsInner {
    by_session: HashMap<SessionId, Arc<SessionLoop>>,
    latest: Option<Arc<SessionLoop>>,
    /// How many sessions the map held after its last sweep of closed loops.
    swept_at: usize,
}

impl Loops {
    /// Records the running loop (if any) as the one the session's callbacks run on.
    ///
    /// Called at every turn's start, so it stays O(1): the usual case (the same loop as the
    /// last turn's) shares that loop's handle, and closed loops are swept only when the map
    /// has doubled since the last sweep, asking each distinct loop once.
    pub fn remember(&self, py: Python<'_>, session: &SessionId) {
        let Ok(event_loop) = pyo3_async_runtimes::get_running_loop(py) else {
            return;
        };
        // Python is never called with the lock held: Python code can hand the GIL to another
        // thread, which could then wait for this lock while holding the GIL.
        let (latest, sweep) = match self.inner.lock() {
            Ok(inner) => {
                let sweep = inner.by_session.len() >= 2 * inner.swept_at.max(64);
                let distinct: Vec<Arc<SessionLoop>> = if sweep {
                    let mut seen = HashMap::new();
                    for l in inner.by_session.values() {
                        seen.entry(Arc::as_ptr(l)).or_insert_with(|| l.clone());
                    }
                    seen.into_values().collect()
                } else {
                    Vec::new()
                };
                (inner.latest.clone(), sweep.then_some(distinct))
            }
            Err(_) => return,
        };
        let event_loop = match latest {
            Some(latest) if latest.event_loop.bind(py).is(&event_loop) => latest,
            _ => match SessionLoop::running(py) {
                Some(running) => running,
                None => return,
            },
        };
        let closed: Option<Vec<*const SessionLoop>> =
            sweep.map(|loops| loops.iter().filter(|l| is_closed(py, l)).map(Arc::as_ptr).collect());
        let removed: Vec<Arc<SessionLoop>> = match self.inner.lock() {
            Ok(mut inner) => {
                let mut removed = Vec::new();
                if let Some(closed) = closed {
                    inner.by_session.retain(|_, l| {
                        let keep = !closed.contains(&Arc::as_ptr(l));
                        if !keep {
                            removed.push(l.clone());
                        }
                        keep
                    });
                    inner.swept_at = inner.by_session.len();
                }
                inner.by_session.insert(session.clone(), event_loop.clone());
                inner.latest = Some(event_loop);
                removed
            }
            Err(_) => return,
        };
        // The loops' last references (if these were) are dropped here, outside the lock.
        drop(removed);
    }

    /// Records a loop as the fallback.
    pub fn remember_current(&self, py: Python<'_>) {
        if let Some(running) = SessionLoop::running(py)
            && let Ok(mut inner) = self.inner.lock()
        {
            inner.latest = Some(running);
        }
    }

    /// The latest loop a run was started from (or the one current when these were made).
    pub fn latest(&self) -> Option<Arc<SessionLoop>> {
        self.inner.lock().ok()?.latest.clone()
    }

    /// The loop to run the session's async callbacks on.
    pub fn for_session(&self, session: &SessionId) -> Option<Arc<SessionLoop>> {
        let inner = self.inner.lock().ok()?;
        inner.by_session.get(session).or(inner.latest.as_ref()).cloned()
    }
}

fn is_closed(py: Python<'_>, event_loop: &Arc<SessionLoop>) -> bool {
    event_loop
        .event_loop
        .bind(py)
        .call_method0("is_closed")
        .and_then(|c| c.extract::<bool>())
        .unwrap_or(true)
}

/// A Python callable and whether it is a coroutine function.
pub struct Callback {
    /// The callable.
    pub func: Arc<Py<PyAny>>,
    /// `async def`: scheduled on the session's asyncio loop.
    pub is_async: bool,
}

impl Callback {
    /// Calls the callable with the arguments `make_args` builds, awaits its result on the
    /// session's asyncio loop when it is a coroutine function, and hands the result (or the
    /// exception) to `finish`. Both closures run with the GIL off the runtime's workers.
    pub async fn call<T, F, G>(&self, loops: &Loops, session: &SessionId, make_args: F, finish: G) -> Result<T, String>
    where
        T: Send + 'static,
        F: for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>> + Send + 'static,
        G: for<'py> FnOnce(Python<'py>, PyResult<Bound<'py, PyAny>>) -> T + Send + 'static,
    {
        let event_loop = if self.is_async {
            loops.for_session(session)
        } else {
            None
        };
        self.call_on(event_loop, make_args, finish).await
    }

    /// [`Self::call`] with the asyncio loop given (async callables need one).
    pub async fn call_on<T, F, G>(
        &self,
        event_loop: Option<Arc<SessionLoop>>,
        make_args: F,
        finish: G,
    ) -> Result<T, String>
    where
        T: Send + 'static,
        F: for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>> + Send + 'static,
        G: for<'py> FnOnce(Python<'py>, PyResult<Bound<'py, PyAny>>) -> T + Send + 'static,
    {
        let func = self.func.clone();
        if !self.is_async {
            return run_blocking(move |py| {
                let result = make_args(py).and_then(|args| func.bind(py).call1(args));
                finish(py, result)
            })
            .await;
        }
        let Some(session_loop) = event_loop else {
            return run_blocking(move |py| {
                finish(
                    py,
                    Err(PyRuntimeError::new_err(
                        "no asyncio event loop to run an async callback on: start runs from inside a running loop",
                    )),
                )
            })
            .await;
        };
        // The result is finished (`finish`) by the callback's own task, on the asyncio thread
        // that already holds the GIL.
        let (tx, rx) = oneshot::channel();
        let deliver: Deliver = Box::new(move |py, result| {
            let _ = tx.send(finish(py, result));
        });
        let deliver = Arc::new(Mutex::new(Some(deliver)));
        // The guard exists before the coroutine is scheduled, so that dropping this future at
        // any point (even before the coroutine starts) cancels the Python task.
        let slot = Arc::new(Mutex::new(Slot::Pending));
        let guard = CancelOnDrop(slot.clone());
        let bridge = session_loop.bridge.clone();
        let on_done = deliver.clone();
        let target = session_loop.clone();
        let start: StartFn = Box::new(move |py, on_loop| {
            let started = start_coroutine(py, &func, make_args, &target, on_loop, &slot, on_done.clone());
            if let Err(e) = started
                && let Some(deliver) = on_done.lock().ok().and_then(|mut d| d.take())
            {
                deliver(py, Err(e));
            }
        });
        let start = Arc::new(Mutex::new(Some(start)));
        let on_loop = start.clone();
        let job: LoopJob = Box::new(move |py| {
            if let Some(start) = on_loop.lock().ok().and_then(|mut s| s.take()) {
                start(py, true);
            }
        });
        // Straight to the loop's thread when it has a bridge; else through the Python thread.
        if bridge.as_ref().is_none_or(|b| b.push(job).is_err())
            && let Some(start) = start.lock().ok().and_then(|mut s| s.take())
        {
            run_blocking(move |py| start(py, false)).await?;
        }
        let result = settled(rx, &session_loop, "the async callback was dropped before it finished").await;
        guard.disarm();
        result
    }
}

/// Runs `job` on `target`'s loop thread (through its bridge, else `call_soon_threadsafe`) and
/// waits until it has run; on the Python thread instead when the loop is closed (found so
/// within [`LOOP_CHECK_EVERY`]). `Err` only when the interpreter is shutting down.
pub async fn run_on_loop(target: &Arc<SessionLoop>, job: LoopJob) -> Result<(), String> {
    fn take(job: &Mutex<Option<LoopJob>>) -> Option<LoopJob> {
        job.lock().ok().and_then(|mut j| j.take())
    }
    // Whoever comes first runs it: the loop, or the Python thread once the loop is closed.
    let job = Arc::new(Mutex::new(Some(job)));
    let (tx, rx) = oneshot::channel();
    let queued = job.clone();
    let on_loop: LoopJob = Box::new(move |py| {
        if let Some(job) = take(&queued) {
            job(py);
        }
        let _ = tx.send(());
    });
    let refused = match &target.bridge {
        Some(bridge) => bridge.push(on_loop).err(),
        None => Some(on_loop),
    };
    if let Some(on_loop) = refused {
        let event_loop = target.clone();
        run_blocking(move |py| {
            let call = LoopCall(Mutex::new(Some(on_loop)));
            match Bound::new(py, call) {
                Ok(call) if !is_closed(py, &event_loop) => {
                    if event_loop
                        .event_loop
                        .bind(py)
                        .call_method1("call_soon_threadsafe", (&call,))
                        .is_err()
                    {
                        call.get().run(py);
                    }
                }
                Ok(call) => call.get().run(py),
                Err(e) => e.print(py),
            }
        })
        .await?;
    }
    if settled(rx, target, JOB_DROPPED).await.is_ok() {
        return Ok(());
    }
    match take(&job) {
        Some(job) => run_blocking(job).await,
        None => Ok(()),
    }
}

const JOB_DROPPED: &str = "the work queued for the asyncio loop was dropped before it ran";

/// Waits for `rx`, checking every [`LOOP_CHECK_EVERY`] that `target`'s loop still runs (a
/// closed loop runs nothing more: its bridge is closed and the wait ends).
async fn settled<T>(mut rx: oneshot::Receiver<T>, target: &Arc<SessionLoop>, dropped: &str) -> Result<T, String> {
    loop {
        tokio::select! {
            done = &mut rx => return done.map_err(|_| dropped.to_owned()),
            () = tokio::time::sleep(LOOP_CHECK_EVERY) => {
                let closed = run_blocking({
                    let target = target.clone();
                    move |py| is_closed(py, &target)
                });
                if closed.await.unwrap_or(true) {
                    if let Some(bridge) = &target.bridge {
                        bridge.close();
                    }
                    return Err(LOOP_CLOSED.to_owned());
                }
            }
        }
    }
}

/// A [`LoopJob`] as a Python callable, for `call_soon_threadsafe`; runs once.
#[pyclass(module = "agent_core._native", frozen)]
struct LoopCall(Mutex<Option<LoopJob>>);

impl LoopCall {
    fn run(&self, py: Python<'_>) {
        if let Some(job) = self.0.lock().ok().and_then(|mut j| j.take()) {
            job(py);
        }
    }
}

#[pymethods]
impl LoopCall {
    fn __call__(&self, py: Python<'_>) {
        self.run(py);
    }
}

/// How often a wait for an async callback checks that its loop still runs.
const LOOP_CHECK_EVERY: Duration = Duration::from_secs(1);
const LOOP_CLOSED: &str = "the asyncio loop this async callback runs on was closed before it finished: keep the loop \
     that started the run open until the run ends";

/// Starts an async callback: on the loop's thread (`on_loop`) or from another thread.
type StartFn = Box<dyn for<'py> FnOnce(Python<'py>, bool) + Send>;

/// Schedules the callback on `target`'s loop, wrapped so that its own task settles the
/// result (`agent_core._glue.run_callback`); nothing when the Rust side is gone already.
fn start_coroutine<'py, F>(
    py: Python<'py>,
    func: &Py<PyAny>,
    make_args: F,
    target: &SessionLoop,
    on_loop: bool,
    slot: &Mutex<Slot>,
    deliver: Arc<Mutex<Option<Deliver>>>,
) -> PyResult<()>
where
    F: FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>>,
{
    let poisoned = || PyRuntimeError::new_err("poisoned lock");
    if matches!(*slot.lock().map_err(|_| poisoned())?, Slot::Dropped) {
        return Ok(());
    }
    let wrapped = run_callback(py)?.call1((func.bind(py), make_args(py)?, Settle { deliver }))?;
    let event_loop = target.event_loop.bind(py);
    let future = if on_loop {
        event_loop.call_method1("create_task", (wrapped,))?
    } else {
        py.import("asyncio")?
            .call_method1("run_coroutine_threadsafe", (wrapped, event_loop))?
    };
    let mut slot = slot.lock().map_err(|_| poisoned())?;
    if matches!(*slot, Slot::Dropped) {
        // Dropped while the coroutine was being scheduled; this thread may cancel it (a task
        // on its own loop's thread, or a thread-safe concurrent future).
        future.call_method0("cancel")?;
    } else {
        *slot = Slot::Scheduled {
            future: future.unbind(),
            bridge: on_loop.then(|| target.bridge.clone()).flatten(),
        };
    }
    Ok(())
}

/// `agent_core._glue.run_callback`, looked up once.
fn run_callback(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static RUN: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    RUN.get_or_try_init(py, || {
        Ok(py.import("agent_core._glue")?.getattr("run_callback")?.unbind())
    })
    .map(|run| run.bind(py))
}

/// What the callback's task does with its result (or exception): finish it and send
/// it to the waiting Rust future.
type Deliver = Box<dyn for<'py> FnOnce(Python<'py>, PyResult<Bound<'py, PyAny>>) + Send>;

/// Runs `f` with the GIL on the Python thread. `Err` when the interpreter is shutting down or
/// `f` panicked.
pub async fn run_blocking<T, F>(f: F) -> Result<T, String>
where
    T: Send + 'static,
    F: for<'py> FnOnce(Python<'py>) -> T + Send + 'static,
{
    crate::runtime::python_thread().run(f).await
}

/// Where the scheduled `concurrent.futures.Future` of an async callback is kept.
enum Slot {
    /// Not scheduled yet.
    Pending,
    /// Scheduled: cancel this future to cancel the Python task. A task started through a
    /// bridge is cancelled on its loop's thread, through the bridge (tasks are not
    /// thread-safe); a concurrent future from any thread.
    Scheduled {
        future: Py<PyAny>,
        bridge: Option<Arc<LoopBridge>>,
    },
    /// The Rust side is gone (cancelled) or done: cancel as soon as it is scheduled.
    Dropped,
}

/// Cancels the scheduled Python task when dropped (turn cancelled, tool timed out).
struct CancelOnDrop(Arc<Mutex<Slot>>);

impl CancelOnDrop {
    /// The callback finished: nothing to cancel.
    fn disarm(self) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Slot::Pending;
        }
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Ok(mut slot) = self.0.lock() else {
            return;
        };
        match std::mem::replace(&mut *slot, Slot::Dropped) {
            Slot::Scheduled { future, bridge } => {
                let cancel = move |py: Python<'_>| {
                    let _ = future.bind(py).call_method0("cancel");
                };
                match bridge {
                    // A closed loop runs nothing any more: nothing to cancel.
                    Some(bridge) => drop(bridge.push(Box::new(cancel))),
                    // Off the runtime's workers: taking the GIL may wait.
                    None => crate::runtime::python_thread().spawn(cancel),
                }
            }
            Slot::Pending => {}
            // Disarmed after completion.
            Slot::Dropped => {}
        }
    }
}

/// What `run_callback` settles an async callback with: `(True, value)`, `(False, exception)`,
/// or `(False, None)` when it was cancelled. Hands the outcome to the waiting Rust future.
#[pyclass(module = "agent_core._native")]
struct Settle {
    deliver: Arc<Mutex<Option<Deliver>>>,
}

#[pymethods]
impl Settle {
    fn __call__(&self, ok: bool, value: Bound<'_, PyAny>) {
        let py = value.py();
        let result = if ok {
            Ok(value)
        } else if value.is_none() {
            Err(PyRuntimeError::new_err("the async callback was cancelled"))
        } else {
            Err(PyErr::from_value(value))
        };
        if let Some(deliver) = self.deliver.lock().ok().and_then(|mut d| d.take()) {
            deliver(py, result);
        }
    }
}
