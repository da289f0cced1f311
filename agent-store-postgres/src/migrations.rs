//! The schema, as an ordered list of forward migrations recorded in `schema_migrations`.
//!
//! Version `n` is the result of applying the first `n` entries of [`MIGRATIONS`]. Adding a
//! migration is one new entry at the end. Never edit or reorder an entry that has shipped:
//! databases in the field already ran it.
//!
//! Text that comes from outside the process (tool results and arguments, titles, summaries,
//! key-value pairs, tool names and call ids) is stored as `bytea` holding its UTF-8 bytes:
//! PostgreSQL's `text` refuses a NUL character, which a page or a shell may well produce, and
//! SQLite (like the memory store) keeps it. JSON the store serialises itself (message content,
//! queues, parked runs) escapes control characters and stays `text`. Ids are `COLLATE "C"` so
//! that they sort and compare byte by byte, as in the other stores, whatever the database's
//! locale.

use deadpool_postgres::Client;

use agent_core::StoreError;

use crate::error::backend;
use crate::now_millis;

/// One forward migration.
struct Migration {
    /// What it does, for logs and errors.
    name: &'static str,
    /// The SQL.
    sql: &'static str,
}

/// Version 1: everything the store keeps.
const V1: Migration = Migration {
    name: "sessions, messages, tool_calls, compactions, runs, key_value, tabs",
    sql: r#"
CREATE TABLE sessions (
    key         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          text COLLATE "C" NOT NULL UNIQUE,     -- lowercase UUID v4
    title       bytea,
    created_at  bigint NOT NULL,                      -- ms since the epoch
    updated_at  bigint NOT NULL,                      -- creation, renaming, last append
    last_seq    bigint NOT NULL DEFAULT 0             -- the append check locks and moves this
);
CREATE INDEX sessions_updated ON sessions (updated_at DESC, id);

CREATE TABLE messages (
    session_key    bigint NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
    seq            bigint NOT NULL,                   -- 1, 2, 3, ... within the session
    role           text NOT NULL,                     -- system | user | assistant | tool
    content        text NOT NULL,                     -- JSON array of content parts
    tool_calls     text,                              -- JSON array (assistant messages)
    tool_call_id   bytea,                             -- tool messages: the call answered
    tool_name      bytea,
    is_error       boolean NOT NULL,
    compressed     bytea,                             -- compressed tool result replayed later
    reasoning      text,                              -- JSON (assistant messages)
    model_visible  boolean NOT NULL,
    user_visible   boolean NOT NULL,
    created_at     bigint NOT NULL,
    PRIMARY KEY (session_key, seq)                    -- a lost race can never write twice
);

CREATE TABLE tool_calls (
    session_key        bigint NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
    call_id            bytea NOT NULL,
    ord                bigint GENERATED ALWAYS AS IDENTITY,   -- insertion order
    name               bytea NOT NULL,
    arguments          bytea NOT NULL,
    state              text NOT NULL CHECK (state IN
                         ('pending', 'running', 'succeeded', 'failed', 'denied', 'cancelled')),
    raw_result         bytea,
    compressed_result  bytea,
    error              bytea,
    started_at         bigint,
    finished_at        bigint,
    created_at         bigint NOT NULL,
    PRIMARY KEY (session_key, call_id)
);
CREATE INDEX tool_calls_order ON tool_calls (session_key, ord);

CREATE TABLE compactions (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_key bigint NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
    up_to_seq   bigint NOT NULL,                      -- last seq the summary covers
    summary     bytea NOT NULL,
    created_at  bigint NOT NULL
);
CREATE INDEX compactions_session ON compactions (session_key, id);

CREATE TABLE runs (
    session_key bigint PRIMARY KEY REFERENCES sessions (key) ON DELETE CASCADE,
    state       text NOT NULL,                        -- JSON: the pending clarification or approval
    updated_at  bigint NOT NULL
);

CREATE TABLE key_value (
    key    bytea PRIMARY KEY,
    value  bytea NOT NULL
);

CREATE TABLE tabs (
    id                text COLLATE "C" PRIMARY KEY,   -- lowercase UUID
    session_id        text COLLATE "C" NOT NULL,      -- the session the tab owns
    is_open           boolean NOT NULL,
    auto_wake_budget  bigint NOT NULL,
    perm_send_to_tab  boolean NOT NULL,
    perm_read_tab     boolean NOT NULL,
    queue             text NOT NULL,                  -- JSON array of queued messages
    created_at        bigint NOT NULL,
    updated_at        bigint NOT NULL
);
-- Prefix resolution looks at the open tabs only.
CREATE INDEX tabs_open_id ON tabs (id) WHERE is_open;
"#,
};

/// Every migration, oldest first. The schema version is the length of this list.
const MIGRATIONS: &[Migration] = &[V1];

/// The schema version this code writes.
pub(crate) fn latest_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// The version recorded in the schema (0 before the first migration).
pub(crate) async fn current_version(client: &Client) -> Result<i64, StoreError> {
    let exists: bool = client
        .query_one("SELECT to_regclass('schema_migrations') IS NOT NULL", &[])
        .await
        .map_err(backend)?
        .get(0);
    if !exists {
        return Ok(0);
    }
    let row = client
        .query_one("SELECT COALESCE(MAX(version), 0)::bigint FROM schema_migrations", &[])
        .await
        .map_err(backend)?;
    Ok(row.get(0))
}

/// Creates `schema` if given and missing, then migrates it forward to the latest version, all
/// in one transaction holding an advisory lock on the schema's name: of several replicas
/// opening the database at once, one migrates and the others wait, then find nothing to do. A
/// failure rolls everything back, so a crash mid-migration leaves the previous version intact. A
/// schema newer than this code knows is refused with [`StoreError::SchemaTooNew`], untouched.
pub(crate) async fn migrate(client: &mut Client, schema: Option<&str>) -> Result<i64, StoreError> {
    let supported = latest_version();
    let tx = client.transaction().await.map_err(backend)?;
    // The transaction-level lock is released by the commit or rollback, even if this process
    // dies. Keyed by the schema, so stores in different schemas do not wait for each other.
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext('agent-store-postgres'), hashtext(COALESCE($1, current_schema(), '')))",
        &[&schema],
    )
    .await
    .map_err(backend)?;
    if let Some(schema) = schema {
        // A plain identifier (validated by PostgresOptions), so it is safe to splice.
        tx.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))
            .await
            .map_err(backend)?;
    }
    let has_schema: bool = tx
        .query_one("SELECT current_schema() IS NOT NULL", &[])
        .await
        .map_err(backend)?
        .get(0);
    if !has_schema {
        return Err(StoreError::Backend(
            "PostgreSQL has no schema to create the store's tables in (no schema of the search_path exists); \
             set PostgresOptions.schema or create the schema first"
                .into(),
        ));
    }
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version     bigint PRIMARY KEY,
             name        text NOT NULL,
             applied_at  bigint NOT NULL          -- ms since the epoch
         )",
    )
    .await
    .map_err(backend)?;
    let found: i64 = tx
        .query_one("SELECT COALESCE(MAX(version), 0)::bigint FROM schema_migrations", &[])
        .await
        .map_err(backend)?
        .get(0);
    if found > supported {
        return Err(StoreError::SchemaTooNew { found, supported });
    }
    for (index, migration) in MIGRATIONS.iter().enumerate() {
        let version = index as i64 + 1;
        if version <= found {
            continue;
        }
        tx.batch_execute(migration.sql).await.map_err(|e| {
            StoreError::Backend(format!(
                "migration {version} ({}) failed: {}",
                migration.name,
                backend(e)
            ))
        })?;
        tx.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
            &[&version, &migration.name, &now_millis()],
        )
        .await
        .map_err(backend)?;
        tracing::info!(version, name = migration.name, "migrated agent-store-postgres schema");
    }
    tx.commit().await.map_err(backend)?;
    Ok(supported)
}
