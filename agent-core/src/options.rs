//! The one format every options type of the workspace reads and writes as data.
//!
//! [`AgentConfig`](crate::AgentConfig), the provider, HTTP, store, tool, browser and MCP server
//! options, and scripted-provider steps all (de)serialize with serde in the same shape:
//!
//! - keys are `snake_case` (the Node binding converts them to and from `camelCase`);
//! - durations are whole or fractional **milliseconds**, in keys ending `_ms`;
//! - sizes are bytes, in keys ending `_bytes`; counts of characters end `_chars`;
//! - lists of name/value pairs (headers, environment variables) are JSON objects;
//! - a missing key keeps its documented default, and an unknown key is refused with an error
//!   that lists the known ones.
//!
//! `docs/options.md` lists every option with its default. The helpers below are the serde
//! adapters the option types use; they are public so that host crates can give their own options
//! the same shape.

use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::ser::{SerializeMap, Serializer};

/// Serde adapter for a [`Duration`] written as milliseconds (`#[serde(with = "duration_ms")]`).
///
/// Serializes milliseconds (an integer when whole); deserializes any finite, non-negative
/// number, so fractions of a millisecond from JavaScript or Python are kept.
pub mod duration_ms {
    use super::*;

    /// Writes the duration as milliseconds: an integer when it is whole, a float otherwise (so
    /// that what is read back is what was written).
    pub fn serialize<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        if duration.subsec_nanos().is_multiple_of(1_000_000) {
            serializer.serialize_u64(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
        } else {
            serializer.serialize_f64(duration.as_secs_f64() * 1000.0)
        }
    }

    /// Reads milliseconds (an integer or a finite, non-negative float).
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        deserializer.deserialize_any(MillisVisitor)
    }
}

/// Serde adapter for an `Option<Duration>` written as milliseconds or `null`.
pub mod option_duration_ms {
    use super::*;

    /// Writes `null` or whole milliseconds.
    pub fn serialize<S: Serializer>(duration: &Option<Duration>, serializer: S) -> Result<S::Ok, S::Error> {
        match duration {
            Some(d) => duration_ms::serialize(d, serializer),
            None => serializer.serialize_none(),
        }
    }

    /// Reads `null` or milliseconds.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Duration>, D::Error> {
        deserializer.deserialize_option(OptionMillisVisitor)
    }
}

/// Serde adapter for name/value pairs (`Vec<(String, String)>`) written as a JSON object
/// (`{"Authorization": "Bearer ..."}`); a list of `[name, value]` pairs is read too. The pairs
/// keep the order the input gives them (an object that went through a `serde_json::Value`, as
/// the bindings' do, arrives sorted by name; give a list of pairs where order matters).
pub mod string_pairs {
    use super::*;

    /// Writes the pairs as an object.
    pub fn serialize<S: Serializer>(pairs: &[(String, String)], serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(pairs.len()))?;
        for (name, value) in pairs {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }

    /// Reads an object of strings, or a list of `[name, value]` pairs.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<(String, String)>, D::Error> {
        deserializer.deserialize_any(PairsVisitor)
    }
}

/// The JSON Schema of a millisecond duration, for `#[schemars(schema_with = ...)]` (format
/// `milliseconds`).
pub fn millis_schema(_generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "number", "minimum": 0, "format": "milliseconds"})
}

/// The JSON Schema of an optional millisecond duration.
pub fn option_millis_schema(_generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": ["number", "null"], "minimum": 0, "format": "milliseconds"})
}

/// The JSON Schema of name/value pairs written as an object of strings.
pub fn string_pairs_schema(_generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "object", "additionalProperties": {"type": "string"}})
}

struct MillisVisitor;

fn millis_from_f64<E: de::Error>(ms: f64) -> Result<Duration, E> {
    if !ms.is_finite() || ms < 0.0 {
        return Err(E::custom(format!(
            "expected a non-negative number of milliseconds, got {ms}"
        )));
    }
    Duration::try_from_secs_f64(ms / 1000.0).map_err(|_| E::custom(format!("{ms} milliseconds is too long")))
}

impl<'de> Visitor<'de> for MillisVisitor {
    type Value = Duration;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a non-negative number of milliseconds")
    }

    fn visit_u64<E: de::Error>(self, ms: u64) -> Result<Duration, E> {
        Ok(Duration::from_millis(ms))
    }

    fn visit_i64<E: de::Error>(self, ms: i64) -> Result<Duration, E> {
        u64::try_from(ms)
            .map(Duration::from_millis)
            .map_err(|_| E::custom(format!("expected a non-negative number of milliseconds, got {ms}")))
    }

    fn visit_f64<E: de::Error>(self, ms: f64) -> Result<Duration, E> {
        millis_from_f64(ms)
    }
}

struct OptionMillisVisitor;

impl<'de> Visitor<'de> for OptionMillisVisitor {
    type Value = Option<Duration>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a non-negative number of milliseconds, or null")
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        duration_ms::deserialize(deserializer).map(Some)
    }
}

struct PairsVisitor;

impl<'de> Visitor<'de> for PairsVisitor {
    type Value = Vec<(String, String)>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object of strings (or a list of [name, value] pairs)")
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut pairs = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
        while let Some((name, value)) = map.next_entry::<String, String>()? {
            pairs.push((name, value));
        }
        Ok(pairs)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut pairs = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(pair) = seq.next_element::<(String, String)>()? {
            pairs.push(pair);
        }
        Ok(pairs)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde::{Deserialize, Serialize};

    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Sample {
        #[serde(with = "duration_ms")]
        wait_ms: Duration,
        #[serde(with = "option_duration_ms", default)]
        ttl_ms: Option<Duration>,
        #[serde(with = "string_pairs", default)]
        headers: Vec<(String, String)>,
    }

    #[test]
    fn durations_are_milliseconds_and_pairs_an_object() {
        let s: Sample = serde_json::from_str(r#"{"wait_ms": 1500, "headers": {"B": "2", "A": "1"}}"#).unwrap();
        assert_eq!(s.wait_ms, Duration::from_millis(1500));
        assert_eq!(s.ttl_ms, None);
        assert_eq!(s.headers, vec![("B".into(), "2".into()), ("A".into(), "1".into())]);
        let back = serde_json::to_value(&s).unwrap();
        assert_eq!(back["wait_ms"], 1500);
        assert_eq!(back["ttl_ms"], serde_json::Value::Null);

        let fractional: Sample = serde_json::from_value(serde_json::json!({"wait_ms": 0.5, "ttl_ms": 2})).unwrap();
        assert_eq!(fractional.wait_ms, Duration::from_micros(500));
        assert_eq!(
            serde_json::to_value(&fractional).unwrap()["wait_ms"],
            0.5,
            "read back as written"
        );
        assert_eq!(fractional.ttl_ms, Some(Duration::from_millis(2)));

        let pairs: Sample = serde_json::from_value(serde_json::json!({"wait_ms": 1, "headers": [["X", "y"]]})).unwrap();
        assert_eq!(pairs.headers, vec![("X".into(), "y".into())]);
    }

    #[test]
    fn negative_or_non_numeric_durations_are_refused_with_the_unit() {
        for bad in [serde_json::json!(-1), serde_json::json!(-0.5), serde_json::json!("10s")] {
            let err = serde_json::from_value::<Sample>(serde_json::json!({"wait_ms": bad})).unwrap_err();
            assert!(err.to_string().contains("milliseconds"), "{err}");
        }
    }
}
