//! Running work on an asyncio loop's thread, woken from Rust threads without the GIL.
//!
//! Handing a result to asyncio (`call_soon_threadsafe`) or starting an `async def` tool
//! (`run_coroutine_threadsafe`) needs the GIL, so a runtime worker had to pass the work to
//! another thread first, which then woke the loop: two thread hops per await. A bridge is a
//! socket pair whose reading end the loop watches (`loop.add_reader`): a worker queues the work
//! and writes one byte (only when the queue was empty), and the loop's thread runs the queued
//! work, in order, when it wakes. One hop, and one wake-up for a whole queue.
//!
//! A loop that cannot watch a file descriptor (the proactor loop on Windows) has no bridge;
//! callers then go through the Python thread as before.

use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// Work for the loop's thread, run with the GIL.
pub type LoopJob = Box<dyn for<'py> FnOnce(Python<'py>) + Send>;

/// Queues work for one asyncio loop (see the module docs).
pub struct LoopBridge {
    queue: Mutex<Vec<LoopJob>>,
    /// A byte is on its way: the loop's thread will drain the queue.
    woken: AtomicBool,
    /// The loop stopped watching (it raised while draining, or was closed): work is refused.
    closed: AtomicBool,
    /// The writing end of the socket pair (none for a loop without a bridge).
    writer: Option<UnixStream>,
}

impl LoopBridge {
    /// The bridge of the running loop `event_loop`, made on first use. Must be called on the
    /// loop's own thread (`add_reader` is not thread-safe). `None` when the loop cannot watch
    /// a file descriptor.
    pub fn of(py: Python<'_>, event_loop: &Bound<'_, PyAny>) -> Option<Arc<LoopBridge>> {
        let bridges = registry(py).ok()?.bind(py);
        if let Ok(known) = bridges.call_method1("get", (event_loop,))
            && let Ok(known) = known.cast::<BridgeHandle>()
        {
            let known = known.get().0.clone();
            return (!known.closed.load(Ordering::Acquire)).then_some(known);
        }
        let made = Self::register(event_loop).ok();
        let handle = BridgeHandle(made.clone().unwrap_or_else(Self::refusing));
        // A loop without a bridge is remembered too, so that it is not asked again.
        drop(bridges.set_item(event_loop, handle));
        made
    }

    fn register(event_loop: &Bound<'_, PyAny>) -> PyResult<Arc<LoopBridge>> {
        let (reader, writer) = UnixStream::pair()?;
        reader.set_nonblocking(true)?;
        writer.set_nonblocking(true)?;
        let bridge = Arc::new(LoopBridge {
            queue: Mutex::new(Vec::new()),
            woken: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            writer: Some(writer),
        });
        let fd = reader.as_raw_fd();
        let drain = Drain {
            bridge: bridge.clone(),
            reader,
        };
        event_loop.call_method1("add_reader", (fd, drain))?;
        Ok(bridge)
    }

    /// A bridge that refuses all work (for loops that have none).
    fn refusing() -> Arc<LoopBridge> {
        Arc::new(LoopBridge {
            queue: Mutex::new(Vec::new()),
            woken: AtomicBool::new(false),
            closed: AtomicBool::new(true),
            writer: None,
        })
    }

    /// Queues `job` for the loop's thread; gives it back when the loop no longer watches.
    pub fn push(&self, job: LoopJob) -> Result<(), LoopJob> {
        if self.closed.load(Ordering::Acquire) {
            return Err(job);
        }
        match self.queue.lock() {
            Ok(mut queue) => queue.push(job),
            Err(_) => return Err(job),
        }
        if !self.woken.swap(true, Ordering::AcqRel)
            && let Some(writer) = &self.writer
        {
            // WouldBlock: the socket is full of wake-ups already.
            let _ = (&*writer).write(&[1]);
        }
        Ok(())
    }

    /// Marks the loop as closed: work is refused from now on.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
    }
}

/// The loops' bridges, by loop: a `weakref.WeakKeyDictionary`, so that a loop that is gone
/// takes its bridge with it.
fn registry(py: Python<'_>) -> PyResult<&Py<PyAny>> {
    static BRIDGES: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    BRIDGES.get_or_try_init(py, || {
        Ok(py.import("weakref")?.getattr("WeakKeyDictionary")?.call0()?.unbind())
    })
}

/// What the registry keeps for a loop.
#[pyclass(module = "agent_core._native", frozen)]
struct BridgeHandle(Arc<LoopBridge>);

/// The loop's reader callback: drains the wake-up bytes, then runs the queued work.
#[pyclass(module = "agent_core._native", frozen)]
struct Drain {
    bridge: Arc<LoopBridge>,
    reader: UnixStream,
}

#[pymethods]
impl Drain {
    fn __call__(&self, py: Python<'_>) {
        // One byte is written per wake-up (`woken`), so one read usually empties the socket;
        // a full buffer means more may be waiting, and a byte left behind only runs this again.
        let mut bytes = [0_u8; 64];
        loop {
            match (&self.reader).read(&mut bytes) {
                Ok(n) if n == bytes.len() => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Ok(_) | Err(_) => break,
            }
        }
        // Cleared before taking the queue: work queued from now on writes a new byte.
        self.bridge.woken.store(false, Ordering::Release);
        let jobs = match self.bridge.queue.lock() {
            Ok(mut queue) => std::mem::take(&mut *queue),
            Err(_) => return,
        };
        for job in jobs {
            job(py);
        }
    }
}
