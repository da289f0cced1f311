//! The writer thread: the one write connection, fed by a bounded queue, applying jobs in the
//! order they were submitted and committing them in groups.
//!
//! A commit costs far more than the insert it carries, and so does handing each write to a
//! thread and waiting for its answer. The loop's writes therefore go through this queue
//! without waiting (write-behind). The thread applies jobs as they arrive inside one open
//! transaction (a job that could fail half-way runs in a savepoint of its own, so it rolls
//! back alone; one a full disk makes SQLite roll back ends the group, failing all of it; the
//! appends and the finished tool-call records of a burst are written together once the queue
//! is drained) and
//! commits the group when a caller waits for it, when no job has arrived for the group-commit
//! delay, or when the group is large or old enough. Jobs are applied strictly in submission
//! order, so a crash can lose only the newest writes, never one in the middle. A caller that
//! needs durability submits a barrier, which answers once everything before it is committed;
//! a write that failed behind the caller's back is reported by the next call for its session
//! (see [`Writer::take_failure`]).

mod batch_policy;
mod checkpoint;
mod group;
mod prepared;
mod recycle;
mod thread;

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering, fence};
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::Connection;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError, oneshot};

use agent_core::{SessionId, SessionInfo, StoreError, ToolCallRecord};

use crate::rows::MessageRow;

use checkpoint::Checkpointer;
use recycle::Returns;
use thread::serve;

/// Jobs queued or being applied at most. Callers wait for room beyond it, so a writer that
/// cannot keep up slows them down instead of growing without limit.
///
/// The queue itself is a ring of this many slots, allocated once: every job holds one of as
/// many permits until it is applied, so the ring is never full when a job is sent. An
/// unbounded channel allocates a block of slots every few dozen jobs instead, and at the
/// size of a job each block was a large allocation: glibc consolidated its free lists for
/// every one (`calloc` under `Channel::send` in `callgrind`, on the loop's thread).
const QUEUE_CAPACITY: usize = 1024;

/// A map keyed by session id. Every store call looks its session up here, on the loop's thread
/// and again on the writer's: foldhash hashes an id in a fraction of the time of the standard
/// SipHash, and is still seeded at random per map.
pub(super) type SessionMap<V> = HashMap<SessionId, V, foldhash::fast::RandomState>;

/// Work run on the writer's connection.
pub(crate) type Work = Box<dyn FnOnce(&Connection) -> Result<(), StoreError> + Send>;

/// An append: the rows and where they go.
pub(crate) struct Append {
    pub session: SessionId,
    pub first_seq: u64,
    pub rows: Vec<MessageRow>,
}

pub(super) enum Task {
    /// Work run in a savepoint of its own inside the group transaction, so its failure undoes
    /// it alone.
    Grouped(Work),
    /// A tool-call record; several of one call in a group become one write.
    Record(ToolCallRecord),
    /// Messages appended to a session from `first_seq`.
    Append(Append),
    /// A new session.
    CreateSession(SessionInfo),
    /// Drop what the writer knows of a deleted session.
    Forget(SessionId),
    /// Work that must run outside any transaction (a checkpoint, say).
    Alone(Work),
    /// Answers once every job before it is committed.
    Barrier,
}

/// A job handed to the queue: queued (or refused) at once, or waiting for room.
pub(crate) enum Queued<'a> {
    Now(Result<(), StoreError>),
    Later(Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + 'a>>),
}

impl Queued<'_> {
    /// The outcome of queueing the job, once it is queued.
    pub async fn finish(self) -> Result<(), StoreError> {
        match self {
            Queued::Now(result) => result,
            Queued::Later(waiting) => waiting.await,
        }
    }
}

/// Where a job's outcome goes.
pub(super) enum Reply {
    /// A caller waits for it.
    Waiting(oneshot::Sender<Result<(), StoreError>>),
    /// Nobody waits; a failure is kept for the session's next call.
    Behind(SessionId),
}

/// Sends a job's result where its reply goes (a failed write nobody waits for is kept for the
/// session's next call) and counts the job as finished.
fn settle(shared: &Shared, reply: Reply, result: Result<(), StoreError>) {
    match reply {
        Reply::Waiting(tx) => {
            let _ = tx.send(result);
        }
        Reply::Behind(session) => {
            if let Err(e) = result {
                tracing::warn!(session = %session, error = %e, "a queued store write failed");
                // The failure is kept before the queue forgets the session's sequence: a
                // caller that finds the sequence forgotten then finds the failure too, and
                // reports it rather than the sequence conflict the file would answer.
                lock(&shared.failures).entry(session.clone()).or_insert(e);
                shared.any_failure.store(true, Ordering::Release);
                // What the queue believed about the session's sequence is wrong now.
                lock(&shared.next_seq).remove(&session);
            }
        }
    }
    shared.finished.fetch_add(1, Ordering::AcqRel);
}

pub(super) struct Job {
    task: Task,
    reply: Reply,
    /// Its place in the bounded queue, given back once it is applied.
    permit: OwnedSemaphorePermit,
}

/// State shared by the callers and the writer thread.
#[derive(Default)]
pub(super) struct Shared {
    /// The first failure of a write-behind job, per session, until someone collects it.
    failures: Mutex<SessionMap<StoreError>>,
    /// Whether `failures` may hold anything: every write-behind call looks, almost always to
    /// find nothing, and this spares it the lock and the hashing.
    any_failure: AtomicBool,
    /// The sequence number each session expects next, as far as the queue knows.
    next_seq: Mutex<SessionMap<u64>>,
    submitted: AtomicU64,
    finished: AtomicU64,
    /// The thread is going to sleep or asleep (its queue stayed empty, a group open or not): a
    /// new job must wake it, unless `wakes_when_due` lets it sleep on.
    sleeping: AtomicBool,
    /// The sleeping thread has an open group and wakes by itself when the group is due (within
    /// the group commit delay), and it shares one CPU with the callers: a job nobody waits for
    /// can then wait for that wake-up instead of waking it. On one CPU every wake-up costs two
    /// context switches (the woken writer preempts the caller, and back), which at many
    /// sessions cost more than the writes themselves.
    wakes_when_due: AtomicBool,
    /// Rows and records the thread is done with, freed by the next submitting call.
    returns: Returns,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // The maps stay consistent whatever panicked while holding them.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn gone() -> StoreError {
    StoreError::Backend("the store's writer thread has stopped; reopen the store".to_owned())
}

/// How long a caller waiting for a commit polls for the answer before it sleeps.
const ANSWER_SPIN: Duration = Duration::from_micros(150);

/// The handle the store holds: submits jobs and owns the thread, which it joins on drop so
/// everything queued is committed before the store goes away.
pub(crate) struct Writer {
    jobs: Option<std_mpsc::SyncSender<Job>>,
    room: Arc<Semaphore>,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// Poll for a commit's answer before sleeping (not on a single CPU).
    spin_for_answers: bool,
    /// Stopped after the writer (fields drop after `Drop::drop` joined it).
    _checkpointer: Checkpointer,
}

impl Writer {
    /// Starts the thread that owns `conn`, and the checkpoint thread that owns
    /// `checkpoint_conn`; `delay` is how long the writer waits for more writes before
    /// committing a group nobody waits on.
    pub fn start(
        mut conn: Connection,
        checkpoint_conn: Connection,
        name: String,
        delay: Duration,
    ) -> Result<Self, StoreError> {
        tune(&conn)?;
        let (checkpointer, tail) = Checkpointer::start(&mut conn, checkpoint_conn)?;
        let (jobs, queue) = std_mpsc::sync_channel(QUEUE_CAPACITY);
        let shared = Arc::new(Shared::default());
        let for_thread = shared.clone();
        let thread = std::thread::Builder::new()
            .name(name)
            .spawn(move || {
                batch_policy::run_as_batch();
                serve(conn, queue, &for_thread, &tail, delay)
            })
            .map_err(|e| StoreError::Backend(format!("cannot start the store's writer thread: {e}")))?;
        Ok(Writer {
            jobs: Some(jobs),
            room: Arc::new(Semaphore::new(QUEUE_CAPACITY)),
            shared,
            thread: Some(thread),
            spin_for_answers: several_cpus(),
            _checkpointer: checkpointer,
        })
    }

    /// Whether a job just queued may be left for the sleeping thread's own wake-up (see
    /// [`Shared::wakes_when_due`]): nobody waits for it, and the queue is far from full.
    fn may_wait_for_due(&self, waits: bool) -> bool {
        // A permit is held from submission until the thread has applied the job.
        let queued = QUEUE_CAPACITY.saturating_sub(self.room.available_permits());
        !waits && self.shared.wakes_when_due.load(Ordering::SeqCst) && queued < QUEUE_CAPACITY / 4
    }

    async fn submit(&self, task: Task, reply: Reply) -> Result<(), StoreError> {
        self.submit_now(task, reply).finish().await
    }

    /// Queues a job now if the queue has room (almost always), or gives back what waits for
    /// room. Not an `async fn`: the store's trait methods return boxed futures, and every
    /// `async fn` awaited in them adds its arguments and its own futures to their size.
    /// Through `submit`, a queued tool-call record made that box larger than glibc's small
    /// sizes, and each allocation of it consolidated the allocator's free lists
    /// (`malloc_consolidate` under `upsert_tool_call` in `perf record`).
    fn submit_now(&self, task: Task, reply: Reply) -> Queued<'_> {
        self.shared.returns.free_returned();
        match self.room.clone().try_acquire_owned() {
            Ok(permit) => Queued::Now(self.send(task, reply, permit)),
            Err(TryAcquireError::Closed) => Queued::Now(Err(gone())),
            Err(TryAcquireError::NoPermits) => Queued::Later(Box::pin(async move {
                let permit = self.room.clone().acquire_owned().await.map_err(|_| gone())?;
                self.send(task, reply, permit)
            })),
        }
    }

    /// Sends a job that holds its place in the queue to the thread.
    fn send(&self, task: Task, reply: Reply, permit: OwnedSemaphorePermit) -> Result<(), StoreError> {
        let waits = matches!(reply, Reply::Waiting(_));
        self.shared.submitted.fetch_add(1, Ordering::AcqRel);
        let sent = match &self.jobs {
            Some(jobs) => match jobs.try_send(Job { task, reply, permit }) {
                Ok(()) => true,
                // Cannot happen while every job holds a permit (see `QUEUE_CAPACITY`); were it
                // to, waiting for the writer to take one job is still correct.
                Err(std_mpsc::TrySendError::Full(job)) => jobs.send(job).is_ok(),
                Err(std_mpsc::TrySendError::Disconnected(_)) => false,
            },
            None => false,
        };
        if !sent {
            self.shared.finished.fetch_add(1, Ordering::AcqRel);
            return Err(gone());
        }
        // Only a sleeping thread needs waking, and only by the first job of a burst: an awake
        // one drains the queue by itself (and commits at once for a caller that waits). The
        // fence pairs with the one in `serve`: the thread sees the job, or we see the flag.
        fence(Ordering::SeqCst);
        if !self.may_wait_for_due(waits)
            && self.shared.sleeping.swap(false, Ordering::SeqCst)
            && let Some(thread) = &self.thread
        {
            thread.thread().unpark();
        }
        Ok(())
    }

    async fn submit_and_wait(&self, task: Task) -> Result<(), StoreError> {
        let (tx, mut rx) = oneshot::channel();
        self.submit(task, Reply::Waiting(tx)).await?;
        // A commit usually answers within ~100 us. Polling for it while letting every other
        // ready task run first keeps this executor thread from going to sleep and being woken
        // again for it, which costs more than the wait on a VM.
        if self.spin_for_answers {
            let until = Instant::now() + ANSWER_SPIN;
            while Instant::now() < until {
                match rx.try_recv() {
                    Ok(result) => return result,
                    Err(oneshot::error::TryRecvError::Closed) => return Err(gone()),
                    Err(oneshot::error::TryRecvError::Empty) => tokio::task::yield_now().await,
                }
            }
        }
        rx.await.map_err(|_| gone())?
    }

    /// Runs `f` in the next group transaction and returns its value once it is committed.
    pub async fn run<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        self.run_work(f, Task::Grouped).await
    }

    /// Runs `f` outside any transaction, after everything queued before it.
    pub async fn run_alone<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        self.run_work(f, Task::Alone).await
    }

    /// Runs `f` as the task `as_task` makes of it, and returns its value once answered.
    async fn run_work<T, F>(&self, f: F, as_task: fn(Work) -> Task) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let slot = Arc::new(Mutex::new(None));
        let out = slot.clone();
        let work: Work = Box::new(move |conn| {
            *lock(&out) = Some(f(conn)?);
            Ok(())
        });
        self.submit_and_wait(as_task(work)).await?;
        let value = lock(&slot).take();
        value.ok_or_else(gone)
    }

    /// Queues a task of `session` without waiting for it. Fails at once, queueing nothing, if
    /// an earlier write-behind job of the session failed, and leaves that failure for the
    /// session's next append or flush: the loop logs a tool-call record it could not write and
    /// goes on, and its next append would otherwise hear of nothing but a sequence conflict
    /// (the rows the failed job carried are not in the file), not of the full disk behind it.
    fn submit_behind(&self, session: SessionId, task: Task) -> Queued<'_> {
        if let Some(failure) = self.peek_failure(&session) {
            return Queued::Now(Err(failure));
        }
        self.submit_now(task, Reply::Behind(session))
    }

    /// Creates a session and waits for the commit.
    pub async fn create_session(&self, info: SessionInfo) -> Result<(), StoreError> {
        let id = info.id.clone();
        self.submit_and_wait(Task::CreateSession(info)).await?;
        self.set_new_session(&id);
        Ok(())
    }

    /// Queues a session's creation without waiting for it (see [`Self::submit_behind`]); its
    /// appends can be queued right after it. The queue learns of the session before the job
    /// is sent, so that a failure of the job (which makes it forget the session) comes after.
    pub async fn create_session_behind(&self, info: SessionInfo) -> Result<(), StoreError> {
        let id = info.id.clone();
        self.set_new_session(&id);
        let queued = self.submit_behind(id.clone(), Task::CreateSession(info)).finish().await;
        if queued.is_err() {
            lock(&self.shared.next_seq).remove(&id);
        }
        queued
    }

    /// A new session expects sequence number 1, whatever was known of an earlier session with
    /// this id.
    fn set_new_session(&self, session: &SessionId) {
        lock(&self.shared.next_seq).insert(session.clone(), 1);
    }

    /// Appends rows and waits for the commit.
    pub async fn append(&self, append: Append) -> Result<(), StoreError> {
        self.submit_and_wait(Task::Append(append)).await
    }

    /// Queues an append without waiting for it. Unlike the other queued writes it does not
    /// look for an earlier failure of the session: the caller must have done so with
    /// [`Self::take_failure`] before reserving the append's sequence numbers.
    pub fn append_behind(&self, append: Append) -> Queued<'_> {
        let session = append.session.clone();
        self.submit_now(Task::Append(append), Reply::Behind(session))
    }

    /// Writes a tool-call record and waits for the commit.
    pub async fn record(&self, record: ToolCallRecord) -> Result<(), StoreError> {
        self.submit_and_wait(Task::Record(record)).await
    }

    /// Queues a tool-call record without waiting for it (see [`Self::submit_behind`]).
    pub fn record_behind(&self, record: ToolCallRecord) -> Queued<'_> {
        self.submit_behind(record.session_id.clone(), Task::Record(record))
    }

    /// Waits until everything queued so far is committed.
    pub async fn barrier(&self) -> Result<(), StoreError> {
        self.submit_and_wait(Task::Barrier).await
    }

    /// Whether every submitted job has been applied (reads need no barrier then).
    pub fn is_idle(&self) -> bool {
        self.shared.finished.load(Ordering::Acquire) >= self.shared.submitted.load(Ordering::Acquire)
    }

    /// The failure of a write-behind job of `session` nobody has collected yet.
    pub fn take_failure(&self, session: &SessionId) -> Option<StoreError> {
        // A failure recorded before the answer this caller last received is seen here (the
        // answer is sent after it); one racing with this call is reported by the next.
        if !self.shared.any_failure.load(Ordering::Acquire) {
            return None;
        }
        let mut failures = lock(&self.shared.failures);
        let failure = failures.remove(session);
        if failures.is_empty() {
            self.shared.any_failure.store(false, Ordering::Release);
        }
        failure
    }

    /// The failure of a write-behind job of `session` nobody has collected yet, left for the
    /// call that collects it.
    fn peek_failure(&self, session: &SessionId) -> Option<StoreError> {
        if !self.shared.any_failure.load(Ordering::Acquire) {
            return None;
        }
        lock(&self.shared.failures).get(session).cloned()
    }

    /// Reserves `count` sequence numbers from `first_seq` if that is what the queue knows
    /// `session` to expect next, and says whether it did. When it did not (the number is not
    /// known yet, or differs), the database must answer.
    pub fn reserve_seq(&self, session: &SessionId, first_seq: u64, count: u64) -> bool {
        let mut next = lock(&self.shared.next_seq);
        match next.get_mut(session) {
            Some(expected) if *expected == first_seq => {
                *expected += count;
                true
            }
            _ => false,
        }
    }

    /// Whether this process created or wrote to `session`, so its writes can be queued (a
    /// queued creation counts: should it fail, the session's writes fail after it).
    pub fn knows(&self, session: &SessionId) -> bool {
        lock(&self.shared.next_seq).contains_key(session)
    }

    /// Records what the database said the session expects next (after a committed append).
    pub fn learn_seq(&self, session: &SessionId, next_seq: u64) {
        let mut next = lock(&self.shared.next_seq);
        let entry = next.entry(session.clone()).or_insert(next_seq);
        *entry = (*entry).max(next_seq);
    }

    /// Forgets a deleted session, here and in the writer thread's ledger (its key and next
    /// sequence number), after everything queued before.
    pub async fn forget(&self, session: &SessionId) -> Result<(), StoreError> {
        lock(&self.shared.next_seq).remove(session);
        lock(&self.shared.failures).remove(session);
        self.submit(Task::Forget(session.clone()), Reply::Behind(session.clone()))
            .await
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Closing the queue lets the thread commit what is left and stop.
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

/// Statements the writer's statement cache keeps: every statement of the write path beyond
/// the hot ones it holds itself (see `prepared`), with room to spare, so none is ever
/// finalized and prepared again (rusqlite's default keeps 16).
const STATEMENT_CACHE: usize = 64;

/// Settings of the writer's connection alone.
///
/// `temp_store = MEMORY`: the appends of a burst that takes several statements are inserted
/// in a savepoint, and SQLite copies every page the savepoint (or a statement of several
/// rows) changes into a statement journal first. That journal spills to a temporary file
/// once it passes 64 KiB, which at 100 sessions it did in most bursts: one file created,
/// written and deleted per burst, about a sixth of the writer's time (`perf record`,
/// `open`/`pwrite`/`close` under `memjrnlWrite`). In memory it is a copy. Nothing else of the
/// writer uses temporary storage (no sorts, no temporary tables).
fn tune(conn: &Connection) -> Result<(), StoreError> {
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    conn.pragma_update(None, "temp_store", "MEMORY")
        .map_err(crate::sql_error::backend)
}

/// Whether there is more than one CPU to run on (so waiting awake for another thread makes
/// sense).
fn several_cpus() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() > 1)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn the_writer_keeps_statement_journals_in_memory() {
        let conn = Connection::open_in_memory().unwrap();
        tune(&conn).unwrap();
        let temp_store: i64 = conn.query_row("PRAGMA temp_store", [], |r| r.get(0)).unwrap();
        assert_eq!(temp_store, 2, "MEMORY");
    }
}
