//! [`OutputSchema`]: the JSON Schema a turn's final answer must match, and the answer tool
//! that adapters without a structured-output mode usable alongside tools offer instead.

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{ModelRequest, ToolSchema};

/// The name of the tool through which a model answers when its adapter cannot combine a
/// native structured-output mode with tools (Anthropic; Gemini when tools are offered). The
/// loop turns a call of it into the turn's answer; it never runs as a tool.
pub const ANSWER_TOOL: &str = "final_answer";

/// The property that holds the answer when the schema is not an object schema (tool
/// arguments must be an object): the answer tool's arguments are then `{"value": answer}`.
const WRAPPED: &str = "value";

/// The JSON Schema the final answer of a turn must match (see
/// [`Session::send_with_schema`](crate::Session::send_with_schema)). Tools stay offered in
/// the same turn: the schema applies to the answer, the message without tool calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputSchema {
    /// A short name for the schema (letters, digits, `_` and `-`; OpenAI requires one).
    pub name: String,
    /// The JSON Schema of the answer.
    pub schema: Value,
    /// Asks the provider for strict schema adherence where it has such a mode (OpenAI's
    /// `strict`, which needs every property required and `additionalProperties: false`).
    #[serde(default)]
    pub strict: bool,
}

impl OutputSchema {
    /// A schema with a name; not strict.
    pub fn new(name: impl Into<String>, schema: Value) -> Self {
        OutputSchema {
            name: wire_name(&name.into()),
            schema,
            strict: false,
        }
    }

    /// Sets [`Self::strict`].
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Whether the schema describes an object: the answer tool's arguments are then the
    /// answer itself, otherwise `{"value": answer}`.
    fn is_object(&self) -> bool {
        self.schema.get("type").and_then(Value::as_str) == Some("object")
    }

    /// The answer tool's schema: [`ANSWER_TOOL`], taking the answer as its arguments.
    pub fn answer_tool(&self) -> ToolSchema {
        let parameters = if self.is_object() {
            self.schema.clone()
        } else {
            json!({"type": "object", "properties": {WRAPPED: self.schema}, "required": [WRAPPED]})
        };
        ToolSchema {
            name: ANSWER_TOOL.to_owned(),
            description: format!(
                "Give your final answer (schema \"{}\") by calling this tool, once any other tools you need have \
                 returned. Its arguments are the answer.",
                self.name
            ),
            parameters,
        }
    }

    /// The answer carried by the arguments of an [`ANSWER_TOOL`] call, as JSON text (the
    /// arguments unchanged when they cannot be unwrapped: validation then says what is wrong).
    pub fn answer_from_arguments(&self, arguments: &str) -> String {
        if self.is_object() {
            return arguments.to_owned();
        }
        match serde_json::from_str::<Value>(arguments) {
            Ok(Value::Object(mut obj)) => match obj.remove(WRAPPED) {
                Some(value) => value.to_string(),
                None => arguments.to_owned(),
            },
            _ => arguments.to_owned(),
        }
    }

    /// The instruction added to the system prompt when the answer goes through the tool.
    pub fn answer_instruction(&self) -> String {
        format!(
            "When you give your final answer, call the tool {ANSWER_TOOL} with the answer as its arguments instead \
             of writing it as text. Call it alone, after any other tools you need have returned."
        )
    }
}

/// The request with the answer tool added to its tools and its instruction to the system
/// prompt, for adapters whose structured-output mode cannot be combined with tools. Borrowed
/// unchanged when it has no output schema or already offers a tool named [`ANSWER_TOOL`].
pub fn with_answer_tool(request: &ModelRequest) -> Cow<'_, ModelRequest> {
    let Some(output) = &request.output_schema else {
        return Cow::Borrowed(request);
    };
    if request.tools.iter().any(|t| t.name == ANSWER_TOOL) {
        return Cow::Borrowed(request);
    }
    let mut tools = Vec::with_capacity(request.tools.len() + 1);
    tools.extend(request.tools.iter().cloned());
    tools.push(output.answer_tool());
    let instruction = output.answer_instruction();
    let system = match request.system.as_deref().filter(|s| !s.is_empty()) {
        Some(system) => format!("{system}\n\n{instruction}"),
        None => instruction,
    };
    Cow::Owned(ModelRequest {
        system: Some(system),
        tools: Arc::new(tools),
        ..request.clone()
    })
}

/// A name OpenAI accepts for a schema: `[A-Za-z0-9_-]`, at most 64 characters, not empty.
fn wire_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if cleaned.is_empty() {
        "answer".to_owned()
    } else {
        cleaned
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn names_are_made_wire_safe() {
        assert_eq!(OutputSchema::new("Weather<Report>", json!({})).name, "Weather_Report_");
        assert_eq!(OutputSchema::new("", json!({})).name, "answer");
    }

    #[test]
    fn a_non_object_answer_is_wrapped_and_unwrapped() {
        let list = OutputSchema::new("list", json!({"type": "array", "items": {"type": "string"}}));
        let tool = list.answer_tool();
        assert_eq!(tool.parameters["type"], "object");
        assert_eq!(tool.parameters["required"], json!(["value"]));
        assert_eq!(list.answer_from_arguments(r#"{"value":["a","b"]}"#), r#"["a","b"]"#);
        assert_eq!(list.answer_from_arguments("nope"), "nope");

        let object = OutputSchema::new("o", json!({"type": "object", "properties": {"a": {"type": "string"}}}));
        assert_eq!(object.answer_tool().parameters, object.schema);
        assert_eq!(object.answer_from_arguments(r#"{"a":"x"}"#), r#"{"a":"x"}"#);
    }

    #[test]
    fn the_answer_tool_is_added_once() {
        let plain = ModelRequest::default();
        assert!(matches!(with_answer_tool(&plain), Cow::Borrowed(_)));
        let typed = ModelRequest {
            system: Some("Be brief.".into()),
            output_schema: Some(OutputSchema::new("o", json!({"type": "object"}))),
            ..ModelRequest::default()
        };
        let with = with_answer_tool(&typed);
        assert_eq!(with.tools.len(), 1);
        assert_eq!(with.tools[0].name, ANSWER_TOOL);
        assert!(
            with.system
                .as_deref()
                .unwrap()
                .starts_with("Be brief.\n\nWhen you give your final answer")
        );
        assert!(matches!(with_answer_tool(&with), Cow::Borrowed(_)));
    }
}
