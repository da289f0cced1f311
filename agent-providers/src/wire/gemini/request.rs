//! The generateContent request: a borrowed view of the [`ModelRequest`] serialized straight
//! into the body. Fields are declared in alphabetical order, the order the bytes had when the
//! body was built as a JSON tree first.

use std::borrow::Cow;
use std::collections::HashMap;

use agent_core::{ANSWER_TOOL, ContentPart, ImageSource, Message, ModelRequest, ProviderError, Role, with_answer_tool};
use serde::Serialize;
use serde_json::Value;

use super::GeminiOptions;
use super::schema::schema;

/// Builds the generateContent request body.
///
/// A typed turn ([`ModelRequest::output_schema`]) without tools uses Gemini's structured output
/// (`responseMimeType: application/json` and `responseSchema`, the schema translated to
/// Gemini's subset). Gemini refuses that mode together with function calling ("Function calling
/// with a response mime type: 'application/json' is unsupported"), so a typed turn with tools
/// offers the `final_answer` tool instead ([`with_answer_tool`]) with function calling mode
/// `ANY`: every response calls a tool, a real one or the answer.
pub fn request_body(request: &ModelRequest, options: &GeminiOptions) -> Value {
    let request = typed(request);
    serde_json::to_value(WireRequest::new(&request, options)).unwrap_or(Value::Null)
}

/// The request a typed turn with tools sends: with the answer tool (see [`request_body`]).
fn typed(request: &ModelRequest) -> Cow<'_, ModelRequest> {
    if request.output_schema.is_some() && !request.tools.is_empty() {
        with_answer_tool(request)
    } else {
        Cow::Borrowed(request)
    }
}

/// Builds the generateContent request body as bytes (what the adapter sends; no intermediate
/// JSON tree).
pub fn request_bytes(request: &ModelRequest, options: &GeminiOptions) -> Result<Vec<u8>, ProviderError> {
    let request = typed(request);
    let wire = WireRequest::new(&request, options);
    crate::wire::to_bytes(&wire, 1024 + 192 * request.messages.len() + 512 * request.tools.len())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireRequest<'a> {
    contents: Vec<Content<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    generation_config: Option<GenerationConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_instruction: Option<SystemInstruction>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_config: Option<ToolConfig>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolGroup<'a>>,
}

/// `{"functionCallingConfig": {"mode": "ANY"}}`: every response calls a function (a typed
/// turn with tools, answered through the answer tool).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolConfig {
    function_calling_config: FunctionCallingConfig,
}

#[derive(Serialize)]
struct FunctionCallingConfig {
    mode: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GenerationConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_mime_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_schema: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking_config: Option<ThinkingConfig>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ThinkingConfig {
    include_thoughts: bool,
}

#[derive(Serialize)]
struct SystemInstruction {
    parts: [SystemText; 1],
}

#[derive(Serialize)]
struct SystemText {
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolGroup<'a> {
    function_declarations: Vec<Declaration<'a>>,
}

#[derive(Serialize)]
struct Declaration<'a> {
    description: &'a str,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters: Option<Value>,
}

#[derive(Serialize)]
struct Content<'a> {
    parts: Vec<Part<'a>>,
    role: &'static str,
}

#[derive(Serialize)]
#[serde(untagged, rename_all_fields = "camelCase")]
enum Part<'a> {
    Text {
        text: Cow<'a, str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        thought_signature: Option<&'a str>,
    },
    InlineData {
        inline_data: InlineData<'a>,
    },
    FileData {
        file_data: FileData<'a>,
    },
    FunctionCall {
        function_call: FunctionCall<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        thought_signature: Option<&'a str>,
    },
    FunctionResponse {
        function_response: FunctionResponse<'a>,
    },
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InlineData<'a> {
    data: &'a str,
    mime_type: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FileData<'a> {
    file_uri: &'a str,
    mime_type: &'a str,
}

#[derive(Serialize)]
struct FunctionCall<'a> {
    args: Value,
    id: &'a str,
    name: &'a str,
}

#[derive(Serialize)]
struct FunctionResponse<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    name: &'a str,
    response: Outcome,
}

/// `{"result": text}` or `{"error": text}`.
#[derive(Serialize)]
#[serde(rename_all = "lowercase")]
enum Outcome {
    Error(String),
    Result(String),
}

impl<'a> WireRequest<'a> {
    fn new(request: &'a ModelRequest, options: &GeminiOptions) -> Self {
        let mut contents: Vec<Content<'a>> = Vec::with_capacity(request.messages.len());
        let mut system: Vec<String> = request.system.iter().filter(|s| !s.is_empty()).cloned().collect();
        // Tool results need the function name: remember it per call id.
        let mut names: HashMap<&str, &str> = HashMap::new();
        for m in &request.messages {
            match m.role {
                Role::System => system.push(m.text()),
                Role::User => push_merged(&mut contents, "user", user_parts(&m.content)),
                Role::Assistant => {
                    for c in &m.tool_calls {
                        names.insert(&c.id, &c.name);
                    }
                    let parts = model_parts(m);
                    if !parts.is_empty() {
                        push_merged(&mut contents, "model", parts);
                    }
                }
                Role::Tool => {
                    let id = m.tool_call_id.as_deref().unwrap_or_default();
                    let name = m
                        .tool_name
                        .as_deref()
                        .or_else(|| names.get(id).copied())
                        .unwrap_or_default();
                    let response = if m.is_error {
                        Outcome::Error(m.text())
                    } else {
                        Outcome::Result(m.text())
                    };
                    let part = Part::FunctionResponse {
                        function_response: FunctionResponse {
                            id: (!id.is_empty()).then_some(id),
                            name,
                            response,
                        },
                    };
                    let mut parts = vec![part];
                    // Images of a result follow its functionResponse in the same user turn.
                    parts.extend(
                        user_parts(&m.content)
                            .into_iter()
                            .filter(|p| !matches!(p, Part::Text { .. })),
                    );
                    push_merged(&mut contents, "user", parts);
                }
            }
        }
        let declarations: Vec<Declaration<'a>> = request
            .tools
            .iter()
            .map(|t| {
                let params = schema(&t.parameters, &t.parameters, 0);
                let has_properties = params
                    .get("properties")
                    .and_then(Value::as_object)
                    .is_some_and(|p| !p.is_empty());
                Declaration {
                    description: &t.description,
                    name: &t.name,
                    parameters: has_properties.then_some(params),
                }
            })
            .collect();
        // A typed turn answers through the answer tool when it has tools (see `request_body`),
        // in Gemini's JSON mode when not.
        let answer_tool = request.tools.iter().any(|t| t.name == ANSWER_TOOL);
        let native = request.output_schema.as_ref().filter(|_| !answer_tool);
        let generation = GenerationConfig {
            max_output_tokens: request.max_output_tokens,
            response_mime_type: native.map(|_| "application/json"),
            response_schema: native.map(|o| schema(&o.schema, &o.schema, 0)),
            temperature: request.temperature.map(crate::util::json_f32),
            thinking_config: options
                .include_thoughts
                .then_some(ThinkingConfig { include_thoughts: true }),
        };
        let has_generation = generation.max_output_tokens.is_some()
            || generation.temperature.is_some()
            || generation.thinking_config.is_some()
            || generation.response_schema.is_some();
        WireRequest {
            contents,
            generation_config: has_generation.then_some(generation),
            system_instruction: (!system.is_empty()).then(|| SystemInstruction {
                parts: [SystemText {
                    text: system.join("\n\n"),
                }],
            }),
            tool_config: (request.output_schema.is_some() && answer_tool).then_some(ToolConfig {
                function_calling_config: FunctionCallingConfig { mode: "ANY" },
            }),
            tools: if declarations.is_empty() {
                Vec::new()
            } else {
                vec![ToolGroup {
                    function_declarations: declarations,
                }]
            },
        }
    }
}

fn push_merged<'a>(contents: &mut Vec<Content<'a>>, role: &'static str, parts: Vec<Part<'a>>) {
    if let Some(last) = contents.last_mut()
        && last.role == role
    {
        last.parts.extend(parts);
        return;
    }
    contents.push(Content { parts, role });
}

fn user_parts(parts: &[ContentPart]) -> Vec<Part<'_>> {
    parts
        .iter()
        .map(|p| match p {
            ContentPart::Text { text } => Part::Text {
                text: Cow::Borrowed(text),
                thought_signature: None,
            },
            ContentPart::Image { media_type, source } => match source {
                ImageSource::Base64 { data } => Part::InlineData {
                    inline_data: InlineData {
                        data,
                        mime_type: media_type,
                    },
                },
                ImageSource::Url { url } => Part::FileData {
                    file_data: FileData {
                        file_uri: url,
                        mime_type: media_type,
                    },
                },
            },
        })
        .collect()
}

fn model_parts(m: &Message) -> Vec<Part<'_>> {
    let mut parts = Vec::new();
    let signature = m.reasoning.as_ref().and_then(|r| r.signature.as_deref());
    let text = m.text();
    if !text.is_empty() {
        parts.push(Part::Text {
            text: Cow::Owned(text),
            thought_signature: signature,
        });
    }
    for call in &m.tool_calls {
        let args = match call.parse_arguments() {
            Ok(v @ Value::Object(_)) => v,
            _ => Value::Object(serde_json::Map::new()),
        };
        parts.push(Part::FunctionCall {
            function_call: FunctionCall {
                args,
                id: &call.id,
                name: &call.name,
            },
            thought_signature: call.signature.as_deref(),
        });
    }
    parts
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::wire::test_support::{assert_bytes_of_tree, requests};

    /// The view's fields are in the order a `Value` tree sorts them, so the bytes sent are the
    /// ones the tree-built body had, and they parse to [`request_body`].
    #[test]
    fn request_bytes_are_the_sorted_tree() {
        for request in &requests() {
            for options in [GeminiOptions::default(), GeminiOptions { include_thoughts: true }] {
                let bytes = request_bytes(request, &options).unwrap();
                assert_bytes_of_tree(&bytes, &request_body(request, &options));
            }
        }
    }
}
