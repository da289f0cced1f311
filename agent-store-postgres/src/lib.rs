//! # agent-store-postgres
//!
//! PostgreSQL persistence for [`agent_core`]: [`PostgresStore`] implements
//! [`agent_core::Store`] and [`agent_core::tabs::TabStore`] over one PostgreSQL database (or
//! one schema of it), so sessions are reachable from every machine that runs an agent, where
//! `agent-store`'s SQLite file serves one machine. It keeps what the SQLite store keeps and
//! enforces the same rules (one conformance suite runs against both):
//!
//! - sessions, messages with sequence numbers (an append whose first number is not the
//!   session's next one is [`agent_core::StoreError::Conflict`], so two writers, on one
//!   machine or two, never interleave, unless it repeats stored messages as they are: a
//!   replayed turn), tool-call records with their state machine,
//!   compactions, parked runs, key-value pairs, and the tab registry with its queued messages;
//! - a versioned schema, migrated forward on open in one transaction under an advisory lock,
//!   so several replicas may start at once;
//! - a small pool of connections ([deadpool-postgres](https://docs.rs/deadpool-postgres) over
//!   [tokio-postgres](https://docs.rs/tokio-postgres)); no call blocks the executor.
//!
//! Connections are made without TLS: run the database on the same host (loopback or a Unix
//! socket) or on a private network you trust. Every write is durable when it returns (there
//! is no write-behind queue), and a turn interrupted by a crash is repaired when its session is
//! opened again (`Agent::open_session`), as with every store.
//!
//! API keys are not kept here: `agent-store`'s `KeyStore` seals them with a key of the machine
//! (its keychain), which other replicas could not open. Give replicas their keys from the
//! deployment's secret store instead.

#![deny(missing_docs)]

mod connect;
mod error;
mod kv;
mod message_insert;
mod messages;
mod migrations;
mod options;
mod replayed;
mod rows;
mod session_state;
mod sessions;
mod store;
mod tabs;
mod tool_calls;

pub use options::PostgresOptions;
pub use store::PostgresStore;

/// Milliseconds since the Unix epoch (0 if the clock is before it): the store's timestamps.
pub(crate) fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
