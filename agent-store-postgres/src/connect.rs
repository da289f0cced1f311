//! Turning a URL and [`PostgresOptions`] into a pool of connections, and connection failures
//! into errors that say where the store tried to connect and what to check.

use deadpool_postgres::{Manager, ManagerConfig, Pool, PoolError, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;
use tokio_postgres::config::Host;

use agent_core::StoreError;

use crate::error::with_causes;
use crate::options::PostgresOptions;

/// Where a URL points, for messages: hosts, ports, database and user, never the password.
pub(crate) fn describe(config: &tokio_postgres::Config) -> String {
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
            match host {
                Host::Tcp(name) => format!("{name}:{port}"),
                #[cfg(unix)]
                Host::Unix(dir) => format!("{}/.s.PGSQL.{port}", dir.display()),
            }
        })
        .collect();
    let hosts = if hosts.is_empty() {
        "(no host given)".to_owned()
    } else {
        hosts.join(",")
    };
    format!(
        "{hosts}, database {:?} as user {:?}",
        config.get_dbname().unwrap_or("(the user's)"),
        config.get_user().unwrap_or("(none given)")
    )
}

/// Parses `url` (`postgres://user:password@host:port/database`, or the `key=value` form) and
/// sets what the store needs on every connection.
pub(crate) fn parse(url: &str, options: &PostgresOptions) -> Result<tokio_postgres::Config, StoreError> {
    // The URL may carry a password: the message quotes the parser, not the URL.
    let mut config: tokio_postgres::Config = url.parse().map_err(|e: tokio_postgres::Error| {
        StoreError::Backend(format!(
            "invalid PostgreSQL URL: {}; expected postgres://user:password@host:port/database",
            with_causes(&e)
        ))
    })?;
    config.connect_timeout(options.connect_timeout);
    if config.get_application_name().is_none() {
        // Shows in pg_stat_activity, so an operator can tell the store's connections apart.
        config.application_name("agent-store-postgres");
    }
    if let Some(schema) = &options.schema {
        // Every pooled connection resolves table names in the schema; the name was validated
        // to be a plain identifier, so it needs no quoting.
        let startup = match config.get_options() {
            Some(existing) if !existing.trim().is_empty() => format!("{existing} -c search_path={schema}"),
            _ => format!("-c search_path={schema}"),
        };
        config.options(startup);
    }
    Ok(config)
}

/// A pool over `config`. Connections are opened when first needed.
pub(crate) fn pool(config: tokio_postgres::Config, options: &PostgresOptions) -> Result<Pool, StoreError> {
    // Fast recycling: a connection that broke is found out by its next statement, which fails
    // and drops it; checking each one before reuse would cost a round trip per statement.
    let manager = Manager::from_config(
        config,
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Pool::builder(manager)
        .max_size(options.max_connections)
        .runtime(Runtime::Tokio1)
        .create_timeout(Some(options.connect_timeout))
        .build()
        .map_err(|e| StoreError::Backend(format!("cannot build the PostgreSQL connection pool: {e}")))
}

/// The error for a connection the pool could not hand out, naming the server (`target`, from
/// [`describe`]) and what to check.
pub(crate) fn pool_error(target: &str, e: PoolError) -> StoreError {
    match e {
        PoolError::Backend(e) => match e.as_db_error() {
            // The server answered: wrong password, unknown database or user, too many clients.
            Some(db) => StoreError::Backend(format!(
                "PostgreSQL at {target} refused the connection: {}: {}; check the user, password and database in the URL",
                db.code().code(),
                db.message()
            )),
            None => StoreError::Backend(format!(
                "could not connect to PostgreSQL at {target}: {}; is the server running and accepting connections there?",
                with_causes(&e)
            )),
        },
        PoolError::Timeout(_) => StoreError::Backend(format!(
            "timed out connecting to PostgreSQL at {target}; is the server running and reachable (and the pool not exhausted)?"
        )),
        other => StoreError::Backend(format!("no PostgreSQL connection to {target}: {other}")),
    }
}
