//! A PostgreSQL server for the tests: the URL comes from AGENT_CORE_TEST_POSTGRES_URL
//! (scripts/test starts a throwaway server and sets it), and each test gets a schema of its
//! own, so tests run in parallel without seeing each other's rows.

#![allow(dead_code)]

use agent_store_postgres::{PostgresOptions, PostgresStore};

/// The server's URL; a test run with `--include-ignored` and no server fails saying so.
pub fn url() -> String {
    std::env::var("AGENT_CORE_TEST_POSTGRES_URL")
        .expect("AGENT_CORE_TEST_POSTGRES_URL is not set: run scripts/test, or point it at a throwaway database")
}

/// A new schema name no other test uses.
pub fn fresh_schema() -> String {
    format!("agent_test_{}", uuid_hex())
}

fn uuid_hex() -> String {
    agent_core::SessionId::new_random().as_str().replace('-', "")
}

/// Options for a store in `schema`, with a small pool (many tests run at once).
pub fn options(schema: &str) -> PostgresOptions {
    PostgresOptions {
        schema: Some(schema.to_owned()),
        max_connections: 4,
        ..PostgresOptions::default()
    }
}

/// A store in a new schema of its own.
pub async fn fresh_store() -> (PostgresStore, String) {
    let schema = fresh_schema();
    let store = PostgresStore::connect_with(&url(), options(&schema)).await.unwrap();
    (store, schema)
}
