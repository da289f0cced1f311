//! The generateContent request: a borrowed view of the [`ModelRequest`] serialized straight
//! into the body. Fields are declared in alphabetical order, the order the bytes had when the
//! body was built as a JSON tree first.
//!
//! Within a turn each request repeats the previous one's messages: their encoding is kept in
//! the request's [`EncodingReuse`](agent_core::EncodingReuse) memo, and only the messages
//! added since are encoded again, with the newest content (the next message of its role
//! joins it: consecutive tool results are one user content), and so are the tool
//! declarations when the list is the same (see [`KeptItems`]).

use std::borrow::Cow;

use agent_core::{ANSWER_TOOL, ContentPart, ImageSource, Message, ModelRequest, ProviderError, Role, with_answer_tool};
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::GeminiOptions;
use super::schema::schema;
use crate::wire::kept::KeptItems;
use crate::wire::merged;

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
    let limit = merged::newest_start(&request.messages, wire_role);
    KeptItems::start(&request, None, None::<()>)
        .and_then(|kept| encode(&request, options, kept, limit))
        .ok()
        .and_then(|(body, _)| serde_json::from_slice(&body).ok())
        .unwrap_or(Value::Null)
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
/// JSON tree). The messages the request's [`reuse`](ModelRequest::reuse) vouches for are not
/// encoded again, but for the newest content; the memo of this request is left for the next.
pub fn request_bytes(request: &ModelRequest, options: &GeminiOptions) -> Result<Vec<u8>, ProviderError> {
    let request = typed(request);
    let mut kept = KeptItems::for_request(&request, None, || None::<()>)?;
    let limit = merged::newest_start(&request.messages, wire_role);
    if !merged::fit(&mut kept, &request.messages, limit, wire_role) {
        kept = KeptItems::start(&request, None, None::<()>)?;
    }
    let (body, kept) = encode(&request, options, kept, limit)?;
    kept.keep(&request);
    Ok(body)
}

/// The generateContent wire format, naming its kept items.
struct Contents;

/// The body, encoding the messages `kept` does not cover, and the encoding of the ones before
/// `limit` (the newest content's start), which a later request may continue from.
fn encode(
    request: &ModelRequest,
    options: &GeminiOptions,
    mut kept: KeptItems<Contents>,
    limit: usize,
) -> Result<(Vec<u8>, KeptItems<Contents>), ProviderError> {
    let wire = merged::merge(&mut kept, request, |i, m| wire_parts(&request.messages, i, m))
        .into_iter()
        .map(|(start, role, parts)| (start, Content { parts, role }))
        .collect();
    let sent = merged::keep_before(&mut kept, wire, limit)?;
    kept.encode_tools(request, || tool_groups(request))?;
    let rest = Rest::new(request, options, kept.tools(request));
    let body = kept.body(&Head {}, "contents", &sent, &rest)?;
    Ok((body, kept))
}

/// The body's fields before the contents: none.
#[derive(Serialize)]
struct Head {}

/// The body's fields after the contents, in alphabetical order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rest<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    generation_config: Option<GenerationConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_instruction: Option<SystemInstruction>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_config: Option<ToolConfig>,
    /// The tool declarations (never an empty list).
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
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

impl<'a> Rest<'a> {
    fn new(request: &ModelRequest, options: &GeminiOptions, tools: Option<&'a RawValue>) -> Self {
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
        Rest {
            generation_config: has_generation.then_some(generation),
            system_instruction: merged::system_text(request).map(|text| SystemInstruction {
                parts: [SystemText { text }],
            }),
            tool_config: (request.output_schema.is_some() && answer_tool).then_some(ToolConfig {
                function_calling_config: FunctionCallingConfig { mode: "ANY" },
            }),
            tools,
        }
    }
}

/// The tools as one group of function declarations (encoded only when there are tools).
fn tool_groups(request: &ModelRequest) -> [ToolGroup<'_>; 1] {
    let function_declarations = request
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
    [ToolGroup { function_declarations }]
}

/// The role of the content `m` goes into, `None` for a message sent elsewhere (a system
/// message, in the system instruction) or not at all (a model message with nothing to send).
fn wire_role(m: &Message) -> Option<&'static str> {
    match m.role {
        Role::System => None,
        Role::User | Role::Tool => Some("user"),
        Role::Assistant => {
            let sends =
                !m.tool_calls.is_empty() || m.content.iter().any(|p| p.as_text().is_some_and(|t| !t.is_empty()));
            sends.then_some("model")
        }
    }
}

/// The content role and parts of `m`, the message at `index` of `messages`; `None` for a
/// message sent elsewhere or not at all (see [`wire_role`]).
fn wire_parts<'a>(messages: &'a [Message], index: usize, m: &'a Message) -> Option<(&'static str, Vec<Part<'a>>)> {
    match m.role {
        Role::System => None,
        Role::User => Some(("user", user_parts(&m.content))),
        Role::Assistant => Some(model_parts(m)).filter(|p| !p.is_empty()).map(|p| ("model", p)),
        Role::Tool => {
            let id = m.tool_call_id.as_deref().unwrap_or_default();
            // A result needs its function's name: its own, else its call's.
            let name = m
                .tool_name
                .as_deref()
                .or_else(|| call_name(&messages[..index], id))
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
            Some(("user", parts))
        }
    }
}

/// The name of the latest call with this id among `messages`.
fn call_name<'a>(messages: &'a [Message], id: &str) -> Option<&'a str> {
    messages
        .iter()
        .rev()
        .flat_map(|m| m.tool_calls.iter().rev())
        .find(|c| c.id == id)
        .map(|c| c.name.as_str())
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
mod reuse_tests;

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
