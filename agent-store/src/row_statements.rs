//! The statements that write several rows at once: message inserts and tool-call upserts of
//! 1 to 32 rows. One statement costs SQLite more than the row it carries, so the writer puts
//! the rows of a burst in as few as it can; their texts are made once, and where they are
//! prepared is the connection's business ([`RowStatements`]).

use rusqlite::Connection;

/// Rows per statement of [`insert_rows`](crate::writes::insert_rows), largest first (the
/// last must be 1). A burst of up to 8 rows goes in as one statement: one session at a time a
/// burst is a few rows, and several single-row statements (and the savepoint that makes them
/// one) cost more than one statement of all of them.
pub(crate) const MESSAGE_ROWS_PER_STATEMENT: [usize; 10] = [32, 16, 8, 7, 6, 5, 4, 3, 2, 1];

/// Rows per statement of [`upsert_tool_calls`](crate::writes::upsert_tool_calls), largest
/// first (the last must be 1). Fewer sizes than for messages: an upsert of a few rows cost
/// more than as many upserts of one (`callgrind`, one session at a time), since only a
/// statement of several rows that may fail half-way needs a statement journal.
pub(crate) const RECORD_ROWS_PER_STATEMENT: [usize; 3] = [32, 8, 1];

/// What a [`RowStatements`] statement writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowKind {
    /// Message rows, inserted.
    Messages,
    /// Tool-call records, inserted or updated along the state machine.
    ToolCalls,
}

impl RowKind {
    /// The statement of this kind for `rows` rows, one of [`Self::sizes`].
    pub(crate) fn text(self, rows: usize) -> rusqlite::Result<&'static str> {
        self.size_index(rows)
            .and_then(|i| self.texts().get(i))
            .map(String::as_str)
            .ok_or(rusqlite::Error::InvalidParameterCount(rows, 1))
    }

    /// The statement of each of [`Self::sizes`], made once.
    fn texts(self) -> &'static [String] {
        static MESSAGES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        static TOOL_CALLS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        match self {
            RowKind::Messages => MESSAGES.get_or_init(|| {
                self.statement_texts(
                    "INSERT INTO messages (session_key, seq, role, content, tool_calls, tool_call_id,
                       tool_name, is_error, compressed, reasoning, model_visible, user_visible, created_at)",
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    "",
                )
            }),
            // The update happens only if the state machine allows the change (see
            // `ToolCallState::can_become`).
            RowKind::ToolCalls => TOOL_CALLS.get_or_init(|| {
                self.statement_texts(
                    "INSERT INTO tool_calls (session_key, call_id, name, arguments, state, raw_result,
                       compressed_result, error, started_at, finished_at, created_at)",
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    " ON CONFLICT (session_key, call_id) DO UPDATE SET
                       name = excluded.name, arguments = excluded.arguments, state = excluded.state,
                       raw_result = excluded.raw_result, compressed_result = excluded.compressed_result,
                       error = excluded.error, started_at = excluded.started_at,
                       finished_at = excluded.finished_at
                     WHERE (tool_calls.state = 'pending' AND excluded.state <> 'pending')
                        OR (tool_calls.state = 'running' AND excluded.state NOT IN ('pending', 'running'))",
                )
            }),
        }
    }

    /// The numbers of rows its statements carry, largest first.
    fn sizes(self) -> &'static [usize] {
        match self {
            RowKind::Messages => &MESSAGE_ROWS_PER_STATEMENT,
            RowKind::ToolCalls => &RECORD_ROWS_PER_STATEMENT,
        }
    }

    /// The position of a statement of `rows` rows among [`Self::sizes`].
    pub(crate) fn size_index(self, rows: usize) -> Option<usize> {
        self.sizes().iter().position(|size| *size == rows)
    }

    /// How `len` rows are split into statements: the rows each statement carries, in order,
    /// as many as possible in the largest size.
    pub(crate) fn statements_for(self, len: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
        let sizes = self.sizes();
        let mut start = 0;
        std::iter::from_fn(move || {
            let left = len - start;
            let size = sizes.iter().copied().find(|size| *size <= left)?;
            start += size;
            Some(start - size..start)
        })
    }

    /// The text of a statement of each of `self`'s sizes: `head`, then `rows` copies of `row`
    /// (a parenthesised list of `?`), then `tail`.
    fn statement_texts(self, head: &str, row: &str, tail: &str) -> Vec<String> {
        self.sizes()
            .iter()
            .map(|rows| format!("{head} VALUES {}{tail}", vec![row; *rows].join(", ")))
            .collect()
    }
}

/// The statements that write several rows at once, by kind and number of rows: the writer
/// keeps its own prepared for the life of its connection; any other connection takes them
/// from its statement cache, which hashes their text on the way out and back.
pub(crate) trait RowStatements {
    /// The connection they run on.
    fn connection(&self) -> &Connection;

    /// Runs `work` with the statement that writes `rows` rows of `kind` (a size of
    /// [`RowKind::sizes`]), its parameters to be bound.
    fn with_statement<T>(
        &self,
        kind: RowKind,
        rows: usize,
        work: impl FnOnce(&mut rusqlite::Statement<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T>;
}

impl RowStatements for Connection {
    fn connection(&self) -> &Connection {
        self
    }

    fn with_statement<T>(
        &self,
        kind: RowKind,
        rows: usize,
        work: impl FnOnce(&mut rusqlite::Statement<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        let mut statement = self.prepare_cached(kind.text(rows)?)?;
        work(&mut statement)
    }
}
