//! One group commit: the open transaction, the jobs applied in it, and the replies that wait
//! for it to commit.

use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

use agent_core::{SessionId, SessionInfo, StoreError, ToolCallRecord};

use super::prepared::{Control, Prepared};
use super::recycle::{Returns, Spent};
use super::{Append, Reply, SessionMap, Shared, Work, settle};
use crate::now_millis;
use crate::row_statements::RowKind;
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
    sessions: SessionMap<Known>,
}

/// What the ledger knows of one session (one map, so each write hashes its session id once).
struct Known {
    /// The session's integer key. Keys are never reused, so a remembered key of a session
    /// deleted since can only make a write fail (on its foreign key), never land elsewhere.
    key: i64,
    /// The next sequence number as this connection last wrote it. An append that continues
    /// it needs no check against the file: another process taking the number is caught by the
    /// unique index, and a gap can only follow a failed write, which forgets the session.
    next_seq: Option<u64>,
}

impl Ledger {
    /// The session's key, looked up once.
    fn key(&mut self, conn: &Prepared<'_>, session: &SessionId) -> Result<i64, StoreError> {
        if let Some(known) = self.sessions.get(session) {
            return Ok(known.key);
        }
        let key = writes::existing_session_key(conn, session)?;
        self.sessions.insert(session.clone(), Known { key, next_seq: None });
        Ok(key)
    }

    /// The key of `session` if an append from `first_seq` continues what this connection last
    /// wrote to it; the session is then known to continue at `first_seq + rows`.
    fn continue_at(&mut self, session: &SessionId, first_seq: u64, rows: usize) -> Option<i64> {
        let known = self.sessions.get_mut(session)?;
        if known.next_seq != Some(first_seq) {
            return None;
        }
        known.next_seq = Some(first_seq + rows as u64);
        Some(known.key)
    }

    /// The next sequence number this connection last wrote to `session`.
    fn next_seq(&self, session: &SessionId) -> Option<u64> {
        self.sessions.get(session).and_then(|known| known.next_seq)
    }

    /// Sets the next sequence number of a session whose key is known (of no other).
    fn set_next_seq(&mut self, session: &SessionId, next_seq: u64) {
        if let Some(known) = self.sessions.get_mut(session) {
            known.next_seq = Some(next_seq);
        }
    }

    /// A session this connection has just created.
    fn created(&mut self, session: SessionId, key: i64) {
        self.sessions.insert(session, Known { key, next_seq: Some(1) });
    }

    pub fn forget(&mut self, session: &SessionId) {
        self.sessions.remove(session);
    }

    pub fn clear(&mut self) {
        self.sessions.clear();
    }
}

/// Rows of queued appends after which they are inserted without waiting for the queue to be
/// empty.
const MAX_PENDING_ROWS: usize = 256;

/// An append that continues what this connection wrote to its session, waiting to be inserted
/// with the others (see [`Group::insert_appends`]).
struct PendingAppend {
    key: i64,
    append: Append,
    reply: Reply,
    /// When it was applied: its rows' `created_at`.
    created_at: i64,
}

/// A record waiting for the commit, and the jobs it stands for.
struct PendingRecord {
    record: ToolCallRecord,
    replies: Vec<Reply>,
}

/// The lists a group fills, kept empty between groups so that each group reuses the room the
/// last one grew: a group takes hundreds of jobs under load, and growing its lists from
/// nothing again at every commit and burst cost the writer a few percent of its
/// instructions (`RawVec::grow_one` and `realloc` in `callgrind`).
#[derive(Default)]
pub(super) struct Buffers {
    done: Vec<(Reply, Result<(), StoreError>)>,
    records: Vec<PendingRecord>,
    finals: Vec<PendingRecord>,
    appends: Vec<PendingAppend>,
    /// Final records written by [`Group::write_records`], with their session's key.
    keyed: Vec<(i64, PendingRecord)>,
    /// The replies a commit settles once those nobody waits on are settled.
    waiting: Vec<(Reply, Result<(), StoreError>)>,
}

pub(super) struct Group {
    opened: Instant,
    /// Replies settled at commit with these results (a failed commit fails them all).
    done: Vec<(Reply, Result<(), StoreError>)>,
    /// Open tool-call states (pending, running), one per call, waiting for the call's final
    /// state in this group to replace them (only the committed state can ever be seen; a
    /// crash loses the group whole). Those still open are written just before the commit.
    records: Vec<PendingRecord>,
    /// Final tool-call states, written together at the end of the burst ([`Self::flush`]).
    /// Not searched for a call's later records (the open ones are): a later record of the
    /// same call is written after it, and the file's state machine answers it.
    finals: Vec<PendingRecord>,
    /// Appends taken but not inserted yet, in order, and their number of rows.
    appends: Vec<PendingAppend>,
    pending_rows: usize,
    /// A caller waits on this group: commit as soon as the queue is drained.
    waited_on: bool,
    /// When the first caller started waiting on it.
    waited_since: Option<Instant>,
    /// SQLite rolled the whole transaction back after this error (a full disk does): every
    /// job of the group failed with it.
    broken: Option<StoreError>,
    /// Empty lists to work in, given back at commit.
    keyed: Vec<(i64, PendingRecord)>,
    waiting: Vec<(Reply, Result<(), StoreError>)>,
}

impl Group {
    /// Begins a group transaction, filling the lists of `spare` (given back by
    /// [`Self::commit`]).
    pub fn open(conn: &Prepared<'_>, spare: &mut Buffers) -> Result<Self, StoreError> {
        conn.run(Control::Begin)?;
        let Buffers {
            done,
            records,
            finals,
            appends,
            keyed,
            waiting,
        } = std::mem::take(spare);
        Ok(Group {
            opened: Instant::now(),
            done,
            records,
            finals,
            appends,
            pending_rows: 0,
            waited_on: false,
            waited_since: None,
            broken: None,
            keyed,
            waiting,
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
        self.done.len() + self.records.len() + self.finals.len() + self.appends.len()
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

    /// Runs a job now, inside the transaction, after the writes taken before it.
    pub fn run(&mut self, conn: &Prepared<'_>, work: Work, reply: Reply, ledger: &mut Ledger, returns: &Returns) {
        self.flush(conn, ledger, returns);
        let result = in_savepoint(conn, |conn| work(conn));
        self.note_rollback(conn, &result);
        self.reply(reply, result);
    }

    /// Some errors make SQLite roll the whole transaction back; statements after that would
    /// commit one by one, out of the group, so the group is over.
    fn note_rollback(&mut self, conn: &Prepared<'_>, result: &Result<(), StoreError>) {
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

    /// Takes an append. One that continues what this connection last wrote to its session
    /// (the usual case) waits to be inserted together with the others taken in the same
    /// burst, a few statements for all of them ([`Self::insert_appends`]); any other is
    /// inserted now, after them, and checked against the file.
    pub fn append(
        &mut self,
        conn: &Prepared<'_>,
        append: Append,
        reply: Reply,
        ledger: &mut Ledger,
        returns: &Returns,
    ) {
        match ledger.continue_at(&append.session, append.first_seq, append.rows.len()) {
            Some(key) => {
                self.note_waiter(&reply);
                self.pending_rows += append.rows.len();
                self.appends.push(PendingAppend {
                    key,
                    append,
                    reply,
                    created_at: now_millis(),
                });
                if self.pending_rows >= MAX_PENDING_ROWS {
                    self.insert_appends(conn, ledger, returns);
                }
            }
            _ => {
                self.insert_appends(conn, ledger, returns);
                self.append_now(conn, &append, reply, ledger);
                returns.give_back(Spent::Rows(append.rows));
            }
        }
    }

    /// Writes what the group has taken and holds back to write together: the appends, and
    /// the final states of tool calls. Done when the queue is drained (the end of a burst),
    /// and before any job that must see them.
    pub fn flush(&mut self, conn: &Prepared<'_>, ledger: &mut Ledger, returns: &Returns) {
        self.insert_appends(conn, ledger, returns);
        let mut finals = std::mem::take(&mut self.finals);
        self.write_records(conn, &mut finals, ledger, returns);
        self.finals = finals;
    }

    /// Inserts the appends taken so far, several rows per statement, in a savepoint when they
    /// take more than one statement. If that fails (a sequence number another process took, a
    /// session deleted behind this connection's back), it is rolled back and each append is
    /// inserted on its own, so that only the ones at fault fail, with the error they would
    /// have had alone.
    pub fn insert_appends(&mut self, conn: &Prepared<'_>, ledger: &mut Ledger, returns: &Returns) {
        if self.appends.is_empty() {
            return;
        }
        let mut appends = std::mem::take(&mut self.appends);
        self.pending_rows = 0;
        // After a rollback nothing more is written; the replies get the group's error.
        let result = if self.broken.is_some() {
            Ok(())
        } else {
            let rows: Vec<writes::NewRow<'_>> = appends
                .iter()
                .flat_map(|p| {
                    p.append.rows.iter().enumerate().map(|(i, row)| writes::NewRow {
                        key: p.key,
                        seq: p.append.first_seq + i as u64,
                        row,
                        created_at: p.created_at,
                    })
                })
                .collect();
            let insert = |conn: &Prepared<'_>| writes::insert_rows(conn, &rows).map_err(backend);
            // A statement that fails undoes itself; only several must go back together. One
            // session at a time a burst is a few rows, one statement, and a savepoint (two
            // more statements, and the pages the insert changes copied into its journal) cost
            // the writer about as much as the insert.
            if RowKind::Messages.statements_for(rows.len()).nth(1).is_none() {
                catch(|| insert(conn))
            } else {
                in_savepoint(conn, insert)
            }
        };
        self.note_rollback(conn, &result);
        let one_by_one = result.is_err() && self.broken.is_none();
        for pending in appends.drain(..) {
            if one_by_one {
                // As when it was taken: it continues what the ledger knew of its session,
                // unless an append of the session failed just now (the ledger forgot it).
                let session = &pending.append.session;
                ledger.set_next_seq(session, pending.append.first_seq);
                self.append_now(conn, &pending.append, pending.reply, ledger);
            } else {
                self.reply(pending.reply, result.clone());
            }
            returns.give_back(Spent::Rows(pending.append.rows));
        }
        self.appends = appends;
    }

    /// Inserts an append now, checked against the file unless it continues what this
    /// connection last wrote to its session (an append that repeats stored messages, a
    /// replay, writes only what is new).
    fn append_now(&mut self, conn: &Prepared<'_>, append: &Append, reply: Reply, ledger: &mut Ledger) {
        let Append {
            session,
            first_seq,
            rows,
        } = append;
        let first_seq = *first_seq;
        let check = ledger.next_seq(session) != Some(first_seq);
        let mut insert = |conn: &Prepared<'_>| {
            let key = ledger.key(conn, session)?;
            writes::insert_messages(conn, session, key, first_seq, rows, check)
        };
        let result = if rows.len() == 1 {
            catch(|| insert(conn))
        } else {
            in_savepoint(conn, insert)
        };
        let result = match result {
            Ok(next) => {
                ledger.set_next_seq(session, next);
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
    pub fn create_session(&mut self, conn: &Prepared<'_>, info: SessionInfo, reply: Reply, ledger: &mut Ledger) {
        let result = catch(|| writes::insert_session(conn, &info)).map(|key| {
            ledger.created(info.id, key);
        });
        self.note_rollback(conn, &result);
        self.reply(reply, result);
    }

    /// Takes a tool-call record. A call's earlier state in this group is replaced if the state
    /// machine allows the change, and kept if the record repeats it or goes back (the file's
    /// state is checked when it is written). A final state is written at the end of the
    /// burst, with the others ([`Self::flush`]); an open one waits for the commit, since the
    /// call's next state usually follows within the group.
    pub fn record(&mut self, record: ToolCallRecord, reply: Reply, returns: &Returns) {
        // A caller waits for this one even if its reply waits for the commit.
        self.note_waiter(&reply);
        let earlier = self
            .records
            .iter()
            .position(|p| p.record.call_id == record.call_id && p.record.session_id == record.session_id);
        let mut replies = Vec::new();
        if let Some(index) = earlier {
            let from = self.records[index].record.state;
            if record.state.can_become(from) {
                // A state the call has already reached here: ignored (the first writer wins),
                // answered with what becomes of the write it repeats.
                self.records[index].replies.push(reply);
                returns.give_back(Spent::Record(record));
                return;
            }
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
            self.finals.push(pending);
        } else {
            self.records.push(pending);
        }
    }

    /// Writes records, several per statement, leaving `pending` empty; their replies get the
    /// results at commit. The records of a statement that did not apply whole are written
    /// again one at a time, each getting its own answer.
    fn write_records(
        &mut self,
        conn: &Prepared<'_>,
        pending: &mut Vec<PendingRecord>,
        ledger: &mut Ledger,
        returns: &Returns,
    ) {
        if pending.is_empty() {
            return;
        }
        // After a rollback nothing more is written; the replies get the group's error.
        if self.broken.is_some() {
            for p in pending.drain(..) {
                self.settle_record(p, Ok(()), returns);
            }
            return;
        }
        let mut keyed = std::mem::take(&mut self.keyed);
        for p in pending.drain(..) {
            match catch(|| ledger.key(conn, &p.record.session_id)) {
                Ok(key) => keyed.push((key, p)),
                Err(e) => {
                    let result = Err(e);
                    self.note_rollback(conn, &result);
                    self.settle_record(p, result, returns);
                }
            }
        }
        let records: Vec<(i64, &ToolCallRecord)> = keyed.iter().map(|(key, p)| (*key, &p.record)).collect();
        let again = catch(|| writes::upsert_tool_calls(conn, &records).map_err(backend));
        drop(records);
        let again = match again {
            Ok(again) => again,
            Err(e) => {
                // Either SQLite rolled the transaction back (the group is over: every record
                // gets its error at commit) or the write panicked: each is written again alone.
                self.note_rollback(conn, &Err(e));
                std::iter::once(0..keyed.len()).collect()
            }
        };
        let mut again = again.into_iter().flatten().peekable();
        for (i, (key, p)) in keyed.drain(..).enumerate() {
            let result = if again.next_if_eq(&i).is_none() || self.broken.is_some() {
                Ok(())
            } else {
                catch(|| writes::write_tool_call(conn, key, &p.record))
            };
            if result.is_err() {
                // Its key may be stale (the session deleted behind our back): look it up again.
                ledger.forget(&p.record.session_id);
            }
            self.note_rollback(conn, &result);
            self.settle_record(p, result, returns);
        }
        self.keyed = keyed;
    }

    /// Answers the jobs a record stands for with `result` (at commit).
    fn settle_record(&mut self, pending: PendingRecord, result: Result<(), StoreError>, returns: &Returns) {
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
    /// recorded before any waiting caller is answered, so a flush sees them. The group's
    /// lists go back to `spare`, empty, for the next group.
    pub fn commit(mut self, conn: &Prepared<'_>, shared: &Shared, ledger: &mut Ledger, spare: &mut Buffers) {
        self.flush(conn, ledger, &shared.returns);
        let mut open = std::mem::take(&mut self.records);
        self.write_records(conn, &mut open, ledger, &shared.returns);
        let committed = match self.broken.take() {
            Some(error) => Err(error),
            None => conn.run(Control::Commit),
        };
        if committed.is_err() {
            ledger.clear();
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK");
            }
        }
        let outcome = |result| match (&committed, result) {
            (Err(e), Ok(())) => Err(e.clone()),
            (_, result) => result,
        };
        let mut waiting = self.waiting;
        for (reply, result) in self.done.drain(..) {
            match reply {
                Reply::Waiting(_) => waiting.push((reply, result)),
                Reply::Behind(_) => settle(shared, reply, outcome(result)),
            }
        }
        for (reply, result) in waiting.drain(..) {
            settle(shared, reply, outcome(result));
        }
        *spare = Buffers {
            done: self.done,
            records: open,
            finals: self.finals,
            appends: self.appends,
            keyed: self.keyed,
            waiting,
        };
    }
}

/// Runs `work` in a savepoint, so its failure undoes it alone.
fn in_savepoint<'c, T>(
    conn: &Prepared<'c>,
    work: impl FnOnce(&Prepared<'c>) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    conn.run(Control::Savepoint)?;
    let result = catch(|| work(conn));
    if conn.is_autocommit() {
        // SQLite rolled everything back, the savepoint with it.
        return result;
    }
    if result.is_err() {
        conn.run(Control::RollbackToSavepoint)?;
    }
    conn.run(Control::ReleaseSavepoint)?;
    result
}

/// Turns a panic in a write into an error, so the writer thread lives on.
pub(super) fn catch<T>(work: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
    std::panic::catch_unwind(AssertUnwindSafe(work))
        .unwrap_or_else(|_| Err(StoreError::Backend("a store write panicked".to_owned())))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use agent_core::{Message, ToolCallState};
    use tokio::sync::oneshot;

    use rusqlite::Connection;

    use super::*;
    use crate::rows::MessageRow;

    fn database() -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "foreign_keys", true).unwrap();
        crate::migrations::migrate_to(&mut conn, crate::migrations::latest_version()).unwrap();
        conn
    }

    /// A session this connection created, as the ledger knows it after a creation.
    fn session(conn: &Connection, ledger: &mut Ledger) -> (SessionId, i64) {
        let id = SessionId::new_random();
        let key = writes::insert_session(conn, &SessionInfo::new(id.clone())).unwrap();
        ledger.created(id.clone(), key);
        (id, key)
    }

    fn append(session: &SessionId, first_seq: u64, texts: &[&str]) -> Append {
        Append {
            session: session.clone(),
            first_seq,
            rows: texts
                .iter()
                .map(|t| MessageRow::from_message(&Message::user(*t)).unwrap())
                .collect(),
        }
    }

    fn stored(conn: &Connection, key: i64) -> Vec<(i64, String)> {
        let mut stmt = conn
            .prepare("SELECT seq, content FROM messages WHERE session_key = ?1 ORDER BY seq")
            .unwrap();
        stmt.query_map([key], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    #[test]
    fn appends_taken_together_are_all_inserted_in_order() {
        let database = database();
        let conn = Prepared::new(&database);
        let shared = Shared::default();
        let mut ledger = Ledger::default();
        let (a, key_a) = session(&conn, &mut ledger);
        let (b, key_b) = session(&conn, &mut ledger);
        let mut group = Group::open(&conn, &mut Buffers::default()).unwrap();
        // 45 single rows (one statement of 32, one of 8, five of 1) and one append of three.
        for seq in 1..=45u64 {
            let text = format!("a{seq}");
            let reply = Reply::Behind(a.clone());
            group.append(&conn, append(&a, seq, &[&text]), reply, &mut ledger, &shared.returns);
        }
        let reply = Reply::Behind(b.clone());
        group.append(
            &conn,
            append(&b, 1, &["b1", "b2", "b3"]),
            reply,
            &mut ledger,
            &shared.returns,
        );
        assert_eq!(group.appends.len(), 46, "taken, not inserted yet");
        assert!(stored(&conn, key_a).is_empty());
        group.commit(&conn, &shared, &mut ledger, &mut Buffers::default());
        let rows = stored(&conn, key_a);
        assert_eq!(rows.len(), 45);
        for (i, (seq, content)) in rows.iter().enumerate() {
            assert_eq!(*seq, i as i64 + 1);
            assert!(content.contains(&format!("\"a{}\"", i + 1)), "{content}");
        }
        let rows = stored(&conn, key_b);
        assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), vec![1, 2, 3]);
        assert!(rows[2].1.contains("\"b3\""));
        assert!(shared.failures.lock().unwrap().is_empty());
        assert_eq!(ledger.next_seq(&a), Some(46));
    }

    /// What became of a burst of appends to two sessions when another process had taken the
    /// first number of the second behind this connection's back.
    struct TakenBurst {
        b: SessionId,
        /// Each append's answer, in order.
        answers: Vec<Result<(), StoreError>>,
        /// The sequence numbers stored for `a`, and `b`'s rows.
        a_seqs: Vec<i64>,
        b_rows: Vec<(i64, String)>,
        /// The next numbers the ledger then expects of `a` and `b`.
        a_next: Option<u64>,
        b_next: Option<u64>,
    }

    /// Takes `burst` (each append to `a` when its flag is true, to `b` otherwise, from a
    /// number, with texts) into one group, runs `check` on the group before the commit, and
    /// commits.
    fn burst_with_b_taken(burst: &[(bool, u64, &[&str])], check: impl FnOnce(&Group)) -> TakenBurst {
        let database = database();
        let conn = Prepared::new(&database);
        let shared = Shared::default();
        let mut ledger = Ledger::default();
        let (a, key_a) = session(&conn, &mut ledger);
        let (b, key_b) = session(&conn, &mut ledger);
        conn.execute(
            "INSERT INTO messages (session_key, seq, role, content, created_at) VALUES (?1, 1, 'user', '[]', 0)",
            [key_b],
        )
        .unwrap();
        let mut group = Group::open(&conn, &mut Buffers::default()).unwrap();
        let mut answers = Vec::new();
        for (to_a, seq, texts) in burst {
            let (tx, rx) = oneshot::channel();
            let session = if *to_a { &a } else { &b };
            group.append(
                &conn,
                append(session, *seq, texts),
                Reply::Waiting(tx),
                &mut ledger,
                &shared.returns,
            );
            answers.push(rx);
        }
        check(&group);
        group.commit(&conn, &shared, &mut ledger, &mut Buffers::default());
        TakenBurst {
            answers: answers.into_iter().map(|mut rx| rx.try_recv().unwrap()).collect(),
            a_seqs: stored(&conn, key_a).iter().map(|r| r.0).collect(),
            b_rows: stored(&conn, key_b),
            a_next: ledger.next_seq(&a),
            b_next: ledger.next_seq(&b),
            b,
        }
    }

    #[test]
    fn one_append_at_fault_fails_alone_with_its_own_error() {
        let burst: [(bool, u64, &[&str]); 3] = [(true, 1, &["a1"]), (false, 1, &["b1"]), (true, 2, &["a2"])];
        let taken = burst_with_b_taken(&burst, |group| assert_eq!(group.appends.len(), 3));
        assert_eq!(taken.answers[0], Ok(()));
        assert_eq!(
            taken.answers[1],
            Err(StoreError::Conflict {
                session: taken.b.clone(),
                expected: 1,
                actual: 2
            })
        );
        assert_eq!(taken.answers[2], Ok(()));
        assert_eq!(taken.a_seqs, vec![1, 2]);
        assert_eq!(taken.b_rows, vec![(1, "[]".to_owned())]);
        // What the ledger believed of b is gone; a is known to continue at 3.
        assert_eq!(taken.b_next, None);
        assert_eq!(taken.a_next, Some(3));
    }

    #[test]
    fn a_burst_of_one_statement_that_fails_undoes_itself_without_a_savepoint() {
        // Eight rows, one statement: a's first three go in before b's row fails it.
        let burst: [(bool, u64, &[&str]); 3] = [
            (true, 1, &["a1", "a2", "a3"]),
            (false, 1, &["b1"]),
            (true, 4, &["a4", "a5", "a6", "a7"]),
        ];
        let taken = burst_with_b_taken(&burst, |group| {
            assert_eq!(RowKind::Messages.statements_for(group.pending_rows).count(), 1);
        });
        assert_eq!(taken.answers[0], Ok(()));
        assert!(
            matches!(taken.answers[1], Err(StoreError::Conflict { .. })),
            "{:?}",
            taken.answers[1]
        );
        assert_eq!(taken.answers[2], Ok(()));
        assert_eq!(taken.a_seqs, (1..=7).collect::<Vec<_>>(), "each of a's rows once");
        assert_eq!(taken.b_rows, vec![(1, "[]".to_owned())]);
        assert_eq!(taken.a_next, Some(8));
    }

    #[test]
    fn rows_another_process_wrote_as_they_are_are_a_replay_not_a_conflict() {
        let database = database();
        let conn = Prepared::new(&database);
        let shared = Shared::default();
        let mut ledger = Ledger::default();
        let (a, key_a) = session(&conn, &mut ledger);
        // Another process replayed a's first append before this connection wrote it.
        let first = append(&a, 1, &["a1", "a2"]);
        writes::insert_messages(&conn, &a, key_a, 1, &first.rows, true).unwrap();
        let mut group = Group::open(&conn, &mut Buffers::default()).unwrap();
        let mut answers = Vec::new();
        for (seq, texts) in [(1, &["a1", "a2"][..]), (3, &["a3"][..])] {
            let (tx, rx) = oneshot::channel();
            group.append(
                &conn,
                append(&a, seq, texts),
                Reply::Waiting(tx),
                &mut ledger,
                &shared.returns,
            );
            answers.push(rx);
        }
        group.commit(&conn, &shared, &mut ledger, &mut Buffers::default());
        for mut rx in answers {
            assert_eq!(rx.try_recv().unwrap(), Ok(()));
        }
        let rows = stored(&conn, key_a);
        assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), vec![1, 2, 3]);
        assert!(rows[2].1.contains("\"a3\""));
        assert_eq!(ledger.next_seq(&a), Some(4));
    }

    /// A final record of call `call_id` of `session`.
    fn final_record(session: &SessionId, call_id: &str, state: ToolCallState) -> ToolCallRecord {
        let mut record = ToolCallRecord::pending(session.clone(), call_id, "t", "{}");
        record.state = state;
        record
    }

    fn stored_state(conn: &Connection, key: i64, call_id: &str) -> Option<String> {
        use rusqlite::OptionalExtension as _;
        conn.query_row(
            "SELECT state FROM tool_calls WHERE session_key = ?1 AND call_id = ?2",
            rusqlite::params![key, call_id],
            |r| r.get(0),
        )
        .optional()
        .unwrap()
    }

    #[test]
    fn final_records_taken_together_are_written_together_and_each_gets_its_own_answer() {
        let database = database();
        let conn = Prepared::new(&database);
        let shared = Shared::default();
        let mut ledger = Ledger::default();
        let (a, key_a) = session(&conn, &mut ledger);
        let (gone, key_gone) = session(&conn, &mut ledger);
        // Already in the file: a finished call of a.
        writes::write_tool_call(&conn, key_a, &final_record(&a, "done", ToolCallState::Succeeded)).unwrap();
        let mut group = Group::open(&conn, &mut Buffers::default()).unwrap();
        // Deleted behind this connection's back: the ledger still has its key.
        conn.execute("DELETE FROM sessions WHERE key = ?1", [key_gone]).unwrap();
        let mut records = Vec::new();
        for n in 0..40 {
            records.push(final_record(&a, &format!("call_{n}"), ToolCallState::Succeeded));
            match n {
                // Against the stored final state: refused.
                5 => records.push(final_record(&a, "done", ToolCallState::Failed)),
                // The same final state twice: both accepted.
                12 | 13 => records.push(final_record(&a, "twice", ToolCallState::Succeeded)),
                // Two final states of one call in the same burst: the later is refused.
                20 => records.push(final_record(&a, "clash", ToolCallState::Succeeded)),
                21 => records.push(final_record(&a, "clash", ToolCallState::Cancelled)),
                // Its session is gone.
                35 => records.push(final_record(&gone, "orphan", ToolCallState::Succeeded)),
                _ => {}
            }
        }
        let mut answers = Vec::new();
        for record in records {
            let call = record.call_id.clone();
            let (tx, rx) = oneshot::channel();
            group.record(record, Reply::Waiting(tx), &shared.returns);
            answers.push((call, rx));
        }
        assert_eq!(stored_state(&conn, key_a, "call_0"), None, "taken, not written yet");
        group.flush(&conn, &mut ledger, &shared.returns);
        assert_eq!(stored_state(&conn, key_a, "call_39").as_deref(), Some("succeeded"));
        group.commit(&conn, &shared, &mut ledger, &mut Buffers::default());
        let mut seen_clash = false;
        for (call, mut rx) in answers {
            let answer = rx.try_recv().unwrap();
            match call.as_str() {
                "done" => assert!(
                    matches!(
                        &answer,
                        Err(StoreError::InvalidTransition {
                            from: "succeeded",
                            to: "failed",
                            ..
                        })
                    ),
                    "{answer:?}"
                ),
                "orphan" => assert_eq!(answer, Err(StoreError::SessionNotFound(gone.clone()))),
                "clash" if seen_clash => assert!(
                    matches!(
                        &answer,
                        Err(StoreError::InvalidTransition {
                            from: "succeeded",
                            to: "cancelled",
                            ..
                        })
                    ),
                    "{answer:?}"
                ),
                "clash" => {
                    seen_clash = true;
                    assert_eq!(answer, Ok(()));
                }
                _ => assert_eq!(answer, Ok(()), "{call}"),
            }
        }
        for call in (0..40)
            .map(|n| format!("call_{n}"))
            .chain(["twice".into(), "clash".into(), "done".into()])
        {
            assert_eq!(
                stored_state(&conn, key_a, &call).as_deref(),
                Some("succeeded"),
                "{call}"
            );
        }
        assert_eq!(stored_state(&conn, key_gone, "orphan"), None);
    }

    #[test]
    fn a_group_hands_its_lists_room_and_all_to_the_next() {
        let database = database();
        let conn = Prepared::new(&database);
        let shared = Shared::default();
        let mut ledger = Ledger::default();
        let (a, _) = session(&conn, &mut ledger);
        let mut spare = Buffers::default();
        let mut group = Group::open(&conn, &mut spare).unwrap();
        for seq in 1..=20u64 {
            let reply = Reply::Behind(a.clone());
            group.append(&conn, append(&a, seq, &["x"]), reply, &mut ledger, &shared.returns);
        }
        group.commit(&conn, &shared, &mut ledger, &mut spare);
        assert!(spare.appends.is_empty() && spare.done.is_empty(), "given back empty");
        let (appends, done) = (spare.appends.capacity(), spare.done.capacity());
        assert!(appends >= 20 && done >= 20, "with their room: {appends}, {done}");
        let group = Group::open(&conn, &mut spare).unwrap();
        assert_eq!((group.appends.capacity(), group.done.capacity()), (appends, done));
        assert_eq!(spare.appends.capacity(), 0, "taken, not copied");
    }
}
