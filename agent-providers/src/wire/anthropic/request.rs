//! The Messages request: a borrowed view of the [`ModelRequest`] serialized straight into the
//! body. Fields are declared in alphabetical order, the order the bytes had when the body was
//! built as a JSON tree first.

use agent_core::{ContentPart, ImageSource, Message, ModelRequest, ProviderError, Role};
use serde::Serialize;
use serde_json::Value;

use super::{AnthropicOptions, DEFAULT_MAX_TOKENS};

/// Builds the Messages request body.
pub fn request_body(model: &str, request: &ModelRequest, stream: bool, options: &AnthropicOptions) -> Value {
    serde_json::to_value(WireRequest::new(model, request, stream, options)).unwrap_or(Value::Null)
}

/// Builds the Messages request body as bytes (what the adapter sends; no intermediate JSON
/// tree).
pub fn request_bytes(
    model: &str,
    request: &ModelRequest,
    stream: bool,
    options: &AnthropicOptions,
) -> Result<Vec<u8>, ProviderError> {
    let wire = WireRequest::new(model, request, stream, options);
    crate::wire::to_bytes(&wire, 1024 + 192 * request.messages.len() + 512 * wire.tools.len())
}

#[derive(Serialize)]
struct WireRequest<'a> {
    max_tokens: u32,
    messages: Vec<WireMessage<'a>>,
    model: &'a str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Thinking>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
}

#[derive(Serialize)]
struct Thinking {
    budget_tokens: u32,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct WireTool<'a> {
    description: &'a str,
    input_schema: &'a Value,
    name: &'a str,
}

#[derive(Serialize)]
struct WireMessage<'a> {
    content: Vec<Block<'a>>,
    role: &'static str,
}

/// A content block; `kind` is its `type`.
#[derive(Serialize)]
#[serde(untagged)]
enum Block<'a> {
    Text {
        text: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    Image {
        source: ImageBlockSource<'a>,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    Thinking {
        signature: &'a str,
        thinking: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    /// Redacted thinking, sent back as it came.
    Opaque(&'a Value),
    ToolUse {
        id: &'a str,
        input: Value,
        name: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    ToolResult {
        content: ToolResultContent<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
        tool_use_id: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
}

/// A tool result's content: its text, or text and image blocks when it carries images.
#[derive(Serialize)]
#[serde(untagged)]
enum ToolResultContent<'a> {
    Text(String),
    Blocks(Vec<Block<'a>>),
}

#[derive(Serialize)]
#[serde(untagged)]
enum ImageBlockSource<'a> {
    Base64 {
        data: &'a str,
        media_type: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    Url {
        #[serde(rename = "type")]
        kind: &'static str,
        url: &'a str,
    },
}

impl<'a> WireRequest<'a> {
    fn new(model: &'a str, request: &'a ModelRequest, stream: bool, options: &AnthropicOptions) -> Self {
        let mut messages: Vec<WireMessage<'a>> = Vec::with_capacity(request.messages.len());
        let mut system: Vec<String> = request.system.iter().filter(|s| !s.is_empty()).cloned().collect();
        for m in &request.messages {
            match m.role {
                Role::System => system.push(m.text()),
                Role::User => push_merged(&mut messages, "user", content_blocks(&m.content)),
                Role::Assistant => {
                    let blocks = assistant_blocks(m);
                    if !blocks.is_empty() {
                        push_merged(&mut messages, "assistant", blocks);
                    }
                }
                Role::Tool => {
                    let has_image = m.content.iter().any(|p| matches!(p, ContentPart::Image { .. }));
                    let content = if has_image {
                        ToolResultContent::Blocks(content_blocks(&m.content))
                    } else {
                        ToolResultContent::Text(m.text())
                    };
                    let block = Block::ToolResult {
                        content,
                        is_error: m.is_error.then_some(true),
                        tool_use_id: m.tool_call_id.as_deref().unwrap_or_default(),
                        kind: "tool_result",
                    };
                    push_merged(&mut messages, "user", vec![block]);
                }
            }
        }
        let thinking = options.thinking_budget.map(|budget| Thinking {
            budget_tokens: budget,
            kind: "enabled",
        });
        WireRequest {
            max_tokens: request.max_output_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            messages,
            model,
            stream,
            system: (!system.is_empty()).then(|| system.join("\n\n")),
            // The API refuses a temperature together with thinking.
            temperature: request
                .temperature
                .filter(|_| thinking.is_none())
                .map(crate::util::json_f32),
            thinking,
            tools: request
                .tools
                .iter()
                .map(|t| WireTool {
                    description: &t.description,
                    input_schema: &t.parameters,
                    name: &t.name,
                })
                .collect(),
        }
    }
}

/// Appends blocks to the last message when it has the same role (tool results that follow each
/// other become one user message), or starts a new message.
fn push_merged<'a>(messages: &mut Vec<WireMessage<'a>>, role: &'static str, blocks: Vec<Block<'a>>) {
    if let Some(last) = messages.last_mut()
        && last.role == role
    {
        last.content.extend(blocks);
        return;
    }
    messages.push(WireMessage { content: blocks, role });
}

fn content_blocks(parts: &[ContentPart]) -> Vec<Block<'_>> {
    parts
        .iter()
        .filter(|p| p.as_text() != Some(""))
        .map(|p| match p {
            ContentPart::Text { text } => Block::Text { text, kind: "text" },
            ContentPart::Image { media_type, source } => Block::Image {
                source: match source {
                    ImageSource::Base64 { data } => ImageBlockSource::Base64 {
                        data,
                        media_type,
                        kind: "base64",
                    },
                    ImageSource::Url { url } => ImageBlockSource::Url { kind: "url", url },
                },
                kind: "image",
            },
        })
        .collect()
}

fn assistant_blocks(m: &Message) -> Vec<Block<'_>> {
    let mut blocks = Vec::new();
    if let Some(reasoning) = &m.reasoning {
        // Thinking goes back only with its signature (the API rejects unsigned thinking).
        if let Some(signature) = &reasoning.signature {
            blocks.push(Block::Thinking {
                signature,
                thinking: &reasoning.text,
                kind: "thinking",
            });
        }
        for opaque in &reasoning.opaque {
            if opaque.get("type").and_then(Value::as_str) == Some("redacted_thinking") {
                blocks.push(Block::Opaque(opaque));
            }
        }
    }
    blocks.extend(content_blocks(&m.content));
    for call in &m.tool_calls {
        let input = match call.parse_arguments() {
            Ok(v @ Value::Object(_)) => v,
            _ => Value::Object(serde_json::Map::new()),
        };
        blocks.push(Block::ToolUse {
            id: &call.id,
            input,
            name: &call.name,
            kind: "tool_use",
        });
    }
    blocks
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
            for options in [
                AnthropicOptions::default(),
                AnthropicOptions {
                    thinking_budget: Some(2048),
                },
            ] {
                for stream in [true, false] {
                    let bytes = request_bytes("claude-sonnet-4-5", request, stream, &options).unwrap();
                    assert_bytes_of_tree(&bytes, &request_body("claude-sonnet-4-5", request, stream, &options));
                }
            }
        }
    }
}
