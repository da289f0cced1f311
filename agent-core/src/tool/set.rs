use std::collections::HashMap;
use std::sync::Arc;

use super::Tool;
use super::schema_check::SchemaCheck;
use crate::provider::ToolSchema;

/// Why a tool could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolSetError {
    /// Another tool already has this name.
    #[error("a tool named {0:?} is already registered; tool names must be unique")]
    Duplicate(String),
    /// The tool's parameter schema is not a valid JSON Schema.
    #[error("the parameter schema of tool {name:?} is invalid: {reason}")]
    InvalidSchema {
        /// The tool's name.
        name: String,
        /// What the validator said.
        reason: String,
    },
}

/// Arguments that do not match a tool's schema. The message names the offending argument and
/// is written for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ArgumentError {
    /// The argument's name (top-level key or JSON pointer), when one is to blame.
    pub argument: Option<String>,
    /// The whole explanation.
    pub message: String,
}

#[derive(Clone)]
struct Entry {
    tool: Arc<dyn Tool>,
    check: Arc<SchemaCheck>,
}

/// A registry of tools: unique names, schema export for providers, and argument validation
/// against each tool's JSON Schema before any tool runs. Cloning it shares the tools and
/// their compiled schemas.
#[derive(Default, Clone)]
pub struct ToolSet {
    entries: Vec<Entry>,
    by_name: HashMap<String, usize>,
    schemas: Arc<Vec<ToolSchema>>,
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSet").field("tools", &self.names()).finish()
    }
}

impl ToolSet {
    /// An empty tool set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a tool. Fails on a duplicate name or an invalid schema.
    pub fn register(&mut self, tool: impl Tool + 'static) -> Result<(), ToolSetError> {
        self.register_arc(Arc::new(tool))
    }

    /// Registers a shared tool. Fails on a duplicate name or an invalid schema.
    pub fn register_arc(&mut self, tool: Arc<dyn Tool>) -> Result<(), ToolSetError> {
        let spec = tool.spec();
        if self.by_name.contains_key(&spec.name) {
            return Err(ToolSetError::Duplicate(spec.name.clone()));
        }
        let check = SchemaCheck::new(&spec.parameters).map_err(|reason| ToolSetError::InvalidSchema {
            name: spec.name.clone(),
            reason,
        })?;
        self.by_name.insert(spec.name.clone(), self.entries.len());
        let mut schemas = self.schemas.as_ref().clone();
        schemas.push(ToolSchema {
            name: spec.name.clone(),
            description: spec.description.clone(),
            parameters: spec.parameters.clone(),
        });
        self.schemas = Arc::new(schemas);
        self.entries.push(Entry {
            tool,
            check: Arc::new(check),
        });
        Ok(())
    }

    /// Removes a tool by name; returns it if it was there.
    pub fn remove(&mut self, name: &str) -> Option<Arc<dyn Tool>> {
        let index = self.by_name.remove(name)?;
        let entry = self.entries.remove(index);
        for i in self.by_name.values_mut() {
            if *i > index {
                *i -= 1;
            }
        }
        let schemas = self.schemas.iter().filter(|s| s.name != name).cloned().collect();
        self.schemas = Arc::new(schemas);
        Some(entry.tool)
    }

    /// The tool with this name.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.by_name.get(name).map(|&i| &self.entries[i].tool)
    }

    /// Whether a tool with this name is registered.
    pub fn has(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// Every tool, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.entries.iter().map(|e| &e.tool)
    }

    /// Tool names in registration order.
    pub fn names(&self) -> Vec<String> {
        self.entries.iter().map(|e| e.tool.spec().name.clone()).collect()
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The schemas of every tool, in the provider-neutral form adapters translate. Cheap: the
    /// list is shared, not rebuilt.
    pub fn schemas(&self) -> Arc<Vec<ToolSchema>> {
        self.schemas.clone()
    }

    /// Checks arguments against the named tool's schema. Unknown tools pass (the caller
    /// reports them separately).
    pub fn validate(&self, name: &str, args: &serde_json::Value) -> Result<(), ArgumentError> {
        let Some(&index) = self.by_name.get(name) else {
            return Ok(());
        };
        let entry = &self.entries[index];
        if entry.check.accepts_quickly(args) {
            return Ok(());
        }
        let validator = entry.check.full().map_err(|reason| ArgumentError {
            argument: None,
            message: format!("the arguments for {name} could not be checked ({reason}); the tool did not run"),
        })?;
        let Some(error) = validator.iter_errors(args).next() else {
            return Ok(());
        };
        Err(describe(name, args, &error))
    }
}

fn describe(tool: &str, args: &serde_json::Value, error: &jsonschema::ValidationError<'_>) -> ArgumentError {
    use jsonschema::error::ValidationErrorKind;

    let path = error.instance_path().to_string();
    let argument = match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| property.to_string());
            let prefix = path.trim_start_matches('/');
            Some(if prefix.is_empty() {
                name
            } else {
                format!("{prefix}/{name}")
            })
        }
        _ if path.is_empty() => None,
        _ => Some(path.trim_start_matches('/').to_owned()),
    };
    let message = match (&argument, error.kind()) {
        (Some(arg), ValidationErrorKind::Required { .. }) => {
            format!("invalid arguments for {tool}: missing required argument \"{arg}\"; the tool did not run")
        }
        (Some(arg), _) => format!("invalid arguments for {tool}: argument \"{arg}\": {error}; the tool did not run"),
        (None, _) if !args.is_object() => {
            format!("invalid arguments for {tool}: arguments must be a JSON object, got {args}; the tool did not run")
        }
        (None, _) => format!("invalid arguments for {tool}: {error}; the tool did not run"),
    };
    ArgumentError { argument, message }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;
    use crate::tool::{ToolContext, ToolError, ToolOutput, ToolSpec, tool_fn};

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)] // only its schema is used
    struct ReadArgs {
        path: String,
        limit: Option<u32>,
    }

    struct Fixed(ToolSpec);

    #[async_trait::async_trait]
    impl Tool for Fixed {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        async fn call(&self, _: serde_json::Value, _: ToolContext) -> Result<ToolOutput, ToolError> {
            Ok("ok".into())
        }
    }

    fn register(parameters: serde_json::Value) -> Result<ToolSet, ToolSetError> {
        let mut set = ToolSet::new();
        set.register(Fixed(ToolSpec::new("read", "Reads.", parameters)))?;
        Ok(set)
    }

    #[test]
    fn a_plain_schema_checks_valid_arguments_without_compiling_a_validator() {
        let set = register(json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}))
            .unwrap();
        set.validate("read", &json!({"path": "a"})).unwrap();
        assert!(set.entries[0].check.compiled().is_none());
        // A refusal is explained by the full validator, in its usual words.
        let error = set.validate("read", &json!({})).unwrap_err();
        assert_eq!(error.argument.as_deref(), Some("path"));
        assert!(
            error.message.contains("missing required argument \"path\""),
            "{}",
            error.message
        );
        assert!(set.entries[0].check.compiled().is_some());
        let error = set.validate("read", &json!({"path": 3})).unwrap_err();
        assert!(error.message.contains("argument \"path\""), "{}", error.message);
    }

    #[test]
    fn the_quick_check_only_accepts_and_the_full_validator_has_the_last_word() {
        // A float with no fraction is an integer to the validator; the quick check leaves it
        // to the validator, which accepts it.
        let set = register(json!({"type": "object", "properties": {"n": {"type": "integer"}}})).unwrap();
        set.validate("read", &json!({"n": 2.0})).unwrap();
        set.validate("read", &json!({"n": 2.5})).unwrap_err();
    }

    #[test]
    fn a_typed_tools_schema_is_plain() {
        let mut set = ToolSet::new();
        set.register(tool_fn("read", "Reads.", |_: ReadArgs, _: ToolContext| async move {
            Ok::<_, ToolError>("ok")
        }))
        .unwrap();
        assert!(set.entries[0].check.is_plain(), "{}", set.schemas()[0].parameters);
        set.validate("read", &json!({"path": "a", "limit": 3})).unwrap();
        set.validate("read", &json!({"path": "a", "limit": null})).unwrap();
        assert!(set.entries[0].check.compiled().is_none());
    }

    #[test]
    fn other_schemas_are_compiled_at_registration_and_refused_there_when_invalid() {
        let set =
            register(json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "^a"}}})).unwrap();
        assert!(!set.entries[0].check.is_plain());
        assert!(set.entries[0].check.compiled().is_some());
        set.validate("read", &json!({"s": "ab"})).unwrap();
        set.validate("read", &json!({"s": "ba"})).unwrap_err();
        let error = register(json!({"type": "strnig"})).map(|_| ()).unwrap_err();
        assert!(matches!(error, ToolSetError::InvalidSchema { .. }), "{error}");
    }

    #[test]
    fn a_clone_shares_the_compiled_checks() {
        let set = register(json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}})).unwrap();
        let copy = set.clone();
        assert!(Arc::ptr_eq(&set.entries[0].check, &copy.entries[0].check));
        assert_eq!(copy.names(), ["read"]);
    }
}
