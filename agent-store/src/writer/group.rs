//! One group commit: the open transaction, the jobs applied in it, and the replies that wait
//! for it to commit.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use agent_core::{SessionId, SessionInfo, StoreError, ToolCallRecord};

use super::recycle::{Returns, Spent};
use super::{Append, Reply, Shared, Work, settle};
use crate::sql_error::backend;
use crate::writes;

/// The most jobs committed in one transaction.
pub(super) const MAX_GROUP: usize = 1024;

/// The longest a group stays open under a steady stream of writes.
const MAX_GROUP_AGE: Duration = Duration::from_millis(20);

/// On one CPU, the longest a group a caller waits on is held open while the loop still has
/// writes to add (see [`Group::may_hold`]).
const MAX_HOLD: Duration = Duration::from_millis(1);

/// What this connection knows of the sessions it writes to. Cleared whole when a group fails
/// (its inserts, sessions included, were rolled back).
#[derive(Default)]
pub(super) struct Ledger {
    /// Each session's integer key. Keys are never reused, so a remembered key of a session
    /// deleted since can only make a write fail (on its foreign key), never land elsewhere.
    keys: HashMap<SessionId, i64>,
    /// The next sequence number of each session as this connection last wrote it. An append
    /// that continues it needs no check against the file: another process taking the number
    /// is caught by the unique index, and a gap can only follow a failed write, which clears
    /// the entry.
    next_seq: HashMap<SessionId, u64>,
}

impl Ledger {
    /// The session's key, looked up once.
    fn key(&mut self, conn: &Connection, session: &SessionId) -> Result<i64, StoreError> {
        if let Some(key) = self.keys.get(session) {
            return Ok(*key);
        }
        let key = writes::existing_session_key(conn, session)?;
        self.keys.insert(session.clone(), key);
        Ok(key)
    }

    pub fn forget(&mut self, session: &SessionId) {
        self.keys.remove(session);
        self.next_seq.remove(session);
    }

    pub fn clear(&mut self) {
        self.keys.clear();
        self.next_seq.clear();
    }
}

/// A record waiting for the commit, and the jobs it stands for.
struct PendingRecord {
    record: ToolCallRecord,
    replies: Vec<Reply>,
}

pub(super) struct Group {
    opened: Instant,
    /// Replies settled at commit with these results (a failed commit fails them all).
    done: Vec<(Reply, Result<(), StoreError>)>,
    /// Open tool-call states (pending, running), one per call, waiting for the call's final
    /// state in this group to replace them (only the committed state can ever be seen; a
    /// crash loses the group whole). Those still open are written just before the commit.
    records: Vec<PendingRecord>,
    /// A caller waits on this group: commit as soon as the queue is drained.
    waited_on: bool,
    /// When the first caller started waiting on it.
    waited_since: Option<Instant>,
    /// SQLite rolled the whole transaction back after this error (a full disk does): every
    /// job of the group failed with it.
    broken: Option<StoreError>,
}

impl Group {
    pub fn open(conn: &Connection) -> Result<Self, StoreError> {
        run_cached(conn, "BEGIN IMMEDIATE")?;
        Ok(Group {
            opened: Instant::now(),
            done: Vec::new(),
            records: Vec::new(),
            waited_on: false,
            waited_since: None,
            broken: None,
        })
    }

    /// Whether to commit without waiting for more jobs: a caller waits, the group is broken or
    /// full, or it is [due](Self::due).
    pub fn must_commit_now(&self, last_job: Instant, delay: Duration) -> bool {
        self.waited_on
            || self.broken.is_some()
            || self.len() >= MAX_GROUP
            || self.due(last_job, delay).is_some_and(|due| Instant::now() >= due)
    }

    /// When the group must be committed at the latest: `delay` after the last job, or when it
    /// is too old, whichever comes first; `None` when that is beyond what an `Instant` can
    /// hold (a delay of `Duration::MAX` means "only when asked").
    pub fn due(&self, last_job: Instant, delay: Duration) -> Option<Instant> {
        let quiet = last_job.checked_add(delay);
        let old = self.opened.checked_add(MAX_GROUP_AGE.max(delay));
        match (quiet, old) {
            (Some(quiet), Some(old)) => Some(quiet.min(old)),
            (due, None) | (None, due) => due,
        }
    }

    /// Whether a group a caller waits on may stay open a little longer to take the writes
    /// that the callers' thread still has to make (on one CPU, where the writer only gets
    /// them once that thread lets it run): not broken, not full, and waited on for less than
    /// [`MAX_HOLD`], opened less than [`MAX_GROUP_AGE`] ago. Under load the group then grows
    /// with it, one commit for many turns' writes, and with one caller it commits at once.
    pub fn may_hold(&self) -> bool {
        self.broken.is_none()
            && self.len() < MAX_GROUP
            && self.opened.elapsed() < MAX_GROUP_AGE
            && self.waited_since.is_some_and(|since| since.elapsed() < MAX_HOLD)
    }

    pub fn len(&self) -> usize {
        self.done.len() + self.records.len()
    }

    fn reply(&mut self, reply: Reply, result: Result<(), StoreError>) {
        self.note_waiter(&reply);
        self.done.push((reply, result));
    }

    /// Notes that a caller waits on this group if `reply` is theirs.
    fn note_waiter(&mut self, reply: &Reply) {
        if matches!(reply, Reply::Waiting(_)) && !self.waited_on {
            self.waited_on = true;
            self.waited_since = Some(Instant::now());
        }
    }

    /// Runs a job now, inside the transaction.
    pub fn run(&mut self, conn: &Connection, work: Work, reply: Reply) {
        let result = in_savepoint(conn, work);
        self.note_rollback(conn, &result);
        self.reply(reply, result);
    }

    /// Some errors make SQLite roll the whole transaction back; statements after that would
    /// commit one by one, out of the group, so the group is over.
    fn note_rollback(&mut self, conn: &Connection, result: &Result<(), StoreError>) {
        if let Err(e) = result
            && self.broken.is_none()
            && conn.is_autocommit()
        {
            self.broken = Some(e.clone());
        }
    }

    pub fn is_broken(&self) -> bool {
        self.broken.is_some()
    }

    /// Appends rows now, inside the transaction.
    pub fn append(&mut self, conn: &Connection, append: &Append, reply: Reply, ledger: &mut Ledger) {
        let Append {
            session,
            first_seq,
            rows,
        } = append;
        let first_seq = *first_seq;
        let check = ledger.next_seq.get(session) != Some(&first_seq);
        let mut insert = |conn: &Connection| {
            let key = ledger.key(conn, session)?;
            writes::insert_messages(conn, session, key, first_seq, rows, check)
        };
        let result = if rows.len() == 1 {
            catch(|| insert(conn))
        } else {
            in_savepoint(conn, insert)
        };
        let result = match result {
            Ok(()) => {
                ledger.next_seq.insert(session.clone(), first_seq + rows.len() as u64);
                Ok(())
            }
            Err(e) => {
                ledger.forget(session);
                Err(e)
            }
        };
        self.note_rollback(conn, &result);
        self.reply(reply, result);
    }

    /// Inserts a session now, inside the transaction; its first append then needs no check.
    pub fn create_session(&mut self, conn: &Connection, info: SessionInfo, reply: Reply, ledger: &mut Ledger) {
        let result = catch(|| writes::insert_session(conn, &info)).map(|key| {
            ledger.keys.insert(info.id.clone(), key);
            ledger.next_seq.insert(info.id, 1);
        });
        self.note_rollback(conn, &result);
        self.reply(reply, result);
    }

    /// Takes a tool-call record. A call's earlier state in this group is replaced if the state
    /// machine allows the change (the file's state is checked when it is written). A final
    /// state is written now, while the loop is still busy; an open one waits for the commit,
    /// since the call's next state usually follows within the group and only the committed
    /// state can ever be seen (a crash loses the group whole).
    pub fn record(
        &mut self,
        conn: &Connection,
        record: ToolCallRecord,
        reply: Reply,
        ledger: &mut Ledger,
        returns: &Returns,
    ) {
        // A caller waits for this one even if its reply waits for the commit.
        self.note_waiter(&reply);
        let earlier = self
            .records
            .iter()
            .position(|p| p.record.call_id == record.call_id && p.record.session_id == record.session_id);
        let mut replies = Vec::new();
        if let Some(index) = earlier {
            let from = self.records[index].record.state;
            if !from.can_become(record.state) {
                let refused = StoreError::InvalidTransition {
                    call_id: record.call_id,
                    from: from.as_str(),
                    to: record.state.as_str(),
                };
                self.reply(reply, Err(refused));
                return;
            }
            let earlier = self.records.swap_remove(index);
            returns.give_back(Spent::Record(earlier.record));
            replies = earlier.replies;
        }
        replies.push(reply);
        let pending = PendingRecord { record, replies };
        if pending.record.state.is_final() {
            self.write_record(conn, pending, ledger, returns);
        } else {
            self.records.push(pending);
        }
    }

    /// Writes a record; its replies get the result at commit.
    fn write_record(&mut self, conn: &Connection, pending: PendingRecord, ledger: &mut Ledger, returns: &Returns) {
        // After a rollback nothing more is written; the replies get the group's error.
        let result = if self.broken.is_some() {
            Ok(())
        } else {
            catch(|| {
                let key = ledger.key(conn, &pending.record.session_id)?;
                writes::write_tool_call(conn, key, &pending.record)
            })
        };
        if result.is_err() {
            // Its key may be stale (the session deleted behind our back): look it up again.
            ledger.forget(&pending.record.session_id);
        }
        self.note_rollback(conn, &result);
        for reply in pending.replies {
            self.reply(reply, result.clone());
        }
        returns.give_back(Spent::Record(pending.record));
    }

    pub fn barrier(&mut self, reply: Reply) {
        self.reply(reply, Ok(()));
    }

    /// Writes the records, commits, and answers every job; if the
    /// commit fails every job of the group failed. Failures of jobs nobody waits on are
    /// recorded before any waiting caller is answered, so a flush sees them.
    pub fn commit(mut self, conn: &Connection, shared: &Shared, ledger: &mut Ledger) {
        for pending in std::mem::take(&mut self.records) {
            self.write_record(conn, pending, ledger, &shared.returns);
        }
        let committed = match self.broken.take() {
            Some(error) => Err(error),
            None => run_cached(conn, "COMMIT"),
        };
        if committed.is_err() {
            ledger.clear();
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK");
            }
        }
        let (waiting, behind): (Vec<_>, Vec<_>) = self
            .done
            .into_iter()
            .partition(|(reply, _)| matches!(reply, Reply::Waiting(_)));
        for (reply, result) in behind.into_iter().chain(waiting) {
            let result = match (&committed, result) {
                (Err(e), Ok(())) => Err(e.clone()),
                (_, result) => result,
            };
            settle(shared, reply, result);
        }
    }
}

/// Runs a statement without parameters, prepared once per connection.
fn run_cached(conn: &Connection, sql: &str) -> Result<(), StoreError> {
    conn.prepare_cached(sql)
        .and_then(|mut s| s.execute([]))
        .map(drop)
        .map_err(backend)
}

/// Runs `work` in a savepoint, so its failure undoes it alone.
fn in_savepoint<T>(
    conn: &Connection,
    work: impl FnOnce(&Connection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let statement = |sql: &str| run_cached(conn, sql);
    statement("SAVEPOINT job")?;
    let result = catch(|| work(conn));
    if conn.is_autocommit() {
        // SQLite rolled everything back, the savepoint with it.
        return result;
    }
    if result.is_err() {
        statement("ROLLBACK TO job")?;
    }
    statement("RELEASE job")?;
    result
}

/// Turns a panic in a write into an error, so the writer thread lives on.
pub(super) fn catch<T>(work: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
    std::panic::catch_unwind(AssertUnwindSafe(work))
        .unwrap_or_else(|_| Err(StoreError::Backend("a store write panicked".to_owned())))
}
