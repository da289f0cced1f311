//! [`PostgresStore`]: the pool, opening (connect and migrate), and the [`Store`] trait, whose
//! methods live with their tables in `sessions.rs`, `messages.rs` and `tool_calls.rs`.

use std::sync::Arc;

use async_trait::async_trait;
use deadpool_postgres::{Client, Pool};

use agent_core::{Compaction, Message, SessionId, SessionInfo, Store, StoreError, StoredMessage, ToolCallRecord};

use crate::connect;
use crate::error::backend;
use crate::migrations;
use crate::options::PostgresOptions;

struct Inner {
    pool: Pool,
    /// Where the pool connects, without the password, for messages and `Debug`.
    target: String,
    schema: Option<String>,
}

/// A [`Store`] (and [`TabStore`](agent_core::tabs::TabStore)) in a PostgreSQL database, for
/// sessions that must be reachable from several machines.
///
/// - Opening connects, then creates or migrates the schema forward (versions are recorded in
///   the `schema_migrations` table; a newer schema than this code knows is refused with
///   [`StoreError::SchemaTooNew`]). Migrating runs in one transaction under an advisory lock,
///   so replicas may open the same database at the same time.
/// - Appends lock the session's row and check the sequence number in one statement, so two
///   writers, on any machines, can never interleave: the loser gets [`StoreError::Conflict`]
///   and writes nothing, unless its messages are the stored ones (a replayed append, which
///   writes only what is new). The primary key `(session, seq)` backs this up.
/// - An append that inserted rows notifies the channel `agent_core_messages` with
///   `<session id> <last inserted seq>` at commit (see docs/postgres.md); a replay that
///   inserted nothing notifies nothing.
/// - Every write is durable (committed) when it returns: [`Store::flush`] has nothing to wait for.
/// - Connections come from a small pool ([`PostgresOptions::max_connections`]) and are opened
///   without TLS: keep the server on loopback, a Unix socket or a private network.
/// - Cheap to clone; clones share the pool. The library reads no environment variable: the
///   URL and options are the caller's.
///
/// ```no_run
/// use agent_core::{Agent, ScriptedProvider, ScriptedReply};
/// use agent_store_postgres::PostgresStore;
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store = PostgresStore::connect("postgres://agents:secret@127.0.0.1:5432/agents").await?;
/// let agent = Agent::builder()
///     .provider(ScriptedProvider::new([ScriptedReply::text("Hello!").into()]))
///     .store(store.clone())
///     .build()?;
/// let session = agent.create_session().await?;
/// session.send("Hi").await;
/// // Later, on this machine or another: the history comes back from the database.
/// let resumed = agent.open_session(session.id()).await?;
/// assert_eq!(resumed.messages().await?.len(), 2);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct PostgresStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("target", &self.inner.target)
            .field("schema", &self.inner.schema)
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/database`, or
    /// PostgreSQL's `key=value` form) with the default [`PostgresOptions`], and migrates its
    /// schema forward. Fails, saying where it tried and what to check, when the server cannot
    /// be reached or refuses the connection.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with(url, PostgresOptions::default()).await
    }

    /// [`Self::connect`] with options (pool size, schema, connect timeout).
    pub async fn connect_with(url: &str, options: PostgresOptions) -> Result<Self, StoreError> {
        options.validate()?;
        let config = connect::parse(url, &options)?;
        let target = connect::describe(&config);
        let pool = connect::pool(config, &options)?;
        let store = PostgresStore {
            inner: Arc::new(Inner {
                pool,
                target,
                schema: options.schema,
            }),
        };
        let mut client = store.client().await?;
        migrations::migrate(&mut client, store.inner.schema.as_deref()).await?;
        Ok(store)
    }

    /// The schema version of the database (equal to [`Self::latest_schema_version`] once open).
    pub async fn schema_version(&self) -> Result<i64, StoreError> {
        migrations::current_version(&self.client().await?).await
    }

    /// The schema version this code writes.
    pub fn latest_schema_version() -> i64 {
        migrations::latest_version()
    }

    /// The schema the tables live in, when one was set in [`PostgresOptions::schema`].
    pub fn schema(&self) -> Option<&str> {
        self.inner.schema.as_deref()
    }

    /// Closes the pool: connections are closed as they come back, and later calls fail.
    pub fn close(&self) {
        self.inner.pool.close();
    }

    /// A pooled connection.
    pub(crate) async fn client(&self) -> Result<Client, StoreError> {
        self.inner
            .pool
            .get()
            .await
            .map_err(|e| connect::pool_error(&self.inner.target, e))
    }

    /// The integer key of an existing session; a missing one is [`StoreError::SessionNotFound`].
    pub(crate) async fn session_key(client: &Client, session: &SessionId) -> Result<i64, StoreError> {
        let stmt = client
            .prepare_cached("SELECT key FROM sessions WHERE id = $1")
            .await
            .map_err(backend)?;
        client
            .query_opt(&stmt, &[&session.as_str()])
            .await
            .map_err(backend)?
            .map(|row| row.get(0))
            .ok_or_else(|| StoreError::SessionNotFound(session.clone()))
    }
}

#[async_trait]
impl Store for PostgresStore {
    async fn create_session(&self, info: &SessionInfo) -> Result<(), StoreError> {
        self.insert_session(info).await
    }

    async fn session(&self, id: &SessionId) -> Result<Option<SessionInfo>, StoreError> {
        self.select_session(id).await
    }

    async fn list_sessions(&self) -> Result<Vec<SessionInfo>, StoreError> {
        self.select_sessions().await
    }

    async fn set_title(&self, id: &SessionId, title: &str) -> Result<(), StoreError> {
        self.update_title(id, title).await
    }

    async fn delete_session(&self, id: &SessionId) -> Result<(), StoreError> {
        self.remove_session(id).await
    }

    async fn append_messages(
        &self,
        session: &SessionId,
        first_seq: u64,
        messages: &[Message],
    ) -> Result<(), StoreError> {
        self.append(session, first_seq, messages).await
    }

    async fn load_messages(&self, session: &SessionId, after_seq: u64) -> Result<Vec<StoredMessage>, StoreError> {
        self.select_messages(session, after_seq).await
    }

    async fn last_seq(&self, session: &SessionId) -> Result<u64, StoreError> {
        self.select_last_seq(session).await
    }

    async fn upsert_tool_call(&self, record: &ToolCallRecord) -> Result<(), StoreError> {
        self.write_tool_call(record).await
    }

    async fn tool_calls(&self, session: &SessionId) -> Result<Vec<ToolCallRecord>, StoreError> {
        self.select_tool_calls(session).await
    }

    async fn add_compaction(&self, compaction: &Compaction) -> Result<(), StoreError> {
        self.insert_compaction(compaction).await
    }

    async fn latest_compaction(&self, session: &SessionId) -> Result<Option<Compaction>, StoreError> {
        self.select_latest_compaction(session).await
    }

    async fn set_parked_run(&self, session: &SessionId, state: Option<&serde_json::Value>) -> Result<(), StoreError> {
        self.write_parked_run(session, state).await
    }

    async fn parked_run(&self, session: &SessionId) -> Result<Option<serde_json::Value>, StoreError> {
        self.select_parked_run(session).await
    }

    async fn kv_get(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.select_kv(key).await
    }

    async fn kv_set(&self, key: &str, value: &str) -> Result<(), StoreError> {
        self.write_kv(key, value).await
    }

    async fn kv_delete(&self, key: &str) -> Result<(), StoreError> {
        self.remove_kv(key).await
    }
}
