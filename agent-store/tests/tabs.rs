#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! The tab registry in SQLite: its table and the index its prefix query uses. What every tab
//! store promises (round trips, the literal prefix query, list order, a hub restarted from the
//! store) is checked for SQLite by agent-store-conformance's tests/sqlite.rs.

use agent_store::SqliteStore;
use rusqlite::Connection;

async fn fresh() -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("profile.db")).await.unwrap();
    (dir, store)
}

#[tokio::test]
async fn the_prefix_query_is_an_index_range() {
    let (dir, _store) = fresh().await;
    let conn = Connection::open(dir.path().join("profile.db")).unwrap();
    // The search is an index range, not a table scan.
    let plan: String = conn
        .query_row(
            "EXPLAIN QUERY PLAN SELECT id FROM tabs WHERE is_open = 1 AND id >= ?1 AND id < ?2
               AND substr(id, 1, length(?1)) = ?1",
            ["6fe8", "6fe9"],
            |r| r.get(3),
        )
        .unwrap();
    assert!(plan.contains("USING") && plan.contains("INDEX"), "{plan}");
}

#[tokio::test]
async fn the_schema_has_a_tabs_table() {
    let (dir, store) = fresh().await;
    assert_eq!(
        store.schema_version().await.unwrap(),
        SqliteStore::latest_schema_version()
    );
    let conn = Connection::open(dir.path().join("profile.db")).unwrap();
    let n: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'tabs'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 1);
}
