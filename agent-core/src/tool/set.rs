use std::collections::HashMap;
use std::sync::Arc;

use super::Tool;
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

struct Entry {
    tool: Arc<dyn Tool>,
    validator: jsonschema::Validator,
}

/// A registry of tools: unique names, schema export for providers, and argument validation
/// with a JSON Schema validator before any tool runs.
#[derive(Default)]
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
        let validator = jsonschema::validator_for(&spec.parameters).map_err(|e| ToolSetError::InvalidSchema {
            name: spec.name.clone(),
            reason: e.to_string(),
        })?;
        self.by_name.insert(spec.name.clone(), self.entries.len());
        let mut schemas = self.schemas.as_ref().clone();
        schemas.push(ToolSchema {
            name: spec.name.clone(),
            description: spec.description.clone(),
            parameters: spec.parameters.clone(),
        });
        self.schemas = Arc::new(schemas);
        self.entries.push(Entry { tool, validator });
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
        let Some(error) = entry.validator.iter_errors(args).next() else {
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
