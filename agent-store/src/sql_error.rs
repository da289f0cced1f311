//! The one mapping from a SQLite error to the store's error, shared by every module that
//! touches the database.

use agent_core::StoreError;

/// A SQLite failure as [`StoreError::Backend`], keeping rusqlite's message.
pub(crate) fn backend(e: rusqlite::Error) -> StoreError {
    StoreError::Backend(e.to_string())
}
