//! [`ErrorKind`]: the stable name of why a turn ended in error (or was denied).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::provider::ProviderErrorKind;

/// Why a turn ended in error, or was denied: [`Outcome::error_kind`](super::Outcome::error_kind).
///
/// It serializes to the same strings hosts have always read: `provider.<kind>` (for example
/// `provider.timeout`), `tool.fatal`, `store`, `denied`, `clarification`, `approval`, `tool_results`, `hook`,
/// `output.invalid`, `output.schema` and `internal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The model call failed (`provider.<kind>`, the kind of the [`ProviderError`](crate::ProviderError)).
    Provider(ProviderErrorKind),
    /// A tool failed fatally (`tool.fatal`).
    ToolFatal,
    /// The store could not make the conversation durable (`store`).
    Store,
    /// The gate denied a tool call and the denial ended the turn (`denied`).
    Denied,
    /// An answer arrived for a question that is no longer pending (`clarification`).
    Clarification,
    /// An answer arrived for an approval that is no longer pending (`approval`).
    Approval,
    /// Results arrived for external tool calls that are no longer pending, or that do not
    /// fit them (`tool_results`).
    ToolResults,
    /// A host hook failed ([`Hooks`](crate::Hooks)) (`hook`).
    Hook,
    /// A typed turn's answer did not match its schema, also after one correction
    /// (`output.invalid`).
    OutputInvalid,
    /// A typed turn's schema is not a valid JSON Schema (`output.schema`).
    OutputSchema,
    /// The run's task ended without an outcome: it panicked or its runtime shut down
    /// (`internal`).
    Internal,
}

impl ErrorKind {
    /// Every kind that is not a provider's, then every provider kind.
    const OWN: [ErrorKind; 10] = [
        ErrorKind::ToolFatal,
        ErrorKind::Store,
        ErrorKind::Denied,
        ErrorKind::Clarification,
        ErrorKind::Approval,
        ErrorKind::ToolResults,
        ErrorKind::Hook,
        ErrorKind::OutputInvalid,
        ErrorKind::OutputSchema,
        ErrorKind::Internal,
    ];

    /// The stable name hosts see (`provider.timeout`, `tool.fatal`, `store`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Provider(kind) => match kind {
                ProviderErrorKind::RateLimited => "provider.rate_limited",
                ProviderErrorKind::Timeout => "provider.timeout",
                ProviderErrorKind::Transport => "provider.transport",
                ProviderErrorKind::Server => "provider.server",
                ProviderErrorKind::Auth => "provider.auth",
                ProviderErrorKind::BadRequest => "provider.bad_request",
                ProviderErrorKind::ContextOverflow => "provider.context_overflow",
                ProviderErrorKind::Malformed => "provider.malformed",
                ProviderErrorKind::Config => "provider.config",
                ProviderErrorKind::Cancelled => "provider.cancelled",
            },
            ErrorKind::ToolFatal => "tool.fatal",
            ErrorKind::Store => "store",
            ErrorKind::Denied => "denied",
            ErrorKind::Clarification => "clarification",
            ErrorKind::Approval => "approval",
            ErrorKind::ToolResults => "tool_results",
            ErrorKind::Hook => "hook",
            ErrorKind::OutputInvalid => "output.invalid",
            ErrorKind::OutputSchema => "output.schema",
            ErrorKind::Internal => "internal",
        }
    }

    /// Every kind, provider kinds included.
    pub fn all() -> impl Iterator<Item = ErrorKind> {
        Self::OWN
            .into_iter()
            .chain(ProviderErrorKind::ALL.into_iter().map(ErrorKind::Provider))
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not an [`ErrorKind`]'s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown error kind {0:?}")]
pub struct UnknownErrorKind(pub String);

impl FromStr for ErrorKind {
    type Err = UnknownErrorKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ErrorKind::all()
            .find(|kind| kind.as_str() == s)
            .ok_or_else(|| UnknownErrorKind(s.to_owned()))
    }
}

impl Serialize for ErrorKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::ProviderError;

    /// The JSON of each kind is the string outcomes carried before the enum existed.
    #[test]
    fn each_kind_serializes_to_its_old_string() {
        let old = [
            "tool.fatal",
            "store",
            "denied",
            "clarification",
            "approval",
            "tool_results",
            "hook",
            "output.invalid",
            "output.schema",
            "internal",
            "provider.rate_limited",
            "provider.timeout",
            "provider.transport",
            "provider.server",
            "provider.auth",
            "provider.bad_request",
            "provider.context_overflow",
            "provider.malformed",
            "provider.config",
            "provider.cancelled",
        ];
        let kinds: Vec<ErrorKind> = ErrorKind::all().collect();
        assert_eq!(kinds.len(), old.len());
        for (kind, name) in kinds.into_iter().zip(old) {
            assert_eq!(serde_json::to_value(kind).unwrap(), serde_json::json!(name));
            assert_eq!(kind.to_string(), name);
            assert_eq!(
                serde_json::from_value::<ErrorKind>(serde_json::json!(name)).unwrap(),
                kind
            );
        }
        assert!(serde_json::from_str::<ErrorKind>("\"provider.nope\"").is_err());
    }

    /// A provider error's outcome kind is `provider.` and the error's own kind, as it was
    /// built with `format!` before.
    #[test]
    fn provider_kinds_are_prefixed_provider_error_kinds() {
        let errors = [
            ProviderError::RateLimited {
                retry_after: None,
                message: String::new(),
            },
            ProviderError::Timeout(String::new()),
            ProviderError::Transport(String::new()),
            ProviderError::Server {
                status: 500,
                message: String::new(),
            },
            ProviderError::Auth {
                status: 401,
                message: String::new(),
            },
            ProviderError::BadRequest(String::new()),
            ProviderError::ContextOverflow(String::new()),
            ProviderError::Malformed(String::new()),
            ProviderError::Config(String::new()),
            ProviderError::Cancelled,
        ];
        for e in errors {
            let kind = ErrorKind::Provider(e.error_kind());
            assert_eq!(kind.as_str(), format!("provider.{}", e.kind()));
        }
    }
}
