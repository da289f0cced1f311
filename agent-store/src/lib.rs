//! # agent-store
//!
//! SQLite persistence for [`agent_core`]: [`SqliteStore`] implements [`agent_core::Store`] over
//! one database file per profile (WAL mode, versioned schema migrated forward on open), so
//! every message and tool-call state change is written as it happens (queued to a writer
//! thread and group-committed within milliseconds; a finished turn is always on disk) and a
//! session resumes in a new process. A turn interrupted by a crash is repaired when its
//! session is reopened (`Agent::open_session`): each dangling tool call gets an
//! "interrupted" result.
//!
//! [`KeyStore`] keeps one API key per provider in the same file, encrypted through a
//! host-supplied [`Crypt`] (the shape of Electron's `safeStorage`), with [`FileKeyCrypt`] for
//! hosts without an OS keychain.

#![deny(missing_docs)]

mod crypt;
mod keys;
// Internal: public (hidden) only so the migration test can build a file at an older schema.
#[doc(hidden)]
pub mod migrations;
mod replayed;
mod row_statements;
mod rows;
mod sql_error;
mod sqlite;
mod tabs;
mod writer;
mod writes;

pub use crypt::{Crypt, CryptError, FileKeyCrypt};
pub use keys::{DEFAULT_PROVIDERS, KeyStatus, KeyStore, KeyStoreError};
pub use sqlite::{Durability, SqliteOptions, SqliteStore};

/// Milliseconds since the Unix epoch (0 if the clock is before it): the store's timestamps.
pub(crate) fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
