//! Every option of every options type, as one table the bindings test themselves against.
//!
//! `api/options.json` lists, for each options type, each key of the options format with its
//! JSON type, default and description, taken from the Rust types (their serde names and
//! JSON Schemas). This test fails when the file is stale; `AGENT_CORE_BLESS=1 cargo test -p
//! agent-examples --test options_table` writes it again. The Python and Node suites read it
//! and check that each binding accepts every key and that their type stubs name every key.

#![allow(clippy::expect_used, clippy::unwrap_used)]

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
        ("PostgresOptions", schema::<agent_store_postgres::PostgresOptions>()),
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
        let is_options = |n: &String| defs.get(n).is_some_and(|d| d.get("properties").is_some());
        if let Some(name) = ref_name(schema).filter(is_options) {
            entry.insert("options".into(), json!(name));
        }
        // A list of options objects names their type too.
        if let Some(name) = schema.get("items").and_then(ref_name).filter(is_options) {
            entry.insert("items".into(), json!(name));
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
    (!values.is_empty()).then_some(Value::Array(values))
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

/// `snake_case` to the Node binding's `camelCase`.
fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Where each top-level options type is taken, in each language.
const ENTRY_POINTS: &[(&str, &str, &str, &str)] = &[
    (
        "AgentConfig",
        "`AgentBuilder::config`",
        "`Agent(config=AgentConfig(...))`",
        "`new Agent({ config })`",
    ),
    (
        "ScriptStepSpec",
        "`ScriptStep::from_json`",
        "`ScriptedProvider([...])` steps",
        "`new ScriptedProvider([...])` steps",
    ),
    (
        "ProviderConfig",
        "`ProviderConfig::build`",
        "`OpenAICompatible(...)`, `Anthropic(...)`, `Gemini(...)`",
        "`new OpenAICompatible({...})`, ...",
    ),
    (
        "SqliteOptions",
        "`SqliteStore::open_with`",
        "`SqliteStore(path, ...)`",
        "`SqliteStore.open(path, {...})`",
    ),
    (
        "PostgresOptions",
        "`PostgresStore::connect_with`",
        "`PostgresStore(url, ...)`",
        "`PostgresStore.connect(url, {...})`",
    ),
    (
        "McpServerEntry",
        "`McpServerConfig::from_json`",
        "`McpClient.connect(alias, ...)`",
        "`McpClient.connect({...})`",
    ),
    (
        "PageToolsConfig",
        "`page_tools_with`",
        "`page_tools(host, ...)`",
        "`pageTools(host, {...})`",
    ),
    (
        "FsPolicy",
        "`fs_tools(FsPolicy)`",
        "`fs_tools(root, ...)`",
        "`fsTools({...})`",
    ),
    (
        "CdpConfig",
        "`CdpHost::launch`",
        "`CdpHost.launch(...)`",
        "`CdpHost.launch({...})`",
    ),
];

fn markdown(table: &Value) -> String {
    let mut out = String::from(
        "# Options\n\n\
         <!-- Written by `AGENT_CORE_BLESS=1 cargo test -p agent-examples --test options_table` from the Rust \
         types; do not edit by hand. -->\n\n\
         Every options type has one format, defined once in Rust (serde) and taken as it is by the bindings:\n\n\
         - keys are `snake_case` in Rust and Python, `camelCase` in Node (converted mechanically);\n\
         - durations are milliseconds, in keys ending `_ms` (`Ms` in Node); sizes are bytes (`_bytes`);\n\
         - name/value lists (headers, environment variables) are objects of strings;\n\
         - a missing key (or `None` / `undefined`) keeps the default; an unknown key is an error naming it.\n\n\
         `api/options.json` holds the same table as data; the Python and Node suites check against it that \
         each binding names and accepts every key.\n\n\
         | options | Rust | Python | Node |\n|---|---|---|---|\n",
    );
    for (name, rust, python, node) in ENTRY_POINTS {
        out.push_str(&format!(
            "| [{name}](#{}) | {rust} | {python} | {node} |\n",
            name.to_lowercase()
        ));
    }
    for (name, keys) in table.as_object().into_iter().flatten() {
        out.push_str(&format!(
            "\n## {name}\n\n| key | Node | type | default | meaning |\n|---|---|---|---|---|\n"
        ));
        for (key, entry) in keys.as_object().into_iter().flatten() {
            let mut ty = entry["type"].as_str().unwrap_or_default().replace('|', " or ");
            if let Some(values) = entry.get("enum").and_then(Value::as_array) {
                ty = values
                    .iter()
                    .map(|v| format!("`{}`", v.as_str().unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join(", ");
            }
            if let Some(nested) = entry.get("options").and_then(Value::as_str) {
                ty = format!("[{nested}](#{})", nested.to_lowercase());
            }
            if let Some(items) = entry.get("items").and_then(Value::as_str) {
                ty = format!("array of [{items}](#{})", items.to_lowercase());
            }
            if entry.get("unit").is_some() {
                ty.push_str(" (ms)");
            }
            let default = match (entry.get("required"), entry.get("default")) {
                (Some(_), _) => "required".to_owned(),
                (_, Some(Value::Object(_))) => "see the type".to_owned(),
                (_, Some(v)) => format!("`{v}`"),
                (_, None) => String::new(),
            };
            let doc = entry["doc"].as_str().unwrap_or_default().replace('|', "\\|");
            out.push_str(&format!("| `{key}` | `{}` | {ty} | {default} | {doc} |\n", camel(key)));
        }
    }
    out
}

/// Compares `fresh` with the committed file at `relative` (or writes it when blessing).
fn check_fresh(relative: &str, fresh: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(relative);
    if std::env::var_os("AGENT_CORE_BLESS").is_some() {
        std::fs::write(&path, fresh).expect("the file is writable");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "{relative} is stale: an option changed. Run `AGENT_CORE_BLESS=1 cargo test -p agent-examples \
         --test options_table`, then make both bindings accept the change (their suites check it)."
    );
}

#[test]
fn the_options_table_and_its_page_are_up_to_date() {
    let table = table();
    let mut json = serde_json::to_string_pretty(&table).expect("the table serializes");
    json.push('\n');
    check_fresh("api/options.json", &json);
    check_fresh("docs/options.md", &markdown(&table));
}

#[test]
fn every_top_level_options_type_has_its_entry_points() {
    let names: Vec<_> = top_level_schemas().into_iter().map(|(name, _)| name).collect();
    let documented: Vec<_> = ENTRY_POINTS.iter().map(|(name, ..)| *name).collect();
    assert_eq!(names, documented);
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
