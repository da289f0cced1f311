//! Session identifiers.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// The id of a persisted conversation: a lowercase UUID v4. Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SessionId(Arc<str>);

impl SessionId {
    /// A fresh random id.
    pub fn new_random() -> Self {
        SessionId(uuid::Uuid::new_v4().to_string().into())
    }

    /// Parses an id, normalising it to lowercase. Fails unless it is a UUID.
    pub fn parse(text: &str) -> Result<Self, InvalidSessionId> {
        let uuid = uuid::Uuid::parse_str(text.trim()).map_err(|_| InvalidSessionId(text.to_owned()))?;
        Ok(SessionId(uuid.hyphenated().to_string().into()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A session id that is not a UUID.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid session id {0:?}: expected a UUID such as 0f8e3c5a-2b1d-4c7e-9a6f-1d2e3f4a5b6c")]
pub struct InvalidSessionId(pub String);
