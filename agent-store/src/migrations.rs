//! The schema, as an ordered list of forward migrations tracked in `PRAGMA user_version`.
//!
//! Version `n` of the schema is the result of applying the first `n` entries of
//! [`MIGRATIONS`] in order. Adding a migration is one new constant here and one new entry at
//! the end of the list. Never edit or reorder an entry that has shipped: databases in the
//! field already ran it.

use rusqlite::{Connection, OptionalExtension};

use agent_core::StoreError;

use crate::sql_error::backend;

/// One forward migration.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// What it does, for logs and errors.
    pub name: &'static str,
    /// The SQL, run in one transaction together with the `user_version` bump.
    pub sql: &'static str,
    /// Rebuilds tables other tables refer to: foreign keys are off while it runs (so dropping
    /// the old table deletes nothing through `ON DELETE CASCADE`) and checked before commit.
    pub rebuilds_tables: bool,
}

/// Version 1: sessions, their messages, key-value pairs and encrypted API keys.
const V1_CORE: Migration = Migration {
    name: "sessions, messages, key_value, api_keys",
    rebuilds_tables: false,
    sql: r#"
CREATE TABLE sessions (
    id          TEXT PRIMARY KEY NOT NULL,   -- lowercase UUID v4
    title       TEXT,
    created_at  INTEGER NOT NULL,            -- ms since the epoch
    updated_at  INTEGER NOT NULL
);
CREATE INDEX sessions_updated ON sessions(updated_at DESC);

CREATE TABLE messages (
    id             INTEGER PRIMARY KEY,
    session_id     TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq            INTEGER NOT NULL,            -- 1, 2, 3, ... within the session
    role           TEXT NOT NULL,               -- system | user | assistant | tool
    content        TEXT NOT NULL,               -- JSON array of content parts
    tool_calls     TEXT,                        -- JSON array (assistant messages)
    tool_call_id   TEXT,                        -- tool messages: the call answered
    tool_name      TEXT,
    is_error       INTEGER NOT NULL DEFAULT 0,
    compressed     TEXT,                        -- compressed tool result replayed later
    reasoning      TEXT,                        -- JSON (assistant messages)
    model_visible  INTEGER NOT NULL DEFAULT 1,
    user_visible   INTEGER NOT NULL DEFAULT 1,
    created_at     INTEGER NOT NULL
);
-- The hot path: a session's history in order, and its last sequence number.
CREATE UNIQUE INDEX messages_session_seq ON messages(session_id, seq);

CREATE TABLE key_value (
    key    TEXT PRIMARY KEY NOT NULL,
    value  TEXT NOT NULL
);

CREATE TABLE api_keys (
    provider    TEXT PRIMARY KEY NOT NULL,
    ciphertext  BLOB NOT NULL,                  -- never plaintext: see KeyStore
    updated_at  INTEGER NOT NULL
);
"#,
};

/// Version 2: tool-call records, compactions and parked runs.
const V2_LOOP_STATE: Migration = Migration {
    name: "tool_calls, compactions, runs",
    rebuilds_tables: false,
    sql: r#"
CREATE TABLE tool_calls (
    session_id         TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    call_id            TEXT NOT NULL,
    name               TEXT NOT NULL,
    arguments          TEXT NOT NULL,
    state              TEXT NOT NULL CHECK (state IN
                         ('pending', 'running', 'succeeded', 'failed', 'denied', 'cancelled')),
    raw_result         TEXT,
    compressed_result  TEXT,
    error              TEXT,
    started_at         INTEGER,
    finished_at        INTEGER,
    created_at         INTEGER NOT NULL,
    PRIMARY KEY (session_id, call_id)
);
-- Open calls (the ones crash repair looks for).
CREATE INDEX tool_calls_open ON tool_calls(session_id) WHERE state IN ('pending', 'running');

CREATE TABLE compactions (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    cursor      INTEGER NOT NULL,               -- last seq the summary covers
    summary     TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE INDEX compactions_session ON compactions(session_id, id);

CREATE TABLE runs (
    session_id  TEXT PRIMARY KEY NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    state       TEXT NOT NULL,                  -- JSON: the pending clarification or approval
    updated_at  INTEGER NOT NULL
);
"#,
};

/// Version 3: the tab registry. A tab's handle is derived from the ids of the open tabs, so it
/// has no column.
const V3_TABS: Migration = Migration {
    name: "tabs",
    rebuilds_tables: false,
    sql: r#"
CREATE TABLE tabs (
    id                TEXT PRIMARY KEY NOT NULL,   -- lowercase UUID
    session_id        TEXT NOT NULL,               -- the session the tab owns
    is_open           INTEGER NOT NULL DEFAULT 1,
    auto_wake_budget  INTEGER NOT NULL,
    perm_send_to_tab  INTEGER NOT NULL DEFAULT 0,
    perm_read_tab     INTEGER NOT NULL DEFAULT 0,
    queue             TEXT NOT NULL DEFAULT '[]',  -- JSON array of queued messages
    created_at        INTEGER NOT NULL,            -- ms since the epoch
    updated_at        INTEGER NOT NULL
);
-- Prefix resolution scans the open tabs in id order from the prefix on.
CREATE INDEX tabs_open_id ON tabs(is_open, id);
"#,
};

/// Version 4: sessions get an integer key, and messages and tool calls refer to it instead of
/// repeating the 36-character id. Every message and tool-call row, and every entry of their
/// indexes, gets smaller, and checking a row's session becomes a rowid lookup: the loop's
/// write-through does about 40% less work per turn. `AUTOINCREMENT` so that a key is never
/// reused after a delete (a writer that remembers a deleted session's key must not write into
/// another session). Compactions and parked runs keep referring to the id, which stays unique.
/// Rows whose session does not exist (which the foreign keys of versions 1-3 never let in, and
/// which no read could reach) are not carried over.
const V4_SESSION_KEYS: Migration = Migration {
    name: "integer session keys for messages and tool_calls",
    rebuilds_tables: true,
    sql: r#"
CREATE TABLE sessions_v4 (
    key         INTEGER PRIMARY KEY AUTOINCREMENT,
    id          TEXT NOT NULL UNIQUE,        -- lowercase UUID v4
    title       TEXT,
    created_at  INTEGER NOT NULL,            -- ms since the epoch
    updated_at  INTEGER NOT NULL
);
INSERT INTO sessions_v4 (id, title, created_at, updated_at)
    SELECT id, title, created_at, updated_at FROM sessions ORDER BY rowid;

CREATE TABLE messages_v4 (
    id             INTEGER PRIMARY KEY,
    session_key    INTEGER NOT NULL REFERENCES sessions(key) ON DELETE CASCADE,
    seq            INTEGER NOT NULL,            -- 1, 2, 3, ... within the session
    role           TEXT NOT NULL,               -- system | user | assistant | tool
    content        TEXT NOT NULL,               -- JSON array of content parts
    tool_calls     TEXT,                        -- JSON array (assistant messages)
    tool_call_id   TEXT,                        -- tool messages: the call answered
    tool_name      TEXT,
    is_error       INTEGER NOT NULL DEFAULT 0,
    compressed     TEXT,                        -- compressed tool result replayed later
    reasoning      TEXT,                        -- JSON (assistant messages)
    model_visible  INTEGER NOT NULL DEFAULT 1,
    user_visible   INTEGER NOT NULL DEFAULT 1,
    created_at     INTEGER NOT NULL
);
INSERT INTO messages_v4
    SELECT m.id, s.key, m.seq, m.role, m.content, m.tool_calls, m.tool_call_id, m.tool_name, m.is_error,
           m.compressed, m.reasoning, m.model_visible, m.user_visible, m.created_at
    FROM messages m JOIN sessions_v4 s ON s.id = m.session_id ORDER BY m.id;

CREATE TABLE tool_calls_v4 (
    session_key        INTEGER NOT NULL REFERENCES sessions(key) ON DELETE CASCADE,
    call_id            TEXT NOT NULL,
    name               TEXT NOT NULL,
    arguments          TEXT NOT NULL,
    state              TEXT NOT NULL CHECK (state IN
                         ('pending', 'running', 'succeeded', 'failed', 'denied', 'cancelled')),
    raw_result         TEXT,
    compressed_result  TEXT,
    error              TEXT,
    started_at         INTEGER,
    finished_at        INTEGER,
    created_at         INTEGER NOT NULL,
    PRIMARY KEY (session_key, call_id)
);
INSERT INTO tool_calls_v4
    SELECT s.key, t.call_id, t.name, t.arguments, t.state, t.raw_result, t.compressed_result, t.error,
           t.started_at, t.finished_at, t.created_at
    FROM tool_calls t JOIN sessions_v4 s ON s.id = t.session_id ORDER BY t.rowid;

DROP TABLE tool_calls;
DROP TABLE messages;
DROP TABLE sessions;
ALTER TABLE sessions_v4 RENAME TO sessions;
ALTER TABLE messages_v4 RENAME TO messages;
ALTER TABLE tool_calls_v4 RENAME TO tool_calls;

CREATE INDEX sessions_updated ON sessions(updated_at DESC);
-- The hot path: a session's history in order, and its last sequence number.
CREATE UNIQUE INDEX messages_session_seq ON messages(session_key, seq);
-- Open calls (the ones crash repair looks for).
CREATE INDEX tool_calls_open ON tool_calls(session_key) WHERE state IN ('pending', 'running');
"#,
};

/// Version 5: cheaper hot writes. The tool-call state `CHECK` compares with each state in
/// turn instead of `IN (...)`: for a list of more than two values SQLite builds a temporary
/// b-tree on every insert and update to evaluate it, which made a tool-call write cost about
/// twice a message insert. And `sessions_updated` goes: a session's last change is now read as
/// the later of its row's `updated_at` and its newest message's `created_at`, so appending
/// messages no longer updates the session row (and this index) at every group commit.
const V5_CHEAPER_WRITES: Migration = Migration {
    name: "tool_calls state check without IN; no sessions_updated index",
    rebuilds_tables: false,
    sql: r#"
CREATE TABLE tool_calls_v5 (
    session_key        INTEGER NOT NULL REFERENCES sessions(key) ON DELETE CASCADE,
    call_id            TEXT NOT NULL,
    name               TEXT NOT NULL,
    arguments          TEXT NOT NULL,
    state              TEXT NOT NULL CHECK (state = 'pending' OR state = 'running'
                         OR state = 'succeeded' OR state = 'failed' OR state = 'denied'
                         OR state = 'cancelled'),
    raw_result         TEXT,
    compressed_result  TEXT,
    error              TEXT,
    started_at         INTEGER,
    finished_at        INTEGER,
    created_at         INTEGER NOT NULL,
    PRIMARY KEY (session_key, call_id)
);
INSERT INTO tool_calls_v5
    SELECT session_key, call_id, name, arguments, state, raw_result, compressed_result, error,
           started_at, finished_at, created_at
    FROM tool_calls ORDER BY rowid;
DROP TABLE tool_calls;
ALTER TABLE tool_calls_v5 RENAME TO tool_calls;
-- Open calls (the ones crash repair looks for).
CREATE INDEX tool_calls_open ON tool_calls(session_key) WHERE state IN ('pending', 'running');

DROP INDEX sessions_updated;
"#,
};

/// Every migration, oldest first. The schema version is the length of this list.
pub const MIGRATIONS: &[Migration] = &[V1_CORE, V2_LOOP_STATE, V3_TABS, V4_SESSION_KEYS, V5_CHEAPER_WRITES];

/// The schema version this code writes.
pub fn latest_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// The file's schema version (`PRAGMA user_version`).
pub fn current_version(conn: &Connection) -> Result<i64, StoreError> {
    conn.query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(backend)
}

/// Migrates the database forward to `target` (at most [`latest_version`]). A file whose
/// version is newer than this code knows is refused with [`StoreError::SchemaTooNew`], never
/// downgraded. Each migration runs in its own transaction with its version bump, so a crash
/// mid-migration leaves the previous version intact.
pub fn migrate_to(conn: &mut Connection, target: i64) -> Result<i64, StoreError> {
    let supported = latest_version();
    let target = target.min(supported);
    let found = current_version(conn)?;
    if found > supported {
        return Err(StoreError::SchemaTooNew { found, supported });
    }
    for (index, migration) in MIGRATIONS.iter().enumerate() {
        let version = index as i64 + 1;
        if version <= found || version > target {
            continue;
        }
        if migration.rebuilds_tables {
            // Only outside a transaction does this pragma take effect.
            let foreign_keys: bool = conn
                .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
                .map_err(backend)?;
            conn.pragma_update(None, "foreign_keys", false).map_err(backend)?;
            let result = apply(conn, version, migration);
            conn.pragma_update(None, "foreign_keys", foreign_keys)
                .map_err(backend)?;
            result?;
        } else {
            apply(conn, version, migration)?;
        }
    }
    current_version(conn)
}

/// Runs one migration and its version bump in one transaction (unless another process got
/// there first).
fn apply(conn: &mut Connection, version: i64, migration: &Migration) -> Result<(), StoreError> {
    let failed = |e: &dyn std::fmt::Display| {
        StoreError::Backend(format!("migration {version} ({}) failed: {e}", migration.name))
    };
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(backend)?;
    // Another process may have migrated while we waited for the write lock.
    if current_version(&tx)? >= version {
        return Ok(());
    }
    tx.execute_batch(migration.sql).map_err(|e| failed(&e))?;
    if migration.rebuilds_tables {
        let dangling: Option<String> = tx
            .query_row("PRAGMA foreign_key_check", [], |r| r.get(0))
            .optional()
            .map_err(backend)?;
        if let Some(table) = dangling {
            return Err(failed(&format!("rows of {table} refer to a missing row")));
        }
    }
    tx.pragma_update(None, "user_version", version).map_err(backend)?;
    tx.commit().map_err(backend)?;
    tracing::info!(version, name = migration.name, "migrated agent-store schema");
    Ok(())
}
