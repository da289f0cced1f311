//! Small helpers shared by the adapters.

use std::borrow::Cow;
use std::fmt;

use agent_core::ProviderError;
use serde::de::{Deserialize, Deserializer, Visitor};

/// A fresh, unique, non-empty tool-call id for wires that send none (Gemini 2.x, some
/// OpenAI-compatible servers).
pub(crate) fn new_call_id() -> String {
    format!("call_{}", uuid::Uuid::new_v4().simple())
}

/// The error for a response that hit the output-token limit inside a tool call: the call's
/// arguments are incomplete, so it must not run.
pub(crate) fn truncated_call_error(name: &str, id: &str) -> ProviderError {
    ProviderError::Malformed(format!(
        "the model reached its output-token limit in the middle of tool call `{name}` (id {id}); \
         its arguments are incomplete, so it was not run (raise max_output_tokens)"
    ))
}

/// An `f32` setting as JSON without binary noise (`0.2`, not `0.20000000298023224`).
pub(crate) fn json_f32(value: f32) -> serde_json::Value {
    value
        .to_string()
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(serde_json::Value::Null, serde_json::Value::Number)
}

/// A JSON string of a wire response, borrowed from the body when it has no escapes (serde's
/// `Option<Cow<str>>` always copies).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Text<'a>(pub(crate) Cow<'a, str>);

impl Text<'_> {
    pub(crate) fn into_owned(self) -> String {
        self.0.into_owned()
    }
}

impl std::ops::Deref for Text<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}
