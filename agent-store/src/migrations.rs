//! The schema, as an ordered list of forward migrations tracked in `PRAGMA user_version`.
//!
//! Version `n` of the schema is the result of applying the first `n` entries of
//! [`MIGRATIONS`] in order. Adding a migration is one new entry at the end of the list (for
//! example a `tabs` table defined in its own module). Never edit or reorder an entry that has
//! shipped: databases in the field already ran it.

use rusqlite::Connection;

use agent_core::StoreError;

/// One forward migration.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// What it does, for logs and errors.
    pub name: &'static str,
    /// The SQL, run in one transaction together with the `user_version` bump.
    pub sql: &'static str,
}

/// Version 1: sessions, their messages, key-value pairs and encrypted API keys.
const V1_CORE: Migration = Migration {
    name: "sessions, messages, key_value, api_keys",
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

/// Every migration, oldest first. The schema version is the length of this list.
pub const MIGRATIONS: &[Migration] = &[V1_CORE, V2_LOOP_STATE, crate::tabs::V3_TABS];

/// The schema version this code writes.
pub fn latest_version() -> i64 {
    MIGRATIONS.len() as i64
}

fn backend(e: rusqlite::Error) -> StoreError {
    StoreError::Backend(e.to_string())
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
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(backend)?;
        // Another process may have migrated while we waited for the write lock.
        let now = current_version(&tx)?;
        if now >= version {
            continue;
        }
        tx.execute_batch(migration.sql)
            .map_err(|e| StoreError::Backend(format!("migration {version} ({}) failed: {e}", migration.name)))?;
        tx.pragma_update(None, "user_version", version).map_err(backend)?;
        tx.commit().map_err(backend)?;
        tracing::info!(version, name = migration.name, "migrated agent-store schema");
    }
    current_version(conn)
}
