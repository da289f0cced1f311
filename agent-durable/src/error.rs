//! [`DurableError`]: what setting up durable turns can fail with.

/// Why a durable-turn component could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum DurableError {
    /// The agent has no store: durable turns keep their history in one the replicas share.
    #[error("the agent has no store; durable turns need one every replica shares (a PostgresStore)")]
    NoStore,
    /// The PostgreSQL connection string does not parse.
    #[error("invalid PostgreSQL connection string: {0}")]
    PostgresConfig(String),
    /// PostgreSQL refused or failed a request.
    #[error("PostgreSQL: {0}")]
    Postgres(String),
}
