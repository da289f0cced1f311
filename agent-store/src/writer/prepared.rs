//! The writer's connection with the statements of its hot path held prepared for the
//! connection's life.
//!
//! rusqlite's statement cache finds a statement by its text: it hashes the text on the way
//! out, moves the entry in its LRU list, and on the way back reads the text from SQLite,
//! hashes it again and clears the bindings. The multi-row statements are over a kilobyte of
//! text each, and that came to about 3 400 instructions per statement run, more than the
//! row it carried (`callgrind`, "SQLite, per row" in `docs/benchmarks.md`). Held here, a
//! statement is found by its index.

use std::cell::RefCell;
use std::ops::Deref;

use rusqlite::{Connection, PrepFlags, Statement};

use agent_core::StoreError;

use crate::row_statements::{MESSAGE_ROWS_PER_STATEMENT, RECORD_ROWS_PER_STATEMENT, RowKind, RowStatements};
use crate::sql_error::backend;

/// The statements without parameters the writer runs around its writes. The last one declared
/// sets [`Control::COUNT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Control {
    Begin,
    Commit,
    Savepoint,
    RollbackToSavepoint,
    ReleaseSavepoint,
}

impl Control {
    /// How many there are: each has the slot of its discriminant.
    const COUNT: usize = Control::ReleaseSavepoint as usize + 1;

    fn sql(self) -> &'static str {
        match self {
            Control::Begin => "BEGIN IMMEDIATE",
            Control::Commit => "COMMIT",
            // One name for every savepoint: they are never nested.
            Control::Savepoint => "SAVEPOINT job",
            Control::RollbackToSavepoint => "ROLLBACK TO job",
            Control::ReleaseSavepoint => "RELEASE job",
        }
    }
}

/// A statement prepared the first time it runs, then kept.
type Slot<'c> = RefCell<Option<Statement<'c>>>;

/// The writer's connection, and its hot statements. Everything else it runs goes through the
/// connection (it derefs to it) and its statement cache.
pub(super) struct Prepared<'c> {
    conn: &'c Connection,
    control: [Slot<'c>; Control::COUNT],
    messages: [Slot<'c>; MESSAGE_ROWS_PER_STATEMENT.len()],
    tool_calls: [Slot<'c>; RECORD_ROWS_PER_STATEMENT.len()],
}

impl<'c> Prepared<'c> {
    /// Nothing is prepared yet: each statement is, the first time it runs, so an error
    /// preparing it is that write's error.
    pub fn new(conn: &'c Connection) -> Self {
        Prepared {
            conn,
            control: Default::default(),
            messages: Default::default(),
            tool_calls: Default::default(),
        }
    }

    /// Runs a statement without parameters.
    pub fn run(&self, control: Control) -> Result<(), StoreError> {
        self.with_slot(self.control.get(control as usize), control.sql(), |statement| {
            statement.raw_execute().map(drop)
        })
        .map_err(backend)
    }

    /// Runs `work` with the statement in `slot` (prepared from `sql` if it is not yet), and
    /// clears its bindings after, so that it does not hold on to the rows' text. A slot in
    /// use (which nothing here does) or missing falls back to the statement cache.
    fn with_slot<T>(
        &self,
        slot: Option<&Slot<'c>>,
        sql: &str,
        work: impl FnOnce(&mut Statement<'c>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        let Some(mut held) = slot.and_then(|slot| slot.try_borrow_mut().ok()) else {
            let mut cached = self.conn.prepare_cached(sql)?;
            return work(&mut cached);
        };
        let statement = match held.as_mut() {
            Some(statement) => statement,
            // Persistent: its program stays out of the lookaside memory, which the bound
            // rows' values then use (prepared without it, the binding cost a third more).
            None => held.insert(
                self.conn
                    .prepare_with_flags(sql, PrepFlags::SQLITE_PREPARE_PERSISTENT)?,
            ),
        };
        let result = work(statement);
        statement.clear_bindings();
        result
    }
}

impl RowStatements for Prepared<'_> {
    fn connection(&self) -> &Connection {
        self.conn
    }

    fn with_statement<T>(
        &self,
        kind: RowKind,
        rows: usize,
        work: impl FnOnce(&mut Statement<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        let sql = kind.text(rows)?;
        let slots: &[Slot<'_>] = match kind {
            RowKind::Messages => &self.messages,
            RowKind::ToolCalls => &self.tool_calls,
        };
        let slot = kind.size_index(rows).and_then(|i| slots.get(i));
        self.with_slot(slot, sql, |statement| work(statement))
    }
}

impl Deref for Prepared<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        self.conn
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use agent_core::{Message, SessionId, SessionInfo};

    use super::*;
    use crate::rows::MessageRow;
    use crate::writes::{self, NewRow};

    fn database() -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::migrations::migrate_to(&mut conn, crate::migrations::latest_version()).unwrap();
        conn
    }

    #[test]
    fn control_statements_run_the_transaction() {
        let conn = database();
        let prepared = Prepared::new(&conn);
        prepared.run(Control::Begin).unwrap();
        assert!(!prepared.is_autocommit());
        prepared.run(Control::Savepoint).unwrap();
        conn.execute("INSERT INTO key_value VALUES ('k', 'v')", []).unwrap();
        prepared.run(Control::RollbackToSavepoint).unwrap();
        prepared.run(Control::ReleaseSavepoint).unwrap();
        prepared.run(Control::Commit).unwrap();
        assert!(prepared.is_autocommit());
        let rows: i64 = conn
            .query_row("SELECT count(*) FROM key_value", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 0, "the savepoint rolled the insert back");
    }

    #[test]
    fn a_held_statement_is_kept_and_does_not_hold_the_rows_text() {
        let conn = database();
        let prepared = Prepared::new(&conn);
        let key = writes::insert_session(&conn, &SessionInfo::new(SessionId::new_random())).unwrap();
        let row = MessageRow::from_message(&Message::user("a secret of the user")).unwrap();
        let rows: Vec<NewRow<'_>> = (1..=9)
            .map(|seq| NewRow {
                key,
                seq,
                row: &row,
                created_at: 0,
            })
            .collect();
        // Nine rows: one statement of eight and one of one.
        writes::insert_rows(&prepared, &rows).unwrap();
        let stored: i64 = conn
            .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
            .unwrap();
        assert_eq!(stored, 9);
        for (index, rows) in MESSAGE_ROWS_PER_STATEMENT.iter().enumerate() {
            let held = prepared.messages[index].borrow();
            match held.as_ref() {
                Some(statement) => {
                    let sql = statement.expanded_sql().unwrap();
                    assert!(
                        !sql.contains("secret"),
                        "{rows}-row statement still binds the text: {sql}"
                    );
                }
                None => assert!(*rows != 8 && *rows != 1, "only the sizes used are prepared"),
            }
        }
        assert!(prepared.messages.iter().filter(|slot| slot.borrow().is_some()).count() == 2);
    }
}
