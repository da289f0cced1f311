//! Every option of every options type, as one table the bindings test themselves against.
//!
//! `api/options.json` lists, for each options type, each key of the options format with its
//! JSON type, default and description, taken from the Rust types (their serde names and
//! JSON Schemas). This test fails when the file is stale; `AGENT_CORE_BLESS=1 cargo test -p
//! agent-examples --test options_table` writes it again. The Python and Node suites read it
//! and check that each binding accepts every key and that their type stubs name every key.

use std::path::PathBuf;

use agent_core::schemars::{JsonSchema, SchemaGenerator, generate::SchemaSettings};
use serde_json::{Map, Value, json};

/// The options types the bindings take, by the name the table gives them.
fn top_level_schemas() -> Vec<(&'static str, Value)> {
    fn schema<T: JsonSchema>() -> Value {
        let generator = SchemaGenerator::new(SchemaSettings::draft2020_12());
        generator.into_root_schema_for::<T>().to_value()
    }
    vec![
        ("AgentConfig", schema::<agent_core::AgentConfig>()),
        ("ScriptStepSpec", schema::<agent_core::ScriptStepSpec>()),
        ("ProviderConfig", schema::<agent_providers::ProviderConfig>()),
        ("SqliteOptions", schema::<agent_store::SqliteOptions>()),
        ("McpServerEntry", schema::<agent_mcp::McpServerEntry>()),
        ("PageToolsConfig", schema::<agent_tools::PageToolsConfig>()),
        ("FsPolicy", schema::<agent_tools::FsPolicy>()),
        ("CdpConfig", schema::<agent_tools::CdpConfig>()),
    ]
}

/// The name of the definition a `$ref` points to.
fn ref_name(schema: &Value) -> Option<String> {
    let target = schema
        .get("$ref")
        .or_else(|| {
            schema
                .get("anyOf")
                .and_then(|a| a.as_array()?.iter().find_map(|s| s.get("$ref")))
        })
        .or_else(|| schema.get("allOf").and_then(|a| a.as_array()?.first()?.get("$ref")))?;
    target.as_str()?.rsplit('/').next().map(str::to_owned)
}

/// The JSON type(s) of a property, as one short string (`integer`, `string|null`, ...).
fn type_of(schema: &Value, defs: &Map<String, Value>) -> String {
    if let Some(name) = ref_name(schema) {
        let def = defs.get(&name).cloned().unwrap_or(Value::Null);
        let base = if def.get("properties").is_some() {
            "object".to_owned()
        } else {
            type_of(&def, defs)
        };
        let nullable = schema
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|s| s.get("type") == Some(&json!("null"))));
        return if nullable { format!("{base}|null") } else { base };
    }
    match schema.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("|"),
        _ if schema.get("enum").is_some() || schema.get("oneOf").is_some() => "string".to_owned(),
        _ => "any".to_owned(),
    }
}

fn describe(properties: &Map<String, Value>, defs: &Map<String, Value>, required: &[Value]) -> Value {
    let mut keys = Map::new();
    for (key, schema) in properties {
        let mut entry = Map::new();
        entry.insert("type".into(), json!(type_of(schema, defs)));
        if let Some(name) = ref_name(schema).filter(|n| defs.get(n).is_some_and(|d| d.get("properties").is_some())) {
            entry.insert("options".into(), json!(name));
        }
        if let Some(values) = ref_name(schema)
            .and_then(|n| defs.get(&n).cloned())
            .and_then(|d| d.get("enum").cloned().or_else(|| enum_of_one_of(&d)))
            .or_else(|| schema.get("enum").cloned())
        {
            entry.insert("enum".into(), values);
        }
        if schema.get("format") == Some(&json!("milliseconds")) {
            entry.insert("unit".into(), json!("ms"));
        }
        if let Some(default) = schema.get("default") {
            entry.insert("default".into(), default.clone());
        }
        if required.contains(&json!(key)) {
            entry.insert("required".into(), json!(true));
        }
        let doc = schema.get("description").and_then(Value::as_str).unwrap_or_default();
        entry.insert(
            "doc".into(),
            json!(doc.split("\n\n").next().unwrap_or_default().replace('\n', " ")),
        );
        keys.insert(key.clone(), Value::Object(entry));
    }
    Value::Object(keys)
}

/// The string values of an enum schemars writes as `oneOf` of constants.
fn enum_of_one_of(def: &Value) -> Option<Value> {
    let values: Vec<Value> = def
        .get("oneOf")?
        .as_array()?
        .iter()
        .filter_map(|s| {
            s.get("const")
                .cloned()
                .or_else(|| s.get("enum")?.as_array()?.first().cloned())
        })
        .collect();
    (!values.is_empty()).then(|| Value::Array(values))
}

fn table() -> Value {
    let mut out = Map::new();
    for (name, root) in top_level_schemas() {
        let defs = root
            .get("$defs")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let required = |s: &Value| s.get("required").and_then(Value::as_array).cloned().unwrap_or_default();
        let props = root
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        out.insert(name.into(), describe(&props, &defs, &required(&root)));
        for (def_name, def) in &defs {
            if let Some(props) = def.get("properties").and_then(Value::as_object) {
                out.entry(def_name.clone())
                    .or_insert_with(|| describe(props, &defs, &required(def)));
            }
        }
    }
    Value::Object(out)
}

#[test]
fn the_options_table_in_api_is_up_to_date() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../api/options.json");
    let mut fresh = serde_json::to_string_pretty(&table()).expect("the table serializes");
    fresh.push('\n');
    if std::env::var_os("AGENT_CORE_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("api/options.json is writable");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "api/options.json is stale: an option changed. Run `AGENT_CORE_BLESS=1 cargo test -p agent-examples \
         --test options_table`, then make both bindings accept the change (their suites check it)."
    );
}

#[test]
fn a_key_ends_in_ms_exactly_when_it_is_a_duration() {
    for (type_name, keys) in table().as_object().expect("an object") {
        for (key, entry) in keys.as_object().expect("an object") {
            let is_duration = entry.get("unit") == Some(&json!("ms"));
            assert_eq!(
                is_duration,
                key.ends_with("_ms"),
                "{type_name}.{key}: a duration's key ends in _ms, and only a duration's"
            );
        }
    }
}
