//! The one mapping from a PostgreSQL statement error to the store's error.

use agent_core::StoreError;

/// `e` and its causes, `a: b: c` (tokio-postgres' own message is only the kind of failure,
/// such as "error connecting to server"; the cause says why).
pub(crate) fn with_causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let next = c.to_string();
        if !text.ends_with(&next) {
            text = format!("{text}: {next}");
        }
        cause = c.source();
    }
    text
}

/// A failed statement as [`StoreError::Backend`], with the server's message, detail and SQLSTATE
/// when the server sent one (tokio-postgres' own message is only "db error").
pub(crate) fn backend(e: tokio_postgres::Error) -> StoreError {
    match e.as_db_error() {
        Some(db) => {
            let detail = db.detail().map(|d| format!(" ({d})")).unwrap_or_default();
            StoreError::Backend(format!(
                "PostgreSQL error {}: {}{detail}",
                db.code().code(),
                db.message()
            ))
        }
        None if e.is_closed() => StoreError::Backend(format!(
            "the PostgreSQL connection closed: {}; is the server still running? The next call opens a new connection",
            with_causes(&e)
        )),
        None => StoreError::Backend(format!("PostgreSQL: {}", with_causes(&e))),
    }
}

/// Text read back from a `bytea` column (see the migrations: text from outside the process is
/// stored as its UTF-8 bytes, because PostgreSQL's `text` cannot hold a NUL character).
pub(crate) fn utf8(what: &str, bytes: Vec<u8>) -> Result<String, StoreError> {
    String::from_utf8(bytes).map_err(|e| StoreError::Backend(format!("corrupt {what} in the database: {e}")))
}

/// [`utf8`] of a nullable column.
pub(crate) fn utf8_opt(what: &str, bytes: Option<Vec<u8>>) -> Result<Option<String>, StoreError> {
    bytes.map(|b| utf8(what, b)).transpose()
}

/// A sequence number as PostgreSQL's `bigint`.
pub(crate) fn seq_to_sql(seq: u64) -> i64 {
    i64::try_from(seq).unwrap_or(i64::MAX)
}

/// A `bigint` sequence number read back (never negative in a database this store wrote).
pub(crate) fn seq_from_sql(seq: i64) -> u64 {
    u64::try_from(seq).unwrap_or(0)
}
