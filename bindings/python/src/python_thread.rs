//! The thread that runs Python for the runtime.
//!
//! Python work from Rust (a `def` tool, a gate, handing a result to asyncio, scheduling an
//! `async def`) must not take the GIL on a runtime worker, or one slow callback would stall
//! every session on that worker. Sending each piece of work to a fresh thread of Tokio's
//! blocking pool cost two thread switches per call (more on one CPU, where the woken thread
//! preempts the one that woke it) and a new Python thread state per call.
//!
//! This thread instead keeps one thread state for its whole life and runs queued work in
//! batches: it takes the GIL once per batch, and wakes the waiting tasks after the batch, with
//! the GIL released. Work queued from a runtime worker does not wake the thread at once: the
//! thread is woken when a worker runs out of other work and parks (or when the queue grows
//! long), so that at many sessions a batch holds the tool calls of many sessions.
//!
//! A callback that blocks (a `def` tool waiting on the network) must not hold up the others:
//! while one piece of work has run longer than [`STUCK_AFTER`], new work goes to the blocking
//! pool, and work already queued is taken back to the blocking pool by its caller after
//! [`TAKE_BACK_AFTER`].

use std::cell::Cell;
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use pyo3::prelude::*;
use tokio::sync::oneshot;

/// How long one piece of work may run before new work bypasses the thread.
const STUCK_AFTER: Duration = Duration::from_millis(1);
/// How long queued work waits before its caller runs it on the blocking pool instead.
const TAKE_BACK_AFTER: Duration = Duration::from_millis(2);
/// Queued work that wakes the thread without waiting for a worker to park.
const WAKE_AT: usize = 32;
/// Queued work beyond which new work goes to the blocking pool (the queue stays bounded).
const CAPACITY: usize = 4096;

/// Python work: runs with the GIL and returns what to do once the GIL is released (wake the
/// waiting task).
type Job = Box<dyn for<'py> FnOnce(Python<'py>) -> Completion + Send>;
type Completion = Box<dyn FnOnce() + Send>;

thread_local! {
    /// Whether this thread is a runtime worker whose parking wakes the Python thread.
    static PARKING_WORKER: Cell<bool> = const { Cell::new(false) };
}

/// Runs Python work for one runtime (see the module docs). Cheap to share; the thread starts
/// with the first piece of work.
pub struct PythonThread {
    shared: Arc<Shared>,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    /// Work was queued without waking the thread: the next worker to park wakes it.
    wake_on_park: AtomicBool,
    /// When the piece of work running now started, in nanoseconds after `epoch` (0: none).
    running_since: AtomicU64,
    epoch: Instant,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Arc<JobCell>>,
    started: bool,
    sleeping: bool,
}

/// One piece of work, taken exactly once: by the thread or, after [`TAKE_BACK_AFTER`], by
/// its caller.
struct JobCell(Mutex<Option<Job>>);

impl JobCell {
    fn take(&self) -> Option<Job> {
        self.0.lock().ok().and_then(|mut job| job.take())
    }
}

impl Default for PythonThread {
    fn default() -> Self {
        PythonThread {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                wake: Condvar::new(),
                wake_on_park: AtomicBool::new(false),
                running_since: AtomicU64::new(0),
                epoch: Instant::now(),
            }),
        }
    }
}

impl PythonThread {
    /// Called by a runtime worker just before it parks: wakes the thread for the work queued
    /// while the worker was busy.
    pub fn on_worker_park(&self) {
        PARKING_WORKER.with(|w| w.set(true));
        if !self.shared.wake_on_park.swap(false, Ordering::AcqRel) {
            return;
        }
        let wake = match self.shared.lock() {
            Some(mut state) if state.sleeping && !state.queue.is_empty() => {
                state.sleeping = false;
                true
            }
            _ => false,
        };
        // Notified after the lock is released: on one CPU the woken thread runs at once, and
        // would otherwise only find the lock still held and sleep again.
        if wake {
            self.shared.wake.notify_one();
        }
    }

    /// Runs `f` with the GIL off the runtime's workers and returns its result. `Err` when the
    /// interpreter is shutting down or `f` panicked.
    pub async fn run<T, F>(&self, f: F) -> Result<T, String>
    where
        T: Send + 'static,
        F: for<'py> FnOnce(Python<'py>) -> T + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |py| {
            let value = f(py);
            Box::new(move || {
                let _ = tx.send(value);
            })
        });
        let cell = Arc::new(JobCell(Mutex::new(Some(job))));
        let mut rx = rx;
        if self.submit(&cell) {
            tokio::select! {
                biased;
                done = &mut rx => return done.map_err(|_| gone()),
                () = tokio::time::sleep(TAKE_BACK_AFTER) => {}
            }
        }
        // Not started: the thread is busy with work that blocks, or refused it.
        if let Some(job) = cell.take() {
            drop(tokio::task::spawn_blocking(move || run_alone(job)));
        }
        rx.await.map_err(|_| gone())
    }

    /// Runs `f` with the GIL without waiting for it (from inside or outside the runtime).
    pub fn spawn<F>(self: &Arc<Self>, f: F)
    where
        F: for<'py> FnOnce(Python<'py>) + Send + 'static,
    {
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let this = self.clone();
            drop(handle.spawn(async move { this.run(f).await }));
        } else {
            crate::interpreter::attach(f);
        }
    }

    /// Queues the work; false when it must run elsewhere (the thread is stuck or the queue
    /// full).
    fn submit(&self, cell: &Arc<JobCell>) -> bool {
        let Some(mut state) = self.shared.lock() else {
            return false;
        };
        if self.shared.stuck() || state.queue.len() >= CAPACITY {
            return false;
        }
        state.queue.push_back(cell.clone());
        if !state.started {
            state.started = true;
            let shared = self.shared.clone();
            let spawned = std::thread::Builder::new()
                .name("agent-core-python".into())
                .spawn(move || shared.serve());
            if spawned.is_err() {
                state.started = false;
                state.queue.pop_back();
                return false;
            }
        } else if state.sleeping {
            if PARKING_WORKER.with(Cell::get) && state.queue.len() < WAKE_AT {
                self.shared.wake_on_park.store(true, Ordering::Release);
            } else {
                state.sleeping = false;
                drop(state);
                self.shared.wake.notify_one();
            }
        }
        true
    }
}

impl Shared {
    fn lock(&self) -> Option<MutexGuard<'_, State>> {
        self.state.lock().ok()
    }

    fn now_nanos(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos())
            .unwrap_or(u64::MAX)
            .max(1)
    }

    /// Whether the piece of work running now has run longer than [`STUCK_AFTER`].
    fn stuck(&self) -> bool {
        let since = self.running_since.load(Ordering::Acquire);
        since != 0 && self.now_nanos().saturating_sub(since) > STUCK_AFTER.as_nanos() as u64
    }

    /// The thread's body: one thread state for its whole life, the GIL taken once per batch.
    fn serve(&self) {
        if !crate::interpreter::enter() {
            self.refuse_forever(Vec::new());
        }
        Python::attach(|py| {
            let mut completions: Vec<Completion> = Vec::new();
            loop {
                crate::interpreter::leave();
                let batch = py.detach(|| {
                    for complete in completions.drain(..) {
                        complete();
                    }
                    let batch = self.next_batch();
                    if !crate::interpreter::enter() {
                        // The interpreter is finalizing: never take the GIL again.
                        self.refuse_forever(batch);
                    }
                    batch
                });
                for cell in batch {
                    let Some(job) = cell.take() else { continue };
                    self.running_since.store(self.now_nanos(), Ordering::Release);
                    // A panicking job drops its completion: its caller sees an error.
                    if let Ok(complete) = catch_unwind(AssertUnwindSafe(|| job(py))) {
                        completions.push(complete);
                    }
                }
                self.running_since.store(0, Ordering::Release);
            }
        })
    }

    /// Waits for queued work and takes all of it.
    fn next_batch(&self) -> Vec<Arc<JobCell>> {
        let Some(mut state) = self.lock() else {
            return Vec::new();
        };
        while state.queue.is_empty() {
            state.sleeping = true;
            state = match self.wake.wait(state) {
                Ok(state) => state,
                Err(_) => return Vec::new(),
            };
        }
        state.sleeping = false;
        state.queue.drain(..).collect()
    }

    /// After the interpreter started finalizing: drops queued and new work (its callers see
    /// an error) and never returns, so the GIL is never taken again.
    fn refuse_forever(&self, batch: Vec<Arc<JobCell>>) -> ! {
        drop(batch);
        loop {
            drop(self.next_batch());
        }
    }
}

/// Runs one piece of work on the calling thread (the blocking pool).
fn run_alone(job: Job) {
    if let Some(complete) = crate::interpreter::attach(job) {
        complete();
    }
}

fn gone() -> String {
    "the Python interpreter is shutting down".to_owned()
}
