#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The store conformance suite (the same functions the memory and SQLite stores pass) against
//! PostgresStore, each test in a schema of its own.

use std::sync::Arc;

use agent_store_conformance::{Fixture, Handles};
use agent_store_postgres::PostgresStore;

mod common;

async fn handles(schema: String) -> Handles {
    let store = PostgresStore::connect_with(&common::url(), common::options(&schema))
        .await
        .unwrap();
    Handles {
        store: Arc::new(store.clone()),
        tabs: Arc::new(store),
    }
}

async fn open() -> Fixture {
    let schema = common::fresh_schema();
    let first = handles(schema.clone()).await;
    // Reopening connects a second pool to the same schema, as another replica would.
    Fixture::new(first, move || Box::pin(handles(schema.clone())), ())
}

agent_store_conformance::store_conformance_tests!(
    open,
    #[ignore = "needs PostgreSQL: set AGENT_CORE_TEST_POSTGRES_URL (scripts/test starts one)"]
);
