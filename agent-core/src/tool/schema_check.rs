//! Checking a value against a JSON Schema: tool arguments, typed answers.

use std::sync::OnceLock;

use serde_json::Value;

use super::plain_schema::PlainSchema;

/// How values are checked against one schema: by the quick check when the schema is plain
/// (see [`PlainSchema`]), and by a full JSON Schema validator otherwise, or to explain a
/// refusal.
pub(crate) struct SchemaCheck(Kind);

enum Kind {
    /// A plain schema: its full validator is compiled only when a value first fails the quick
    /// check (most processes never need it), from the schema kept for that.
    Plain {
        quick: PlainSchema,
        schema: Value,
        full: OnceLock<Result<jsonschema::Validator, String>>,
    },
    /// Any other schema, compiled when the check was made.
    Compiled(jsonschema::Validator),
}

impl SchemaCheck {
    /// A check of `schema`; the error says why it is not a valid JSON Schema (a schema that is
    /// not plain is compiled now, so an invalid one is refused here, not at its first use).
    pub fn new(schema: &Value) -> Result<Self, String> {
        Ok(SchemaCheck(match PlainSchema::parse(schema) {
            Some(quick) => Kind::Plain {
                quick,
                schema: schema.clone(),
                full: OnceLock::new(),
            },
            None => Kind::Compiled(jsonschema::validator_for(schema).map_err(|e| e.to_string())?),
        }))
    }

    /// Whether the quick check vouches for `value`. `false` is no verdict: ask
    /// [`Self::full`].
    pub fn accepts_quickly(&self, value: &Value) -> bool {
        match &self.0 {
            Kind::Plain { quick, .. } => quick.accepts(value),
            Kind::Compiled(_) => false,
        }
    }

    /// The full validator, compiled on first use for a plain schema.
    pub fn full(&self) -> Result<&jsonschema::Validator, &str> {
        match &self.0 {
            Kind::Plain { schema, full, .. } => full
                .get_or_init(|| jsonschema::validator_for(schema).map_err(|e| e.to_string()))
                .as_ref()
                .map_err(String::as_str),
            Kind::Compiled(validator) => Ok(validator),
        }
    }

    /// Whether the schema is plain.
    #[cfg(test)]
    pub fn is_plain(&self) -> bool {
        matches!(self.0, Kind::Plain { .. })
    }

    /// The full validator, if it has been compiled.
    #[cfg(test)]
    pub fn compiled(&self) -> Option<&jsonschema::Validator> {
        match &self.0 {
            Kind::Plain { full, .. } => full.get().and_then(|full| full.as_ref().ok()),
            Kind::Compiled(validator) => Some(validator),
        }
    }
}
