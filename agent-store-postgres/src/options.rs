//! [`PostgresOptions`]: the pool size, the schema and the connect timeout.

use std::time::Duration;

use agent_core::StoreError;

/// Options for [`PostgresStore::connect_with`](crate::PostgresStore::connect_with). As data
/// they take the [options format](agent_core::options)
/// (`{"max_connections": 4, "schema": "agents", "connect_timeout_ms": 5000}`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PostgresOptions {
    /// Connections the pool keeps at most (default 8). A loop turn holds one only for the
    /// length of one statement or transaction.
    pub max_connections: usize,
    /// The schema the store's tables live in, created if missing (default: none, so the
    /// tables go to the first schema of the server's `search_path`, usually `public`). Lowercase
    /// ASCII letters, digits and `_`, starting with a letter or `_`, at most 63 characters.
    /// Several stores can share a database, each in its own schema.
    pub schema: Option<String>,
    /// How long opening one connection may take before it fails (default 10 s).
    #[serde(rename = "connect_timeout_ms", with = "agent_core::options::duration_ms")]
    #[schemars(schema_with = "agent_core::options::millis_schema")]
    pub connect_timeout: Duration,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        PostgresOptions {
            max_connections: 8,
            schema: None,
            connect_timeout: Duration::from_secs(10),
        }
    }
}

impl PostgresOptions {
    /// Refuses options that cannot work, saying which and why.
    pub(crate) fn validate(&self) -> Result<(), StoreError> {
        if self.max_connections == 0 {
            return Err(StoreError::Backend(
                "PostgresOptions.max_connections is 0; the store needs at least one connection".into(),
            ));
        }
        if let Some(schema) = &self.schema {
            // The name goes into the connection's startup options and into DDL, where it cannot
            // be a bound parameter: only a plain identifier is accepted, so nothing needs quoting.
            let mut chars = schema.chars();
            let plain = matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c == '_')
                && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                && schema.len() <= 63;
            if !plain {
                return Err(StoreError::Backend(format!(
                    "PostgresOptions.schema {schema:?} is not a plain schema name: use lowercase ASCII letters, \
                     digits and _, starting with a letter or _, at most 63 characters"
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::PostgresOptions;

    fn with_schema(schema: &str) -> PostgresOptions {
        PostgresOptions {
            schema: Some(schema.into()),
            ..PostgresOptions::default()
        }
    }

    #[test]
    fn only_plain_schema_names_are_accepted() {
        for good in ["agents", "_t1", "a_b_9"] {
            assert!(with_schema(good).validate().is_ok(), "{good}");
        }
        for bad in ["", "9a", "Agents", "a-b", "a b", "a;drop", "\"x\"", &"a".repeat(64)] {
            assert!(with_schema(bad).validate().is_err(), "{bad}");
        }
        let none = PostgresOptions {
            max_connections: 0,
            ..PostgresOptions::default()
        };
        assert!(none.validate().is_err());
    }

    #[test]
    fn options_read_as_data() {
        let options: PostgresOptions =
            serde_json::from_str(r#"{"max_connections": 2, "schema": "x", "connect_timeout_ms": 1500}"#).unwrap();
        assert_eq!(options.max_connections, 2);
        assert_eq!(options.schema.as_deref(), Some("x"));
        assert_eq!(options.connect_timeout.as_millis(), 1500);
        assert!(serde_json::from_str::<PostgresOptions>(r#"{"pool": 1}"#).is_err());
    }
}
