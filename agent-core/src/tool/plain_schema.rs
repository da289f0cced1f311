//! A quick check of tool arguments for the schemas tools usually have.
//!
//! Most tool schemas use a handful of keywords (`type`, `properties`, `required`,
//! `additionalProperties`, `items`, `enum`, `const`, `anyOf`, numeric bounds, lengths, and
//! annotations such as `description` or `format`). For those,
//! [`PlainSchema`] says whether arguments are valid without compiling a full JSON Schema
//! validator: compiling one checks the schema against its meta-schema and runs through much of
//! the validator's code, which then stays resident in every process that registers a tool,
//! and each call's check through it costs more than walking the few keywords here.
//!
//! The check is one-sided on purpose: `accepts` returning `true` means the full validator
//! would accept too; `false` only means "ask the full validator", which also writes the
//! error. So nothing here has to match the validator's wording or its corner cases (a float
//! with no fraction as an integer, `1` and `1.0` as equal), only never accept what it would
//! refuse.

use serde_json::{Map, Value};

/// The one dialect a plain schema may name (the validator reads the subset's keywords the same
/// way in the drafts it defaults to).
const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// JSON types as the `type` keyword names them, as bits.
const NULL: u8 = 1;
const BOOLEAN: u8 = 1 << 1;
const OBJECT: u8 = 1 << 2;
const ARRAY: u8 = 1 << 3;
const NUMBER: u8 = 1 << 4;
const STRING: u8 = 1 << 5;
const INTEGER: u8 = 1 << 6;

/// A schema of the plain subset, ready to check arguments.
#[derive(Debug, Clone)]
pub(super) enum PlainSchema {
    /// `true`: anything.
    Any,
    /// `false`: nothing.
    Never,
    /// A schema object.
    Keywords(Box<Keywords>),
}

#[derive(Debug, Clone, Default)]
pub(super) struct Keywords {
    /// The allowed types as bits; `None` allows every type.
    types: Option<u8>,
    properties: Vec<(String, PlainSchema)>,
    required: Vec<String>,
    /// `additionalProperties`.
    additional: Option<PlainSchema>,
    items: Option<PlainSchema>,
    /// `enum`.
    allowed: Option<Vec<Value>>,
    /// `const`.
    constant: Option<Value>,
    any_of: Vec<PlainSchema>,
    /// `minimum`, `exclusiveMinimum`, `maximum`, `exclusiveMaximum`.
    bounds: Vec<(Bound, Value)>,
    /// `minLength`, `maxLength` (in characters).
    length: (Option<u64>, Option<u64>),
    /// `minItems`, `maxItems`.
    count: (Option<u64>, Option<u64>),
    /// A `format` is present: a string is left to the full validator, which may check it.
    format: bool,
}

#[derive(Debug, Clone, Copy)]
enum Bound {
    Minimum,
    ExclusiveMinimum,
    Maximum,
    ExclusiveMaximum,
}

impl Bound {
    fn named(name: &str) -> Option<Self> {
        Some(match name {
            "minimum" => Bound::Minimum,
            "exclusiveMinimum" => Bound::ExclusiveMinimum,
            "maximum" => Bound::Maximum,
            "exclusiveMaximum" => Bound::ExclusiveMaximum,
            _ => return None,
        })
    }

    /// Whether `value` is within the bound `limit`; `false` when either is not an integer
    /// (floats are compared by the full validator, whose rules for them are its own).
    fn holds(self, value: &Value, limit: &Value) -> bool {
        let (Some(value), Some(limit)) = (as_integer(value), as_integer(limit)) else {
            return false;
        };
        match self {
            Bound::Minimum => value >= limit,
            Bound::ExclusiveMinimum => value > limit,
            Bound::Maximum => value <= limit,
            Bound::ExclusiveMaximum => value < limit,
        }
    }
}

fn as_integer(value: &Value) -> Option<i128> {
    value
        .as_i64()
        .map(i128::from)
        .or_else(|| value.as_u64().map(i128::from))
}

fn within(n: usize, (min, max): (Option<u64>, Option<u64>)) -> bool {
    let n = n as u64;
    min.is_none_or(|min| n >= min) && max.is_none_or(|max| n <= max)
}

impl PlainSchema {
    /// The schema as a plain one, or `None` when it uses anything outside the subset (or is
    /// not a valid schema): such a schema goes to the full validator. Every schema this
    /// returns is valid against the 2020-12 meta-schema.
    pub fn parse(schema: &Value) -> Option<Self> {
        Self::parse_at(schema, true)
    }

    fn parse_at(schema: &Value, root: bool) -> Option<Self> {
        let object = match schema {
            Value::Bool(true) => return Some(PlainSchema::Any),
            Value::Bool(false) => return Some(PlainSchema::Never),
            Value::Object(object) => object,
            _ => return None,
        };
        let mut keywords = Keywords::default();
        for (key, value) in object {
            match key.as_str() {
                "$schema" if root && value.as_str() == Some(DRAFT_2020_12) => {}
                "type" => keywords.types = Some(parse_types(value)?),
                "properties" => keywords.properties = parse_properties(value.as_object()?)?,
                "required" => keywords.required = parse_names(value)?,
                "additionalProperties" => keywords.additional = Some(Self::parse_at(value, false)?),
                "items" => keywords.items = Some(Self::parse_at(value, false)?),
                "enum" => keywords.allowed = Some(value.as_array().filter(|v| !v.is_empty())?.clone()),
                "const" => keywords.constant = Some(value.clone()),
                "anyOf" => {
                    let schemas = value.as_array().filter(|v| !v.is_empty())?;
                    keywords.any_of = schemas
                        .iter()
                        .map(|s| Self::parse_at(s, false))
                        .collect::<Option<_>>()?;
                }
                "minimum" | "exclusiveMinimum" | "maximum" | "exclusiveMaximum" if value.is_number() => {
                    keywords.bounds.push((Bound::named(key)?, value.clone()));
                }
                "minLength" => keywords.length.0 = Some(value.as_u64()?),
                "maxLength" => keywords.length.1 = Some(value.as_u64()?),
                "minItems" => keywords.count.0 = Some(value.as_u64()?),
                "maxItems" => keywords.count.1 = Some(value.as_u64()?),
                "format" if value.is_string() => keywords.format = true,
                "title" | "description" | "$comment" if value.is_string() => {}
                "examples" if value.is_array() => {}
                "default" => {}
                _ => return None,
            }
        }
        Some(PlainSchema::Keywords(Box::new(keywords)))
    }

    /// Whether `value` is valid; `false` when in doubt (see the module's note).
    pub fn accepts(&self, value: &Value) -> bool {
        match self {
            PlainSchema::Any => true,
            PlainSchema::Never => false,
            PlainSchema::Keywords(keywords) => keywords.accepts(value),
        }
    }
}

impl Keywords {
    fn accepts(&self, value: &Value) -> bool {
        if let Some(types) = self.types
            && types & type_bits(value) == 0
        {
            return false;
        }
        if let Some(values) = &self.allowed
            && !values.contains(value)
        {
            return false;
        }
        if let Some(constant) = &self.constant
            && constant != value
        {
            return false;
        }
        if !self.any_of.is_empty() && !self.any_of.iter().any(|s| s.accepts(value)) {
            return false;
        }
        match value {
            Value::Object(object) => self.accepts_object(object),
            Value::Array(items) => {
                within(items.len(), self.count)
                    && self.items.as_ref().is_none_or(|s| items.iter().all(|i| s.accepts(i)))
            }
            Value::String(text) => !self.format && within(text.chars().count(), self.length),
            Value::Number(_) => self.bounds.iter().all(|(bound, limit)| bound.holds(value, limit)),
            Value::Null | Value::Bool(_) => true,
        }
    }

    fn accepts_object(&self, object: &Map<String, Value>) -> bool {
        if !self.required.iter().all(|name| object.contains_key(name)) {
            return false;
        }
        if !self
            .properties
            .iter()
            .all(|(name, schema)| object.get(name).is_none_or(|v| schema.accepts(v)))
        {
            return false;
        }
        let Some(additional) = &self.additional else {
            return true;
        };
        object
            .iter()
            .filter(|(name, _)| {
                self.properties
                    .binary_search_by(|(known, _)| known.as_str().cmp(name.as_str()))
                    .is_err()
            })
            .all(|(_, v)| additional.accepts(v))
    }
}

/// The bits of the types `value` has. An integer is also a number; a float is only a number
/// here, even with no fraction (the full validator decides those).
fn type_bits(value: &Value) -> u8 {
    match value {
        Value::Null => NULL,
        Value::Bool(_) => BOOLEAN,
        Value::Object(_) => OBJECT,
        Value::Array(_) => ARRAY,
        Value::String(_) => STRING,
        Value::Number(n) if n.is_i64() || n.is_u64() => NUMBER | INTEGER,
        Value::Number(_) => NUMBER,
    }
}

fn type_named(name: &str) -> Option<u8> {
    Some(match name {
        "null" => NULL,
        "boolean" => BOOLEAN,
        "object" => OBJECT,
        "array" => ARRAY,
        "number" => NUMBER,
        "string" => STRING,
        "integer" => INTEGER,
        _ => return None,
    })
}

/// `type`: one name, or a non-empty list of distinct names.
fn parse_types(value: &Value) -> Option<u8> {
    match value {
        Value::String(name) => type_named(name),
        Value::Array(names) if !names.is_empty() => names.iter().try_fold(0u8, |bits, name| {
            let bit = type_named(name.as_str()?)?;
            (bits & bit == 0).then_some(bits | bit)
        }),
        _ => None,
    }
}

/// `properties`, sorted by name (looked up by binary search for `additionalProperties`).
fn parse_properties(object: &Map<String, Value>) -> Option<Vec<(String, PlainSchema)>> {
    let mut properties = object
        .iter()
        .map(|(name, schema)| Some((name.clone(), PlainSchema::parse_at(schema, false)?)))
        .collect::<Option<Vec<_>>>()?;
    properties.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Some(properties)
}

/// `required`: a list of distinct names.
fn parse_names(value: &Value) -> Option<Vec<String>> {
    let names = value
        .as_array()?
        .iter()
        .map(|n| n.as_str().map(str::to_owned))
        .collect::<Option<Vec<_>>>()?;
    // A set, not pairwise: a schema from an MCP server may list any number of names.
    let mut seen = std::collections::HashSet::with_capacity(names.len());
    names.iter().all(|n| seen.insert(n.as_str())).then_some(names)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use proptest::prelude::*;
    use serde_json::json;

    use super::PlainSchema;

    fn plain(schema: serde_json::Value) -> PlainSchema {
        PlainSchema::parse(&schema).unwrap()
    }

    #[test]
    fn the_schemas_tools_usually_have_are_plain() {
        for schema in [
            json!({"type": "object", "properties": {}}),
            json!({"type": "object", "properties": {"path": {"type": "string", "description": "Where."}},
                   "required": ["path"], "additionalProperties": false}),
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                   "properties": {"n": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null}}}),
            json!({"type": "object", "properties": {"mode": {"enum": ["a", "b"], "type": "string"},
                   "tags": {"type": "array", "items": {"type": "string"}},
                   "extra": {"type": "object", "additionalProperties": {"type": "number"}}}}),
            json!({"type": "object", "properties": {"n": {"type": ["integer", "null"], "format": "uint32", "minimum": 0},
                   "s": {"type": "string", "format": "uri", "minLength": 1, "maxLength": 9},
                   "l": {"type": "array", "minItems": 1, "maxItems": 3}}}),
            json!(true),
        ] {
            assert!(PlainSchema::parse(&schema).is_some(), "{schema}");
        }
    }

    #[test]
    fn anything_else_goes_to_the_full_validator() {
        for schema in [
            json!({"$ref": "#/$defs/a", "$defs": {"a": {"type": "object"}}}),
            json!({"type": "array", "items": [{"type": "string"}]}),
            json!({"type": "object", "patternProperties": {"^x": {}}}),
            json!({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}),
            json!({"type": "object", "x-unknown": 1}),
            json!({"type": "string", "pattern": "^a"}),
            json!({"type": "array", "uniqueItems": true}),
            json!({"minimum": "0"}),
            json!({"minLength": -1}),
            json!({"format": 1}),
            // Not valid schemas: the full validator reports them at registration.
            json!({"type": "strnig"}),
            json!({"type": ["string", "string"]}),
            json!({"required": ["a", "a"]}),
            json!({"required": "a"}),
            json!({"enum": []}),
            json!({"description": 3}),
            json!(3),
        ] {
            assert!(PlainSchema::parse(&schema).is_none(), "{schema}");
        }
    }

    #[test]
    fn it_checks_what_its_keywords_say() {
        let schema = plain(json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "count": {"type": ["integer", "null"]},
                "mode": {"enum": ["fast", "slow"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "pick": {"anyOf": [{"type": "boolean"}, {"const": 7}]},
                "small": {"type": "integer", "minimum": -2, "exclusiveMaximum": 3},
                "name": {"type": "string", "minLength": 2, "maxLength": 3},
                "when": {"type": "string", "format": "date"},
                "few": {"type": "array", "maxItems": 1}
            },
            "required": ["path"],
            "additionalProperties": false
        }));
        assert!(schema.accepts(&json!({"path": "a"})));
        assert!(schema.accepts(&json!({"path": "a", "count": 3, "mode": "fast", "tags": ["x"], "pick": 7})));
        assert!(schema.accepts(&json!({"path": "a", "count": null, "pick": false})));
        assert!(schema.accepts(&json!({"path": "a", "small": -2, "name": "éé", "few": [1]})));
        for refused in [
            json!({}),
            json!({"path": 1}),
            json!({"path": "a", "count": 1.5}),
            json!({"path": "a", "mode": "medium"}),
            json!({"path": "a", "tags": ["x", 2]}),
            json!({"path": "a", "pick": 8}),
            json!({"path": "a", "other": 1}),
            json!({"path": "a", "small": 3}),
            json!({"path": "a", "small": -3}),
            json!({"path": "a", "name": "a"}),
            json!({"path": "a", "name": "abcd"}),
            json!({"path": "a", "few": [1, 2]}),
            // Left to the full validator: a string under a format, a float against a bound.
            json!({"path": "a", "when": "2026-12-04"}),
            json!({"path": "a", "small": 1.0}),
            json!(["path"]),
            json!(null),
        ] {
            assert!(!schema.accepts(&refused), "{refused}");
        }
    }

    #[test]
    fn a_schema_of_very_many_names_is_read_in_one_pass() {
        // A hostile server's schema: tens of thousands of properties and required names.
        let names: Vec<String> = (0..20_000).map(|i| format!("p{i}")).collect();
        let properties: serde_json::Map<_, _> = names.iter().map(|n| (n.clone(), json!({"type": "integer"}))).collect();
        let schema = json!({"type": "object", "properties": properties, "required": names,
                            "additionalProperties": false});
        let schema = plain(schema);
        let args: serde_json::Map<_, _> = names.iter().map(|n| (n.clone(), json!(1))).collect();
        assert!(schema.accepts(&serde_json::Value::Object(args.clone())));
        let mut extra = args;
        extra.insert("q".into(), json!(1));
        assert!(!schema.accepts(&serde_json::Value::Object(extra)));
        let mut repeated = names.clone();
        repeated.push("p19999".into());
        assert!(PlainSchema::parse(&json!({"required": repeated})).is_none());
    }

    /// A random JSON value of a few levels.
    fn any_json() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(json!(null)),
            any::<bool>().prop_map(|b| json!(b)),
            (-3i64..3).prop_map(|n| json!(n)),
            prop_oneof![Just(1.0f64), Just(0.5), Just(-2.0)].prop_map(|f| json!(f)),
            prop_oneof![Just("a"), Just("bé"), Just(""), Just("2026-12-04"), Just("x@y.z")].prop_map(|s| json!(s)),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
                prop::collection::btree_map(prop_oneof![Just("a"), Just("b"), Just("n")], inner, 0..4)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
            ]
        })
    }

    /// A random plain schema of a few levels.
    fn any_plain_schema() -> impl Strategy<Value = serde_json::Value> {
        let types = prop::sample::subsequence(
            vec!["null", "boolean", "object", "array", "number", "string", "integer"],
            1..3,
        );
        let leaf = prop_oneof![
            Just(json!(true)),
            Just(json!(false)),
            types.prop_map(|t| json!({"type": t})),
            any_json().prop_map(|v| json!({"const": v})),
            prop::collection::vec(any_json(), 1..3).prop_map(|v| json!({"enum": v})),
            (
                prop::sample::select(vec!["minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"]),
                prop_oneof![(-3i64..3).prop_map(|n| json!(n)), Just(json!(0.5)), Just(json!(1.0))],
            )
                .prop_map(|(bound, limit)| json!({ bound: limit })),
            (
                prop::sample::select(vec!["minLength", "maxLength", "minItems", "maxItems"]),
                0u64..3,
            )
                .prop_map(|(keyword, n)| json!({ keyword: n })),
            prop::sample::select(vec!["date", "email", "uint32"]).prop_map(|f| json!({"format": f})),
        ];
        leaf.prop_recursive(3, 12, 3, |inner| {
            prop_oneof![
                (
                    prop::collection::btree_map(prop_oneof![Just("a"), Just("b")], inner.clone(), 0..3),
                    prop::sample::subsequence(vec!["a", "n"], 0..2),
                    prop::option::of(inner.clone()),
                )
                    .prop_map(|(properties, required, additional)| {
                        let mut schema = json!({"type": "object", "properties": properties, "required": required});
                        if let Some(additional) = additional {
                            schema["additionalProperties"] = additional;
                        }
                        schema
                    }),
                inner.clone().prop_map(|items| json!({"type": "array", "items": items})),
                prop::collection::vec(inner, 1..3).prop_map(|schemas| json!({"anyOf": schemas})),
            ]
        })
    }

    proptest! {
        /// The one-sided promise: whatever the quick check accepts, the full validator accepts
        /// too; and without floats (where JSON and serde equality agree and every integer is an
        /// integer) or formats (left to the full validator) the two agree both ways.
        #[test]
        fn never_accepts_what_the_full_validator_refuses(schema in any_plain_schema(), value in any_json()) {
            let quick = PlainSchema::parse(&schema).unwrap();
            let full = jsonschema::validator_for(&schema).unwrap();
            let (q, f) = (quick.accepts(&value), full.is_valid(&value));
            prop_assert!(!q || f, "accepted by the quick check only: {} against {}", value, schema);
            let floats = |v: &serde_json::Value| v.to_string().contains(".0") || v.to_string().contains(".5");
            if !floats(&value) && !floats(&schema) && schema.to_string().find("\"format\"").is_none() {
                prop_assert_eq!(q, f, "{} against {}", value, schema);
            }
        }
    }
}
