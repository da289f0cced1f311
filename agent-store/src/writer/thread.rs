//! The writer thread itself: its loop (drain the queue, apply each job in the open group,
//! commit when due, wait awake briefly, then sleep until woken) and how it answers jobs.

use std::sync::atomic::{Ordering, fence};
use std::sync::mpsc::{self as std_mpsc, TryRecvError};
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::checkpoint::TailCheckpoint;
use super::group::{Buffers, Group, Ledger, MAX_GROUP, catch};
use super::prepared::Prepared;
use super::{Job, Shared, Task, settle, several_cpus};

/// The thread's loop: apply what has queued up inside one open transaction, and commit when a
/// caller waits, when no job has come for the delay, or when the group is large or old
/// enough. Whenever the queue is empty it sleeps until a job wakes it (or, with a group open,
/// until the group is due), so it applies jobs while the loop is still producing them rather
/// than all at the end of a turn.
pub(super) fn serve(
    conn: Connection,
    queue: std_mpsc::Receiver<Job>,
    shared: &Shared,
    tail: &TailCheckpoint,
    delay: Duration,
) {
    let conn = &Prepared::new(&conn);
    // On one CPU, waiting awake would only hold back the thread we wait for.
    let spinning = several_cpus();
    let mut group: Option<Group> = None;
    let mut last_job = Instant::now();
    // What this connection knows of each session it writes to: its key, its next number.
    let mut ledger = Ledger::default();
    // The lists of the last group committed, kept for the next.
    let mut spare = Buffers::default();
    loop {
        let mut closed = false;
        loop {
            match queue.try_recv() {
                Ok(job) => {
                    apply(conn, &mut group, job, shared, &mut ledger, &mut spare);
                    last_job = Instant::now();
                    if group.as_ref().is_some_and(|g| g.len() >= MAX_GROUP)
                        && let Some(g) = group.take()
                    {
                        g.commit(conn, shared, &mut ledger, &mut spare);
                        tail.run_if_due(conn);
                    }
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    closed = true;
                    break;
                }
            }
        }
        // The appends and tool-call records of the burst just applied go in together.
        if let Some(g) = group.as_mut() {
            g.flush(conn, &mut ledger, &shared.returns);
        }
        // When the open group must be committed at the latest (`None`: no group, or no
        // deadline).
        let deadline = match group.take() {
            Some(g) if closed || g.must_commit_now(last_job, delay) => {
                // On one CPU the callers' thread may still have writes to make (other
                // sessions' turns): let it run first, and take them into this commit.
                if !closed && !spinning && g.may_hold() {
                    std::thread::yield_now();
                    if let Ok(job) = queue.try_recv() {
                        group = Some(g);
                        apply(conn, &mut group, job, shared, &mut ledger, &mut spare);
                        last_job = Instant::now();
                        continue;
                    }
                }
                g.commit(conn, shared, &mut ledger, &mut spare);
                tail.run_if_due(conn);
                continue;
            }
            Some(g) => {
                let due = g.due(last_job, delay);
                group = Some(g);
                due
            }
            None if closed => return,
            None => None,
        };
        // The next job is often microseconds away (the loop's next write, or its next turn
        // right after a commit): waiting for it awake costs less than the wake-up a sleep
        // needs, on both sides.
        let spin = match deadline {
            _ if !spinning => Duration::ZERO,
            Some(deadline) => SPIN.min(deadline.saturating_duration_since(Instant::now())),
            None => SPIN,
        };
        if let Some(job) = spin_for_job(&queue, spin) {
            apply(conn, &mut group, job, shared, &mut ledger, &mut spare);
            last_job = Instant::now();
            continue;
        }
        // On one CPU, a group that will be due by itself need not be woken for every write.
        shared
            .wakes_when_due
            .store(!spinning && deadline.is_some() && group.is_some(), Ordering::SeqCst);
        shared.sleeping.store(true, Ordering::SeqCst);
        // Pairs with the fence in `submit`: either this look sees the job, or the sender sees
        // the flag and wakes us.
        fence(Ordering::SeqCst);
        // A job sent before the flag was up is seen here; one sent after it wakes us.
        match queue.try_recv() {
            Ok(job) => {
                shared.sleeping.store(false, Ordering::SeqCst);
                apply(conn, &mut group, job, shared, &mut ledger, &mut spare);
                last_job = Instant::now();
            }
            Err(TryRecvError::Disconnected) => shared.sleeping.store(false, Ordering::SeqCst),
            Err(TryRecvError::Empty) => {
                match deadline {
                    Some(deadline) => std::thread::park_timeout(deadline.saturating_duration_since(Instant::now())),
                    // A group without a deadline waits to be asked for its commit.
                    None if group.is_some() => std::thread::park(),
                    // Idle: nothing will need the rows handed back for a while.
                    None => {
                        shared.returns.free_returned();
                        std::thread::park();
                    }
                }
                shared.sleeping.store(false, Ordering::SeqCst);
            }
        }
        shared.wakes_when_due.store(false, Ordering::SeqCst);
    }
}

/// How long the thread waits awake for the next job before it sleeps.
const SPIN: Duration = Duration::from_micros(50);

/// The next job if one arrives within `limit`, looking without sleeping. Between looks it
/// pauses a little, so that it does not keep pulling the queue's cache line away from the
/// thread sending to it, and it reads the clock only now and then.
fn spin_for_job(queue: &std_mpsc::Receiver<Job>, limit: Duration) -> Option<Job> {
    let until = Instant::now() + limit;
    for look in 0u32.. {
        match queue.try_recv() {
            Ok(job) => return Some(job),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) if look % 16 == 15 && Instant::now() >= until => return None,
            Err(TryRecvError::Empty) => (0..8).for_each(|_| std::hint::spin_loop()),
        }
    }
    None
}

/// Applies one job: a grouped one inside the open transaction (opening it if needed), an
/// alone one after committing the group.
fn apply(
    conn: &Prepared<'_>,
    group: &mut Option<Group>,
    job: Job,
    shared: &Shared,
    ledger: &mut Ledger,
    spare: &mut Buffers,
) {
    let Job { task, reply, permit } = job;
    if let Task::Alone(work) = task {
        if let Some(g) = group.take() {
            g.commit(conn, shared, ledger, spare);
        }
        settle(shared, reply, catch(|| work(conn)));
        return;
    }
    if let Task::Forget(session) = &task {
        ledger.forget(session);
        settle(shared, reply, Ok(()));
        return;
    }
    if matches!(task, Task::Barrier) && group.is_none() {
        settle(shared, reply, Ok(()));
        return;
    }
    let open = match group {
        Some(g) => g,
        None => match Group::open(conn, spare) {
            Ok(g) => group.insert(g),
            Err(e) => {
                settle(shared, reply, Err(e));
                return;
            }
        },
    };
    match task {
        Task::Grouped(job) => open.run(conn, job, reply, ledger, &shared.returns),
        Task::Record(record) => open.record(record, reply, &shared.returns),
        Task::Append(append) => open.append(conn, append, reply, ledger, &shared.returns),
        Task::CreateSession(info) => open.create_session(conn, info, reply, ledger),
        Task::Barrier => open.barrier(reply),
        Task::Alone(_) | Task::Forget(_) => {}
    }
    if open.is_broken()
        && let Some(g) = group.take()
    {
        g.commit(conn, shared, ledger, spare);
    }
    // The queue has room again once the job is applied.
    drop(permit);
}
