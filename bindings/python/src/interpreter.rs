//! Taking the GIL from Rust threads safely around interpreter shutdown.
//!
//! A Rust thread that takes the GIL while the interpreter finalizes is killed by CPython in the
//! middle of Rust code (a crash at exit). So every GIL acquisition from a Rust thread goes
//! through [`attach`] (or [`enter`] and [`leave`]), and an `atexit` hook ([`shutdown`]) stops
//! new ones and waits for those in flight before finalization starts.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

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

/// [`attach`] for a callback the core calls synchronously from a runtime worker (a script
/// function, a crypt, an opened-tab policy): the worker hands its other tasks to another
/// worker while `f` holds the GIL, so they keep moving. On the current-thread runtime of a
/// one-CPU process nothing could run them meanwhile anyway, so it simply waits.
pub fn attach_blocking<T>(f: impl FnOnce(Python<'_>) -> T) -> Option<T> {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(|| attach(f))
        }
        _ => attach(f),
    }
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
