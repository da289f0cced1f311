//! Checkpoints off the write path: SQLite's automatic checkpoint runs inside the commit that
//! crosses the threshold and syncs the files there, stalling every write queued behind it.
//! The writer's connection has it turned off; its WAL hook wakes this thread instead, which
//! runs a passive checkpoint (it never blocks the writer) on a connection of its own.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::thread::JoinHandle;

use rusqlite::Connection;

use agent_core::StoreError;

/// WAL pages after which a checkpoint is due (SQLite's own default).
const CHECKPOINT_PAGES: i64 = 1000;

#[derive(Default)]
struct Signals {
    /// A checkpoint is due.
    due: AtomicBool,
    /// The store is closing.
    stop: AtomicBool,
}

/// The checkpoint thread; stopped and joined on drop.
pub(super) struct Checkpointer {
    signals: Arc<Signals>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts the thread with its own connection `conn`, and hooks `writer` to wake it.
    pub fn start(writer: &mut Connection, conn: Connection) -> Result<Self, StoreError> {
        let signals = Arc::new(Signals::default());
        let for_thread = signals.clone();
        let thread = std::thread::Builder::new()
            .name("agent-store checkpoint".to_owned())
            .spawn(move || run(&conn, &for_thread))
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
            .and_then(|()| writer.wal_hook(Some(hook)))
            .map_err(crate::sqlite::backend)?;
        Ok(Checkpointer {
            signals,
            thread: Some(thread),
        })
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
            let outcome = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
                Ok((r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
            });
            match outcome {
                Ok((log, done)) => tracing::debug!(log, done, "passive WAL checkpoint"),
                Err(e) => tracing::warn!(error = %e, "WAL checkpoint failed; SQLite retries on the next one"),
            }
        }
        std::thread::park();
    }
}
