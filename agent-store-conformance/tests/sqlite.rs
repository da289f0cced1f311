#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The conformance suite against agent-store's SQLite store: with its default write-behind
//! queue, and with every write waiting for its commit.

use std::path::PathBuf;
use std::sync::Arc;

use agent_store::{SqliteOptions, SqliteStore};
use agent_store_conformance::{Fixture, Handles};

async fn handles(path: PathBuf, options: SqliteOptions) -> Handles {
    let store = SqliteStore::open_with(path, options).await.unwrap();
    Handles {
        store: Arc::new(store.clone()),
        tabs: Arc::new(store),
    }
}

async fn fixture(options: SqliteOptions) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.db");
    let first = handles(path.clone(), options.clone()).await;
    // Reopening opens the file again, as a second process would.
    Fixture::new(first, move || Box::pin(handles(path.clone(), options.clone())), dir)
}

mod write_behind {
    use super::*;

    async fn open() -> Fixture {
        fixture(SqliteOptions::default()).await
    }

    agent_store_conformance::store_conformance_tests!(open);
}

mod write_through {
    use super::*;

    async fn open() -> Fixture {
        fixture(SqliteOptions {
            write_behind: false,
            ..SqliteOptions::default()
        })
        .await
    }

    agent_store_conformance::store_conformance_tests!(open);
}
