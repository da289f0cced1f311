//! JSON Schema to Gemini's OpenAPI schema subset, within a budget.
//!
//! `$ref`s are inlined and `anyOf` options translated one by one, so a schema whose
//! definitions refer to each other grows exponentially once expanded
//! (`$defs: {a: {anyOf: [{$ref: a}, ×20]}}` from a hostile tool server is 20^16 nodes). The
//! translation of one schema therefore stops at [`MAX_SCHEMA_NODES`] nodes or
//! [`MAX_SCHEMA_BYTES`] bytes of copied text: past either, every remaining subschema becomes an
//! empty object whose description says it was cut. The request still goes out (failing it would
//! stop every turn of the agent for one tool's schema); only that tool's arguments lose detail.

use serde_json::{Map, Value, json};

/// The most schema nodes the translation of one tool's schema produces (a large real schema
/// has a few hundred).
pub const MAX_SCHEMA_NODES: usize = 10_000;
/// The most bytes of text (names, descriptions, enum values, `$ref` paths) the translation of
/// one tool's schema copies or reads: real schemas have a few KiB, large enums some 100 KiB.
pub const MAX_SCHEMA_BYTES: usize = 4 * 1024 * 1024;
/// Subschemas nested deeper than this become an empty object (protects the stack as well).
const MAX_DEPTH: usize = 16;

/// Translates a JSON Schema to Gemini's schema subset: upper-case types, `["T", "null"]` as
/// `nullable`, `const` as a one-value `enum`, local `$ref`s inlined, and keywords Gemini
/// rejects (`$schema`, `additionalProperties`, `$defs`, `title`, `default`, `examples`, ...)
/// dropped. `root` is the document `$ref`s point into and `depth` the nesting of `node` (0 for
/// a whole tool schema). Bounded by [`MAX_SCHEMA_NODES`] and [`MAX_SCHEMA_BYTES`].
pub fn schema(node: &Value, root: &Value, depth: usize) -> Value {
    let mut budget = Budget {
        nodes: MAX_SCHEMA_NODES,
        bytes: MAX_SCHEMA_BYTES,
    };
    translate(node, root, depth, &mut budget)
}

/// What is left of one translation's budget; when either runs out both are zeroed.
struct Budget {
    nodes: usize,
    bytes: usize,
}

impl Budget {
    fn exhausted(&self) -> bool {
        self.nodes == 0
    }

    /// Spends one node; false when none is left.
    fn node(&mut self) -> bool {
        if self.nodes == 0 {
            return false;
        }
        self.nodes -= 1;
        true
    }

    /// Spends `n` bytes; false (and the budget is gone) when fewer are left.
    fn bytes(&mut self, n: usize) -> bool {
        if self.nodes == 0 || n > self.bytes {
            self.nodes = 0;
            self.bytes = 0;
            return false;
        }
        self.bytes -= n;
        true
    }

    /// Spends the size of `value` (what copying it costs); false when it does not fit.
    fn value(&mut self, value: &Value) -> bool {
        let size = weight(value, self.bytes.saturating_add(1));
        self.bytes(size)
    }
}

/// The subschema that stands for whatever the budget did not cover.
fn cut_node() -> Value {
    json!({
        "type": "OBJECT",
        "properties": {},
        "description": format!(
            "(schema cut: more than {MAX_SCHEMA_NODES} nodes or {MAX_SCHEMA_BYTES} bytes once $ref and anyOf are expanded)"
        ),
    })
}

fn translate(node: &Value, root: &Value, depth: usize, budget: &mut Budget) -> Value {
    // Every node produced is paid for, the small ones below included.
    if !budget.node() {
        return cut_node();
    }
    let Value::Object(obj) = node else {
        return json!({"type": "STRING"});
    };
    if depth > MAX_DEPTH {
        return json!({"type": "OBJECT"});
    }
    if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
        // Resolving reads the whole path: a long one is paid for.
        if !budget.bytes(reference.len()) {
            return cut_node();
        }
        if let Some(target) = resolve_ref(root, reference) {
            return translate(target, root, depth + 1, budget);
        }
    }
    let mut out = Map::new();
    for (key, value) in obj {
        if budget.exhausted() {
            // The keywords done so far stay; the type is inferred from them below.
            break;
        }
        match key.as_str() {
            "type" => match value {
                Value::String(t) if budget.bytes(t.len()) => {
                    out.insert("type".into(), t.to_uppercase().into());
                }
                Value::Array(types) => {
                    let non_null: Vec<&str> = types
                        .iter()
                        .filter_map(Value::as_str)
                        .filter(|t| *t != "null")
                        .collect();
                    if let Some(t) = non_null.first()
                        && budget.bytes(t.len())
                    {
                        out.insert("type".into(), t.to_uppercase().into());
                    }
                    if non_null.len() < types.len() {
                        out.insert("nullable".into(), true.into());
                    }
                }
                _ => {}
            },
            "properties" => {
                if let Value::Object(props) = value {
                    let mut translated = Map::new();
                    for (k, v) in props {
                        if !budget.bytes(k.len()) {
                            break;
                        }
                        translated.insert(k.clone(), translate(v, root, depth + 1, budget));
                    }
                    out.insert("properties".into(), Value::Object(translated));
                }
            }
            "items" => {
                out.insert("items".into(), translate(value, root, depth + 1, budget));
            }
            "anyOf" | "oneOf" => {
                if let Value::Array(options) = value {
                    let null = json!({"type": "null"});
                    let rest: Vec<&Value> = options.iter().filter(|o| **o != null).collect();
                    if rest.len() == 1 {
                        // Option<T> from schemars: T, nullable.
                        if let Value::Object(inner) = translate(rest[0], root, depth + 1, budget) {
                            out.extend(inner);
                        }
                        out.insert("nullable".into(), true.into());
                    } else {
                        let any: Vec<Value> = rest.iter().map(|o| translate(o, root, depth + 1, budget)).collect();
                        out.insert("anyOf".into(), Value::Array(any));
                    }
                }
            }
            "const" if budget.value(value) => {
                out.insert("enum".into(), json!([value]));
            }
            "enum" => {
                // Gemini enums are strings; a null member is expressed by `nullable`.
                if let Value::Array(values) = value
                    && budget.value(value)
                {
                    let strings: Vec<Value> = values.iter().filter(|v| !v.is_null()).cloned().collect();
                    if strings.len() < values.len() {
                        out.insert("nullable".into(), true.into());
                    }
                    out.insert("enum".into(), Value::Array(strings));
                }
            }
            "required" | "description" | "format" | "nullable" | "minimum" | "maximum" | "minItems" | "maxItems"
            | "minLength" | "maxLength" | "pattern" | "propertyOrdering"
                if budget.value(value) =>
            {
                out.insert(key.clone(), value.clone());
            }
            _ => {} // $schema, $defs, definitions, additionalProperties, title, default, examples, ...
        }
    }
    if !out.contains_key("type") && !out.contains_key("anyOf") {
        let inferred = if out.contains_key("properties") {
            "OBJECT"
        } else if out.contains_key("items") {
            "ARRAY"
        } else {
            "STRING"
        };
        out.insert("type".into(), inferred.into());
    }
    if out.get("type").and_then(Value::as_str) == Some("OBJECT") && !out.contains_key("properties") {
        out.insert("properties".into(), json!({}));
    }
    Value::Object(out)
}

/// About the bytes `value` takes as JSON text, counted up to `cap` (the walk stops there).
fn weight(value: &Value, cap: usize) -> usize {
    let mut total = 0usize;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        total = total.saturating_add(match v {
            Value::String(s) => s.len() + 2,
            Value::Array(items) => {
                stack.extend(items);
                2
            }
            Value::Object(map) => {
                for (k, item) in map {
                    total = total.saturating_add(k.len() + 3);
                    stack.push(item);
                }
                2
            }
            _ => 8,
        });
        if total >= cap {
            break;
        }
    }
    total
}

fn resolve_ref<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let path = reference.strip_prefix("#/")?;
    path.split('/')
        .try_fold(root, |node, key| node.get(key.replace("~1", "/").replace("~0", "~")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The number of JSON objects in `value`.
    fn objects(value: &Value) -> usize {
        match value {
            Value::Object(map) => 1 + map.values().map(objects).sum::<usize>(),
            Value::Array(items) => items.iter().map(objects).sum(),
            _ => 0,
        }
    }

    #[test]
    fn self_referring_anyof_is_cut_at_the_budget() {
        // 20^16 nodes once expanded: without a budget this never ends.
        let refs: Vec<Value> = (0..20).map(|_| json!({"$ref": "#/$defs/a"})).collect();
        let root = json!({
            "type": "object",
            "properties": {"x": {"$ref": "#/$defs/a"}, "y": {"type": "string"}},
            "$defs": {"a": {"anyOf": refs}},
        });
        let out = schema(&root, &root, 0);
        let count = objects(&out);
        // The budget, plus the cut nodes of the options still open when it ran out (an
        // object node is two JSON objects: itself and its `properties`).
        assert!(count <= 2 * (MAX_SCHEMA_NODES + 20 * (MAX_DEPTH + 2)), "{count}");
        assert!(count >= MAX_SCHEMA_NODES / 2, "{count}");
        assert!(out.to_string().contains("schema cut"));
        assert_eq!(out["type"], "OBJECT");
        assert!(out["properties"].get("x").is_some());
    }

    #[test]
    fn a_long_text_referred_to_many_times_is_copied_within_the_byte_budget() {
        let refs: Vec<Value> = (0..8).map(|_| json!({"$ref": "#/$defs/a"})).collect();
        let root = json!({
            "$defs": {"a": {"description": "d".repeat(1 << 20), "anyOf": refs}},
            "$ref": "#/$defs/a",
        });
        let out = schema(&root, &root, 0);
        let size = out.to_string().len();
        assert!(size <= MAX_SCHEMA_BYTES + 1024 * 1024, "{size}");
        assert!(out.to_string().contains("schema cut"));
    }

    #[test]
    fn a_small_schema_is_not_cut() {
        let root = json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/n"}, "b": {"anyOf": [{"$ref": "#/$defs/n"}, {"type": "null"}]}},
            "$defs": {"n": {"type": "integer", "enum": [1, 2], "description": "n"}},
        });
        let out = schema(&root, &root, 0);
        assert!(!out.to_string().contains("schema cut"), "{out}");
        assert_eq!(out["properties"]["b"]["nullable"], true);
    }

    /// A typed answer's schema as `schemars` writes it (definitions not inlined: `$defs` and
    /// `$ref`, `Option` as `anyOf` with null, an enum as `oneOf` of `const`s) becomes
    /// Gemini's subset for `responseSchema`, with none of the keywords Gemini refuses.
    #[test]
    fn an_output_schema_from_schemars_becomes_a_response_schema() {
        let output = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Report",
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city."},
                "sky": {"$ref": "#/$defs/Sky"},
                "wind": {"anyOf": [{"$ref": "#/$defs/Wind"}, {"type": "null"}]},
                "tags": {"type": "array", "items": {"type": "string"}, "default": []}
            },
            "required": ["city", "sky"],
            "additionalProperties": false,
            "$defs": {
                "Sky": {"oneOf": [{"const": "clear"}, {"const": "cloudy"}]},
                "Wind": {"type": "object", "properties": {"kmh": {"type": "integer", "minimum": 0}}, "required": ["kmh"]}
            }
        });
        let translated = schema(&output, &output, 0);
        assert_eq!(
            translated,
            json!({
                "type": "OBJECT",
                "properties": {
                    "city": {"type": "STRING", "description": "The city."},
                    "sky": {"anyOf": [{"type": "STRING", "enum": ["clear"]}, {"type": "STRING", "enum": ["cloudy"]}]},
                    "wind": {
                        "type": "OBJECT",
                        "properties": {"kmh": {"type": "INTEGER", "minimum": 0}},
                        "required": ["kmh"],
                        "nullable": true
                    },
                    "tags": {"type": "ARRAY", "items": {"type": "STRING"}}
                },
                "required": ["city", "sky"]
            })
        );
        let text = translated.to_string();
        for refused in [
            "$schema",
            "$defs",
            "$ref",
            "additionalProperties",
            "title",
            "default",
            "const",
            "oneOf",
        ] {
            assert!(!text.contains(refused), "{refused} in {text}");
        }
    }
}
