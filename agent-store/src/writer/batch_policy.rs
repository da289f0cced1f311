//! The store's own threads yield to the threads that feed them.
//!
//! The writer sleeps most of the time and wakes for writes. Under Linux's default policy a
//! thread that has slept is owed CPU time, so each wake-up preempts the thread that sent the
//! write: on one CPU, at 100 sessions, about 1 700 involuntary context switches per 22 000
//! model calls. As batch work (`SCHED_BATCH`, the same share of the CPU, no preemption on
//! wake-up) the writer runs when the sender blocks or its slice ends, and takes what has
//! queued by then in one go: about 400 (docs/benchmarks.md).

/// Runs the calling thread as batch work, if it runs under the default policy. A thread the
/// host gave a real-time or idle policy keeps it: demoting a real-time thread would leave
/// the writer behind every real-time caller.
pub(super) fn run_as_batch() {
    #[cfg(target_os = "linux")]
    linux::run_as_batch();
}

#[cfg(target_os = "linux")]
mod linux {
    #![allow(unsafe_code)]

    pub(super) fn run_as_batch() {
        // SAFETY: pid 0 names the calling thread; neither call keeps a pointer past itself.
        let policy = unsafe { libc::sched_getscheduler(0) };
        if policy != libc::SCHED_OTHER {
            return;
        }
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: as above; `param` lives for the call.
        if unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) } != 0 {
            // A sandbox that forbids the call: the writer works the same, with more switches.
            tracing::debug!(
                error = %std::io::Error::last_os_error(),
                "the store's thread keeps the default scheduling policy"
            );
        }
    }
}
