//! [`SqliteStore`]: agent-core's [`Store`] over one SQLite file in WAL mode.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::now_millis;
use agent_core::{Compaction, Message, SessionId, SessionInfo, Store, StoreError, StoredMessage, ToolCallRecord};

use crate::migrations;
use crate::rows::{MessageRow, read_message, read_session, read_tool_call, seq_to_sql};
use crate::sql_error::backend;
use crate::writer::{Append, Writer};
use crate::writes;

/// How hard SQLite works to make a commit survive. As data: `"normal"` or `"full"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Durability {
    /// `synchronous = NORMAL` (the default): a commit survives the process being killed at any
    /// point; the last commits before a power loss or an OS crash may be lost (the database
    /// stays consistent). This is SQLite's recommended setting for WAL mode.
    #[default]
    Normal,
    /// `synchronous = FULL`: every commit is also synced to the disk before it returns, so it
    /// survives a power loss too, at a cost of one fsync per commit.
    Full,
}

/// Options for [`SqliteStore::open_with`]. As data they take the
/// [options format](agent_core::options) (`{"durability": "full", "busy_timeout_ms": 10000}`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SqliteOptions {
    /// Commit durability (default [`Durability::Normal`]).
    pub durability: Durability,
    /// How long a connection waits for another process's write lock (default 5 s).
    #[serde(rename = "busy_timeout_ms", with = "agent_core::options::duration_ms")]
    #[schemars(schema_with = "agent_core::options::millis_schema")]
    pub busy_timeout: Duration,
    /// Read connections kept open for reuse (default 4). Reads run in parallel with each
    /// other and with the single writer (WAL mode).
    pub max_idle_readers: usize,
    /// Whether the loop's message appends and tool-call records are queued to the writer
    /// thread without waiting for their commit (default `true`; see [`SqliteStore`]). With
    /// `false` every write waits for its own commit: the same guarantees per write, at one
    /// commit and two thread hand-offs each, which makes a loop turn many times slower.
    pub write_behind: bool,
    /// How long the writer thread waits for more writes before committing a group that no
    /// caller waits on (default 2 ms). Longer groups cost fewer commits; a crash can lose the
    /// writes of at most this long (plus the time to apply them). Zero commits as soon as
    /// the queue is empty.
    #[serde(rename = "group_commit_delay_ms", with = "agent_core::options::duration_ms")]
    #[schemars(schema_with = "agent_core::options::millis_schema")]
    pub group_commit_delay: Duration,
    /// The most the database file may grow to, or `None` (the default) for no limit beyond
    /// the disk's. A write that would pass it fails as a full disk does ("database or disk is
    /// full"), and the turn that made it ends with a store error.
    pub max_size_bytes: Option<u64>,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            durability: Durability::Normal,
            busy_timeout: Duration::from_secs(5),
            max_idle_readers: 4,
            write_behind: true,
            group_commit_delay: Duration::from_millis(2),
            max_size_bytes: None,
        }
    }
}

/// The columns [`read_session`] reads. A session's last change is the later of its row's
/// `updated_at` (creation, renaming) and its newest message's `created_at`: appending messages
/// does not update the session row (schema 5), which spared the writer one update per session
/// and group commit.
const SESSION_COLUMNS: &str = "id, title, created_at,
    MAX(updated_at, COALESCE((SELECT m.created_at FROM messages m WHERE m.session_key = sessions.key
                              ORDER BY m.seq DESC LIMIT 1), updated_at)) AS last_change";

struct Inner {
    path: PathBuf,
    options: SqliteOptions,
    writer: Writer,
    readers: Mutex<Vec<Connection>>,
}

/// A [`Store`] backed by one SQLite database file per profile (rusqlite with SQLite bundled,
/// so there is no system library dependency).
///
/// - WAL mode: reads never wait for the writer, and a crash never corrupts the file.
/// - The schema is versioned with `PRAGMA user_version` and migrated forward on open; a file
///   with a newer schema than this code knows is refused with [`StoreError::SchemaTooNew`].
/// - SQLite work never runs on the executor's threads. Writes go through one connection
///   (SQLite allows one writer at a time) owned by a writer thread; reads run on Tokio's
///   blocking pool with a small pool of connections of their own, and see every write this
///   process queued before them.
/// - The loop's writes are queued without waiting (write-behind) and committed in groups:
///   appending a message or recording a tool-call state costs the loop a hand-off, not a
///   commit. The writer applies them in order, so a crash (even SIGKILL) can lose only the
///   newest writes, never one in the middle, and crash repair makes the transcript valid
///   again. The loop waits for durability ([`Store::flush`]) before a turn's outcome is
///   returned and before a gated tool runs, so a finished turn is on disk and a crash cannot
///   hide that a side effect was started. A queued write that fails (a full disk, say) is
///   reported by the session's next write or flush, and that turn ends with a store error.
///   [`SqliteOptions::write_behind`] and [`SqliteOptions::group_commit_delay`] tune this.
/// - Checkpoints of the write-ahead log run on a thread of their own, off the write path.
/// - On Linux both threads (`agent-store writer`, `agent-store checkpoint`) run as batch
///   work (`SCHED_BATCH`): the same share of the CPU, but a woken writer waits for the thread
///   that sent the write to block or use up its time slice instead of preempting it. A host
///   that starts the store from a thread with a real-time or idle policy keeps that policy
///   for them.
/// - Cheap to clone; clones share the connections. Several processes may open the same file:
///   SQLite's locking (with a busy timeout) serialises their writes, and the sequence check of
///   [`Store::append_messages`] turns a lost race into [`StoreError::Conflict`].
///
/// ```
/// use agent_core::{Agent, ScriptedProvider, ScriptedReply};
/// use agent_store::SqliteStore;
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// let store = SqliteStore::open(dir.path().join("profile.db")).await?;
/// let agent = Agent::builder()
///     .provider(ScriptedProvider::new([ScriptedReply::text("Hello!").into()]))
///     .store(store.clone())
///     .build()?;
/// let session = agent.create_session().await?;
/// session.send("Hi").await;
/// // Later, or in another process: the history comes back from the file.
/// let resumed = agent.open_session(session.id()).await?;
/// assert_eq!(resumed.messages().await?.len(), 2);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding a connection cannot leave a transaction open (it rolls back on
    // drop), so the connection is still usable.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn configure(conn: &Connection, options: &SqliteOptions) -> Result<(), StoreError> {
    // SQLite takes an i32 of milliseconds (rusqlite panics past it): about 24 days is "forever".
    let busy = options.busy_timeout.min(Duration::from_millis(i32::MAX as u64));
    conn.busy_timeout(busy).map_err(backend)?;
    conn.pragma_update(None, "foreign_keys", true).map_err(backend)?;
    let sync = match options.durability {
        Durability::Normal => "NORMAL",
        Durability::Full => "FULL",
    };
    conn.pragma_update(None, "synchronous", sync).map_err(backend)?;
    Ok(())
}

/// Creates a missing database file readable by its owner only (0600, whatever the umask),
/// before SQLite opens it: the file holds conversations and encrypted API keys, and SQLite
/// gives the `-wal` and `-shm` files it creates the database file's permissions. An existing
/// file is left as it is.
fn create_private(path: &Path) -> Result<(), StoreError> {
    // An in-memory database or a URI is SQLite's to interpret.
    let name = path.as_os_str();
    if name.is_empty() || name == ":memory:" || name.to_string_lossy().starts_with("file:") {
        return Ok(());
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(_file) => {
            #[cfg(unix)]
            {
                // The umask may have removed bits from 0600 (never added): set it exactly.
                use std::os::unix::fs::PermissionsExt;
                _file
                    .set_permissions(std::fs::Permissions::from_mode(0o600))
                    .map_err(|e| {
                        StoreError::Backend(format!("cannot set the permissions of {}: {e}", path.display()))
                    })?;
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(StoreError::Backend(format!("cannot create {}: {e}", path.display()))),
    }
}

fn open_connection(path: &Path, options: &SqliteOptions, read_only: bool) -> Result<Connection, StoreError> {
    // Read connections open read-write (a WAL reader must be able to map the shared-memory
    // index) but refuse writes with `query_only`.
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
    if !read_only {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
        create_private(path)?;
    }
    let conn = Connection::open_with_flags(path, flags)
        .map_err(|e| StoreError::Backend(format!("cannot open {}: {e}", path.display())))?;
    configure(&conn, options)?;
    if read_only {
        conn.pragma_update(None, "query_only", true).map_err(backend)?;
    }
    Ok(conn)
}

impl SqliteStore {
    /// Opens (creating it if needed) the database at `path`, switches it to WAL mode and
    /// migrates its schema forward. Runs on the blocking pool.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_with(path, SqliteOptions::default()).await
    }

    /// [`Self::open`] with options.
    pub async fn open_with(path: impl AsRef<Path>, options: SqliteOptions) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        tokio::task::spawn_blocking(move || Self::open_blocking(path, options))
            .await
            .map_err(|e| StoreError::Backend(format!("open task failed: {e}")))?
    }

    /// Opens the store synchronously (for hosts outside an async context). Do not call this
    /// on an async executor thread.
    pub fn open_blocking(path: impl AsRef<Path>, options: SqliteOptions) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        let mut writer = open_connection(&path, &options, false)?;
        let mode: String = writer
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(backend)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Backend(format!(
                "{} cannot use WAL mode (journal_mode is {mode}); is it on a network filesystem?",
                path.display()
            )));
        }
        migrations::migrate_to(&mut writer, migrations::latest_version())?;
        if let Some(bytes) = options.max_size_bytes {
            let page_size: i64 = writer
                .query_row("PRAGMA page_size", [], |r| r.get(0))
                .map_err(backend)?;
            let pages = bytes.div_ceil(page_size.max(512) as u64);
            writer
                .query_row(&format!("PRAGMA max_page_count = {pages}"), [], |_| Ok(()))
                .map_err(backend)?;
        }
        let checkpoints = open_connection(&path, &options, false)?;
        let writer = Writer::start(
            writer,
            checkpoints,
            "agent-store writer".to_owned(),
            options.group_commit_delay,
        )?;
        Ok(SqliteStore {
            inner: Arc::new(Inner {
                path,
                options,
                writer,
                readers: Mutex::new(Vec::new()),
            }),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The schema version of the file (equal to [`Self::latest_schema_version`] once open).
    pub async fn schema_version(&self) -> Result<i64, StoreError> {
        self.read(migrations::current_version).await
    }

    /// The schema version this code writes.
    pub fn latest_schema_version() -> i64 {
        migrations::latest_version()
    }

    /// Deletes a session and everything stored for it (messages, tool calls, compactions,
    /// parked run). Deleting a missing session is [`StoreError::SessionNotFound`].
    pub async fn delete_session(&self, id: &SessionId) -> Result<(), StoreError> {
        let target = id.clone();
        // The session's key-value entries: every key from its prefix (which ends in '/') up to
        // the same prefix ending in '0', the next character, so the primary key's index serves.
        let first_key = agent_core::session_key_prefix(id);
        let past_key = format!("{}0", first_key.trim_end_matches('/'));
        self.write(move |conn| {
            let n = conn
                .execute("DELETE FROM sessions WHERE id = ?1", [target.as_str()])
                .map_err(backend)?;
            if n == 0 {
                return Err(StoreError::SessionNotFound(target));
            }
            conn.execute(
                "DELETE FROM key_value WHERE key >= ?1 AND key < ?2",
                [first_key.as_str(), past_key.as_str()],
            )
            .map_err(backend)?;
            Ok(())
        })
        .await?;
        self.inner.writer.forget(id).await
    }

    /// Waits until every write queued so far is committed, and reports the first queued
    /// write of `session` that failed since the last call that reported one (see
    /// [`Store::flush`]).
    pub async fn flush(&self, session: &SessionId) -> Result<(), StoreError> {
        self.inner.writer.barrier().await?;
        match self.inner.writer.take_failure(session) {
            Some(failure) => Err(failure),
            None => Ok(()),
        }
    }

    /// Tool calls of a session that are still pending or running (what crash repair closes).
    pub async fn open_tool_calls(&self, session: &SessionId) -> Result<Vec<ToolCallRecord>, StoreError> {
        self.select_tool_calls(
            session,
            "SELECT * FROM tool_calls WHERE session_key = ?1 AND state IN ('pending', 'running')
             ORDER BY created_at, rowid",
        )
        .await
    }

    /// The tool-call records `sql` selects, given the session's key as `?1`.
    async fn select_tool_calls(
        &self,
        session: &SessionId,
        sql: &'static str,
    ) -> Result<Vec<ToolCallRecord>, StoreError> {
        let session = session.clone();
        self.read(move |conn| {
            let key = writes::existing_session_key(conn, &session)?;
            let mut stmt = conn.prepare_cached(sql).map_err(backend)?;
            let rows = stmt
                .query_map([key], |row| read_tool_call(row, &session))
                .map_err(backend)?;
            rows.map(|r| r.map_err(backend)?).collect()
        })
        .await
    }

    /// Copies the write-ahead log into the main file and truncates it, after every write
    /// queued before (the store also checkpoints on its own, off the write path, as the log
    /// grows).
    pub async fn checkpoint(&self) -> Result<(), StoreError> {
        self.inner
            .writer
            .run_alone(|conn| {
                conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                    .map_err(backend)
            })
            .await
    }

    /// Runs `f` on the writer thread, in the next group transaction (in a savepoint of its
    /// own), and returns once it is committed.
    pub(crate) async fn write<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        self.inner.writer.run(f).await
    }

    /// Runs `f` with a read connection on the blocking pool.
    pub(crate) async fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        // Reads see this process's own writes, queued ones included.
        if !self.inner.writer.is_idle() {
            let _ = self.inner.writer.barrier().await;
        }
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || {
            let pooled = lock(&inner.readers).pop();
            let conn = match pooled {
                Some(c) => c,
                None => open_connection(&inner.path, &inner.options, true)?,
            };
            let result = f(&conn);
            let mut idle = lock(&inner.readers);
            if idle.len() < inner.options.max_idle_readers {
                idle.push(conn);
            }
            result
        })
        .await
        .map_err(|e| StoreError::Backend(format!("store task failed: {e}")))?
    }
}

#[async_trait]
impl Store for SqliteStore {
    async fn create_session(&self, info: &SessionInfo) -> Result<(), StoreError> {
        self.inner.writer.create_session(info.clone()).await
    }

    async fn create_generated_session(&self, info: &SessionInfo) -> Result<(), StoreError> {
        if !self.inner.options.write_behind {
            return self.create_session(info).await;
        }
        // A random id cannot be taken, so there is no AlreadyExists to wait for.
        self.inner.writer.create_session_behind(info.clone()).await
    }

    async fn session(&self, id: &SessionId) -> Result<Option<SessionInfo>, StoreError> {
        let id = id.clone();
        self.read(move |conn| {
            conn.query_row(
                &format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?1"),
                [id.as_str()],
                read_session,
            )
            .optional()
            .map_err(backend)?
            .transpose()
        })
        .await
    }

    async fn list_sessions(&self) -> Result<Vec<SessionInfo>, StoreError> {
        self.read(|conn| {
            let mut stmt = conn
                .prepare_cached(&format!(
                    "SELECT {SESSION_COLUMNS} FROM sessions ORDER BY last_change DESC, id"
                ))
                .map_err(backend)?;
            let rows = stmt.query_map([], read_session).map_err(backend)?;
            rows.map(|r| r.map_err(backend)?).collect()
        })
        .await
    }

    async fn set_title(&self, id: &SessionId, title: &str) -> Result<(), StoreError> {
        let id = id.clone();
        let title = title.to_owned();
        self.write(move |conn| {
            let n = conn
                .execute(
                    "UPDATE sessions SET title = ?2, updated_at = ?3 WHERE id = ?1",
                    params![id.as_str(), title, now_millis()],
                )
                .map_err(backend)?;
            if n == 0 {
                return Err(StoreError::SessionNotFound(id));
            }
            Ok(())
        })
        .await
    }

    async fn delete_session(&self, id: &SessionId) -> Result<(), StoreError> {
        SqliteStore::delete_session(self, id).await
    }

    async fn flush(&self, session: &SessionId) -> Result<(), StoreError> {
        SqliteStore::flush(self, session).await
    }

    async fn append_messages(
        &self,
        session: &SessionId,
        first_seq: u64,
        messages: &[Message],
    ) -> Result<(), StoreError> {
        if messages.is_empty() {
            // Nothing to write, and the answer a write would get: a missing session, or a
            // sequence number that does not follow the last, is refused (as by every store).
            let actual = self.last_seq(session).await? + 1;
            return if first_seq == actual {
                Ok(())
            } else {
                Err(StoreError::Conflict {
                    session: session.clone(),
                    expected: first_seq,
                    actual,
                })
            };
        }
        let writer = &self.inner.writer;
        let count = messages.len() as u64;
        // Serialised here: the writer thread is the busier of the two.
        let append = Append {
            session: session.clone(),
            first_seq,
            rows: messages
                .iter()
                .map(MessageRow::from_message)
                .collect::<Result<Vec<_>, _>>()?,
        };
        if self.inner.options.write_behind {
            if let Some(failure) = writer.take_failure(session) {
                return Err(failure);
            }
            // `first_seq` follows this process's own last write: the caller need not wait
            // (the writer still checks it).
            if writer.reserve_seq(session, first_seq, count) {
                return writer.append_behind(append).finish().await;
            }
            // A queued write that failed since the first look makes the queue forget the
            // sequence after keeping the failure: that failure is the answer, not the
            // conflict the file would report for the rows it never got.
            if let Some(failure) = writer.take_failure(session) {
                return Err(failure);
            }
            // Otherwise the caller waits for the writer's answer, which the file decides: the
            // first append of the session in this process, a replay of messages already
            // written (accepted if they are the same), a lost race or a gap. After a replay
            // that wrote nothing the number learned below may be lower than the file's; the
            // next append then takes this path once more and learns it.
        }
        // Boxed: this method's future is boxed at every call, and should stay as small as the
        // usual path above needs (see `Writer::submit_now`).
        Box::pin(writer.append(append)).await?;
        writer.learn_seq(session, first_seq + count);
        Ok(())
    }

    async fn load_messages(&self, session: &SessionId, after_seq: u64) -> Result<Vec<StoredMessage>, StoreError> {
        let session = session.clone();
        self.read(move |conn| {
            let key = writes::existing_session_key(conn, &session)?;
            let mut stmt = conn
                .prepare_cached(
                    "SELECT seq, role, content, tool_calls, tool_call_id, tool_name, is_error, compressed,
                            reasoning, model_visible, user_visible, created_at
                     FROM messages WHERE session_key = ?1 AND seq > ?2 ORDER BY seq",
                )
                .map_err(backend)?;
            let rows = stmt
                .query_map(params![key, seq_to_sql(after_seq)], read_message)
                .map_err(backend)?;
            rows.map(|r| r.map_err(backend)?).collect()
        })
        .await
    }

    async fn last_seq(&self, session: &SessionId) -> Result<u64, StoreError> {
        let session = session.clone();
        self.read(move |conn| {
            let key = writes::existing_session_key(conn, &session)?;
            Ok(writes::next_seq(conn, key)? - 1)
        })
        .await
    }

    async fn upsert_tool_call(&self, record: &ToolCallRecord) -> Result<(), StoreError> {
        self.upsert_tool_call_owned(record.clone()).await
    }

    async fn upsert_tool_call_owned(&self, record: ToolCallRecord) -> Result<(), StoreError> {
        let writer = &self.inner.writer;
        // A session this process has not written to yet may not exist: the caller waits for
        // the answer. After that, records are written behind.
        if self.inner.options.write_behind && writer.knows(&record.session_id) {
            return writer.record_behind(record).finish().await;
        }
        // Boxed, as in `append_messages`.
        Box::pin(writer.record(record)).await
    }

    async fn tool_calls(&self, session: &SessionId) -> Result<Vec<ToolCallRecord>, StoreError> {
        self.select_tool_calls(
            session,
            "SELECT * FROM tool_calls WHERE session_key = ?1 ORDER BY created_at, rowid",
        )
        .await
    }

    async fn add_compaction(&self, compaction: &Compaction) -> Result<(), StoreError> {
        let c = compaction.clone();
        self.write(move |conn| {
            writes::existing_session_key(conn, &c.session_id)?;
            conn.execute(
                "INSERT INTO compactions (session_id, cursor, summary, created_at) VALUES (?1, ?2, ?3, ?4)",
                params![c.session_id.as_str(), seq_to_sql(c.cursor), c.summary, c.created_at_ms],
            )
            .map_err(backend)?;
            Ok(())
        })
        .await
    }

    async fn latest_compaction(&self, session: &SessionId) -> Result<Option<Compaction>, StoreError> {
        let session = session.clone();
        self.read(move |conn| {
            writes::existing_session_key(conn, &session)?;
            conn.query_row(
                "SELECT cursor, summary, created_at FROM compactions WHERE session_id = ?1 ORDER BY id DESC LIMIT 1",
                [session.as_str()],
                |r| {
                    Ok(Compaction {
                        session_id: session.clone(),
                        cursor: r.get::<_, i64>(0)?.max(0) as u64,
                        summary: r.get(1)?,
                        created_at_ms: r.get(2)?,
                    })
                },
            )
            .optional()
            .map_err(backend)
        })
        .await
    }

    async fn set_parked_run(&self, session: &SessionId, state: Option<&serde_json::Value>) -> Result<(), StoreError> {
        let session = session.clone();
        let state = state.map(|s| s.to_string());
        self.write(move |conn| {
            writes::existing_session_key(conn, &session)?;
            match state {
                Some(state) => conn.execute(
                    "INSERT INTO runs (session_id, state, updated_at) VALUES (?1, ?2, ?3)
                     ON CONFLICT (session_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at",
                    params![session.as_str(), state, now_millis()],
                ),
                None => conn.execute("DELETE FROM runs WHERE session_id = ?1", [session.as_str()]),
            }
            .map_err(backend)?;
            Ok(())
        })
        .await
    }

    async fn parked_run(&self, session: &SessionId) -> Result<Option<serde_json::Value>, StoreError> {
        let session = session.clone();
        self.read(move |conn| {
            writes::existing_session_key(conn, &session)?;
            let text: Option<String> = conn
                .query_row(
                    "SELECT state FROM runs WHERE session_id = ?1",
                    [session.as_str()],
                    |r| r.get(0),
                )
                .optional()
                .map_err(backend)?;
            text.map(|t| serde_json::from_str(&t).map_err(|e| StoreError::Backend(format!("corrupt parked run: {e}"))))
                .transpose()
        })
        .await
    }

    async fn kv_get(&self, key: &str) -> Result<Option<String>, StoreError> {
        let key = key.to_owned();
        self.read(move |conn| {
            conn.query_row("SELECT value FROM key_value WHERE key = ?1", [key], |r| r.get(0))
                .optional()
                .map_err(backend)
        })
        .await
    }

    async fn kv_set(&self, key: &str, value: &str) -> Result<(), StoreError> {
        let key = key.to_owned();
        let value = value.to_owned();
        self.write(move |conn| {
            conn.execute(
                "INSERT INTO key_value (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![key, value],
            )
            .map_err(backend)?;
            Ok(())
        })
        .await
    }

    async fn kv_delete(&self, key: &str) -> Result<(), StoreError> {
        let key = key.to_owned();
        self.write(move |conn| {
            conn.execute("DELETE FROM key_value WHERE key = ?1", [key])
                .map_err(backend)?;
            Ok(())
        })
        .await
    }
}
