//! Checkpoints off the write path: SQLite's automatic checkpoint runs inside the commit that
//! crosses the threshold and syncs the files there, stalling every write queued behind it.
//! The writer's connection has it turned off; its WAL hook wakes this thread instead, which
//! checkpoints on a connection of its own.
//!
//! A checkpoint on another connection is not enough by itself: the log starts over only if a
//! write transaction begins when every frame has been copied, and under a steady stream of
//! writes the writer always adds frames while the copy runs (and takes the write lock again
//! microseconds after each commit, so a checkpoint that waits for it starves): the log would
//! grow with everything ever written. So this thread copies the bulk passively while the
//! writer goes on, then asks the writer to copy the few frames added meanwhile itself, between
//! two groups ([`TailCheckpoint`]); its next write then starts the log over.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::thread::JoinHandle;

use rusqlite::Connection;

use agent_core::StoreError;

/// WAL pages after which a checkpoint is due (SQLite's own default).
const CHECKPOINT_PAGES: i64 = 1000;

/// What the log file is cut back to when it starts over, after a burst made it grow.
const LOG_SIZE_LIMIT_BYTES: i64 = 16 * 1024 * 1024;

#[derive(Default)]
struct Signals {
    /// A checkpoint is due.
    due: AtomicBool,
    /// The bulk is copied: the writer should copy the tail.
    tail_due: AtomicBool,
    /// The store is closing.
    stop: AtomicBool,
}

/// The writer's side: copies what the checkpoint thread left, between two groups.
pub(super) struct TailCheckpoint {
    signals: Arc<Signals>,
}

impl TailCheckpoint {
    /// Runs the tail checkpoint on the writer's connection if the checkpoint thread asked for
    /// it. Call it with no transaction open.
    pub fn run_if_due(&self, writer: &Connection) {
        if self.signals.tail_due.swap(false, Ordering::AcqRel) {
            let _ = checkpoint(writer, "PASSIVE");
        }
    }
}

/// The checkpoint thread; stopped and joined on drop.
pub(super) struct Checkpointer {
    signals: Arc<Signals>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts the thread with its own connection `conn`, and hooks `writer` to wake it.
    pub fn start(writer: &mut Connection, conn: Connection) -> Result<(Self, TailCheckpoint), StoreError> {
        let signals = Arc::new(Signals::default());
        let for_thread = signals.clone();
        let thread = std::thread::Builder::new()
            .name("agent-store checkpoint".to_owned())
            .spawn(move || {
                super::batch_policy::run_as_batch();
                run(&conn, &for_thread)
            })
            .map_err(|e| StoreError::Backend(format!("cannot start the store's checkpoint thread: {e}")))?;
        let waker = thread.thread().clone();
        let hook_signals = signals.clone();
        // Asks again only once the log has grown by another threshold since the last ask, so
        // a checkpoint held back by a long reader is not retried on every commit.
        let asked_at = AtomicI64::new(0);
        let hook = move |_: &mut rusqlite::hooks::Wal, pages: std::ffi::c_int| {
            let pages = i64::from(pages);
            let last = asked_at.load(Ordering::Relaxed);
            if pages < last {
                asked_at.store(0, Ordering::Relaxed); // the log was restarted
            }
            if pages >= CHECKPOINT_PAGES && pages >= asked_at.load(Ordering::Relaxed) + CHECKPOINT_PAGES {
                asked_at.store(pages, Ordering::Relaxed);
                hook_signals.due.store(true, Ordering::Release);
                waker.unpark();
            }
            Ok(())
        };
        writer
            .pragma_update(None, "wal_autocheckpoint", 0)
            .and_then(|()| {
                writer.query_row(
                    &format!("PRAGMA journal_size_limit = {LOG_SIZE_LIMIT_BYTES}"),
                    [],
                    |_| Ok(()),
                )
            })
            .and_then(|()| writer.wal_hook(Some(hook)))
            .map_err(crate::sql_error::backend)?;
        let tail = TailCheckpoint {
            signals: signals.clone(),
        };
        Ok((
            Checkpointer {
                signals,
                thread: Some(thread),
            },
            tail,
        ))
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.signals.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

fn run(conn: &Connection, signals: &Signals) {
    while !signals.stop.load(Ordering::Acquire) {
        if signals.due.swap(false, Ordering::AcqRel) {
            // The tail costs the writer a sync or two: ask for it only after a bulk copy.
            if checkpoint(conn, "PASSIVE") {
                signals.tail_due.store(true, Ordering::Release);
            }
        }
        std::thread::park();
    }
}

/// Runs one checkpoint in `mode`; whether it ran without SQLite being busy. A failure is
/// logged (the next one retries).
fn checkpoint(conn: &Connection, mode: &str) -> bool {
    let outcome = conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
    });
    match outcome {
        Ok((busy, log, done)) => {
            tracing::debug!(mode, busy, log, done, "WAL checkpoint");
            busy == 0
        }
        Err(e) => {
            tracing::warn!(mode, error = %e, "WAL checkpoint failed; the next one retries");
            false
        }
    }
}
