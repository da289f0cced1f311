//! The Chat Completions request: a borrowed view of the [`ModelRequest`] in wire order,
//! serialized straight into the body.

use std::borrow::Cow;

use agent_core::{ContentPart, ImageSource, Message, ModelRequest, ProviderError, Role};
use serde::Serialize;
use serde_json::Value;

/// Builds the Chat Completions request body as JSON.
pub fn request_body(model: &str, request: &ModelRequest, stream: bool) -> Value {
    serde_json::to_value(WireRequest::new(model, request, stream)).unwrap_or(Value::Null)
}

/// Builds the Chat Completions request body as bytes (what the adapter sends; no
/// intermediate JSON tree): [`request_body`]'s structure, fields in wire order.
pub fn request_bytes(model: &str, request: &ModelRequest, stream: bool) -> Result<Vec<u8>, ProviderError> {
    let wire = WireRequest::new(model, request, stream);
    crate::wire::to_bytes(&wire, 1024 + 192 * wire.messages.len() + 512 * wire.tools.len())
}

#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<ResponseFormat<'a>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
}

/// Structured output for a typed turn: `{"type": "json_schema", "json_schema": {...}}`. Chat
/// Completions takes it together with tools: the schema binds the answer, not the tool calls.
#[derive(Serialize)]
struct ResponseFormat<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    json_schema: JsonSchemaFormat<'a>,
}

#[derive(Serialize)]
struct JsonSchemaFormat<'a> {
    name: &'a str,
    schema: &'a Value,
    strict: bool,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum WireMessage<'a> {
    System {
        content: Cow<'a, str>,
    },
    User {
        content: UserContent<'a>,
    },
    Assistant {
        content: Option<Cow<'a, str>>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireCall<'a>>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        reasoning_details: Vec<&'a Value>,
    },
    Tool {
        tool_call_id: &'a str,
        content: Cow<'a, str>,
    },
}

#[derive(Serialize)]
#[serde(untagged)]
enum UserContent<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<UserPart<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum UserPart<'a> {
    Text { text: Cow<'a, str> },
    ImageUrl { image_url: ImageUrl },
}

#[derive(Serialize)]
struct ImageUrl {
    url: String,
}

#[derive(Serialize)]
struct WireCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionCall<'a>,
}

#[derive(Serialize)]
struct WireFunctionCall<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

/// The text of a message, borrowed when it is a single part.
fn text_of(m: &Message) -> Cow<'_, str> {
    match m.content.as_slice() {
        [ContentPart::Text { text }] => Cow::Borrowed(text),
        _ => Cow::Owned(m.text()),
    }
}

impl<'a> WireRequest<'a> {
    fn new(model: &'a str, request: &'a ModelRequest, stream: bool) -> Self {
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
            messages.push(WireMessage::System {
                content: Cow::Borrowed(system),
            });
        }
        let mut tool_images = ToolImages::default();
        for m in &request.messages {
            if m.role == Role::Tool {
                tool_images.add(m);
            } else {
                tool_images.flush(&mut messages);
            }
            messages.push(match m.role {
                Role::System => WireMessage::System { content: text_of(m) },
                Role::User => WireMessage::User {
                    content: user_content(&m.content),
                },
                Role::Assistant => {
                    let text = text_of(m);
                    let content = if text.is_empty() && !m.tool_calls.is_empty() {
                        None
                    } else {
                        Some(text)
                    };
                    let tool_calls = m
                        .tool_calls
                        .iter()
                        .map(|c| WireCall {
                            id: &c.id,
                            kind: "function",
                            function: WireFunctionCall {
                                name: &c.name,
                                arguments: if c.arguments.trim().is_empty() {
                                    "{}"
                                } else {
                                    &c.arguments
                                },
                            },
                        })
                        .collect();
                    // OpenRouter's reasoning_details must come back unchanged.
                    let reasoning_details = m
                        .reasoning
                        .iter()
                        .flat_map(|r| r.opaque.iter())
                        .filter(|v| {
                            v.get("type")
                                .and_then(Value::as_str)
                                .is_some_and(|t| t.starts_with("reasoning."))
                        })
                        .collect();
                    WireMessage::Assistant {
                        content,
                        tool_calls,
                        reasoning_details,
                    }
                }
                Role::Tool => WireMessage::Tool {
                    tool_call_id: m.tool_call_id.as_deref().unwrap_or_default(),
                    content: text_of(m),
                },
            });
        }
        tool_images.flush(&mut messages);
        WireRequest {
            model,
            messages,
            tools: request
                .tools
                .iter()
                .map(|t| WireTool {
                    kind: "function",
                    function: WireFunction {
                        name: &t.name,
                        description: &t.description,
                        parameters: &t.parameters,
                    },
                })
                .collect(),
            max_tokens: request.max_output_tokens,
            temperature: request.temperature.map(crate::util::json_f32),
            response_format: request.output_schema.as_ref().map(|o| ResponseFormat {
                kind: "json_schema",
                json_schema: JsonSchemaFormat {
                    name: &o.name,
                    schema: &o.schema,
                    strict: o.strict,
                },
            }),
            stream,
            stream_options: stream.then_some(StreamOptions { include_usage: true }),
        }
    }
}

fn user_content(parts: &[ContentPart]) -> UserContent<'_> {
    if parts.iter().all(|p| matches!(p, ContentPart::Text { .. })) {
        return UserContent::Text(match parts {
            [ContentPart::Text { text }] => Cow::Borrowed(text.as_str()),
            _ => Cow::Owned(parts.iter().filter_map(ContentPart::as_text).collect()),
        });
    }
    UserContent::Parts(
        parts
            .iter()
            .map(|p| match p {
                ContentPart::Text { text } => UserPart::Text {
                    text: Cow::Borrowed(text),
                },
                ContentPart::Image { media_type, source } => image_part(media_type, source),
            })
            .collect(),
    )
}

fn image_part<'a>(media_type: &str, source: &ImageSource) -> UserPart<'a> {
    UserPart::ImageUrl {
        image_url: ImageUrl {
            url: match source {
                ImageSource::Base64 { data } => format!("data:{media_type};base64,{data}"),
                ImageSource::Url { url } => url.clone(),
            },
        },
    }
}

/// Images returned by tool calls. Chat Completions takes only text in a tool message, and
/// nothing may come between an assistant's tool calls and their results: the images go in
/// one user message right after the results, naming the calls they came from.
#[derive(Default)]
struct ToolImages<'a> {
    calls: Vec<&'a str>,
    parts: Vec<UserPart<'a>>,
}

impl<'a> ToolImages<'a> {
    fn add(&mut self, m: &'a Message) {
        let mut any = false;
        for p in &m.content {
            if let ContentPart::Image { media_type, source } = p {
                self.parts.push(image_part(media_type, source));
                any = true;
            }
        }
        if any {
            self.calls.push(m.tool_call_id.as_deref().unwrap_or_default());
        }
    }

    fn flush(&mut self, messages: &mut Vec<WireMessage<'a>>) {
        if self.parts.is_empty() {
            return;
        }
        let label = format!("The images returned by tool call {}:", self.calls.join(", "));
        let mut parts = vec![UserPart::Text {
            text: Cow::Owned(label),
        }];
        parts.append(&mut self.parts);
        self.calls.clear();
        messages.push(WireMessage::User {
            content: UserContent::Parts(parts),
        });
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::wire::test_support::requests;

    #[test]
    fn request_bytes_are_request_body() {
        for request in &requests() {
            for stream in [true, false] {
                let bytes = request_bytes("gpt-4.1", request, stream).unwrap();
                let value: Value = serde_json::from_slice(&bytes).unwrap();
                assert_eq!(value, request_body("gpt-4.1", request, stream));
            }
        }
    }
}
