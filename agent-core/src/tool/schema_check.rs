//! Checking a value against a JSON Schema: tool arguments, typed answers.

use std::sync::OnceLock;

use serde_json::Value;

use super::plain_schema::PlainSchema;

/// How values are checked against one schema: by the quick check when the schema is plain
/// (see [`PlainSchema`]), and by a full JSON Schema validator otherwise, or to explain a
/// refusal. The full validator of a plain schema is compiled only when a value first fails
/// the quick check: most processes never need it.
pub(crate) struct SchemaCheck {
    plain: Option<PlainSchema>,
    full: OnceLock<Result<jsonschema::Validator, String>>,
}

impl SchemaCheck {
    /// A check of `schema`; the error says why it is not a valid JSON Schema (a schema that is
    /// not plain is compiled now, so an invalid one is refused here, not at its first use).
    pub fn new(schema: &Value) -> Result<Self, String> {
        let check = SchemaCheck {
            plain: PlainSchema::parse(schema),
            full: OnceLock::new(),
        };
        if check.plain.is_none() {
            let validator = jsonschema::validator_for(schema).map_err(|e| e.to_string())?;
            let _ = check.full.set(Ok(validator));
        }
        Ok(check)
    }

    /// Whether the quick check vouches for `value`. `false` is no verdict: ask
    /// [`Self::full`].
    pub fn accepts_quickly(&self, value: &Value) -> bool {
        self.plain.as_ref().is_some_and(|plain| plain.accepts(value))
    }

    /// The full validator of `schema`, which must be the schema this check was made from;
    /// compiled on first use.
    pub fn full(&self, schema: &Value) -> Result<&jsonschema::Validator, &str> {
        self.full
            .get_or_init(|| jsonschema::validator_for(schema).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(String::as_str)
    }

    /// Whether the schema is plain.
    #[cfg(test)]
    pub fn is_plain(&self) -> bool {
        self.plain.is_some()
    }

    /// The full validator, if it has been compiled.
    #[cfg(test)]
    pub fn compiled(&self) -> Option<&jsonschema::Validator> {
        self.full.get().and_then(|full| full.as_ref().ok())
    }
}
