//! The Messages request: a borrowed view of the [`ModelRequest`] serialized straight into the
//! body. Fields are declared in alphabetical order, the order the bytes had when the body was
//! built as a JSON tree first.
//!
//! Within a turn each request repeats the previous one's messages: their encoding is kept in
//! the request's [`EncodingReuse`](agent_core::EncodingReuse) memo, and only the messages
//! added since are encoded (see [`KeptItems`]). Two things move at the end of the
//! conversation and are encoded again each time: the newest wire message (the next agent
//! message of its role joins it: consecutive tool results are one user message) and, with
//! [`CacheMode::Auto`], the message that carries the previous call's breakpoint.

use agent_core::{ContentPart, ImageSource, Message, ModelRequest, ProviderError, Role, with_answer_tool};
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::{AnthropicOptions, CacheMode, DEFAULT_MAX_TOKENS};
use crate::wire::kept::KeptItems;
use crate::wire::merged;

/// Builds the Messages request body.
///
/// A typed turn ([`ModelRequest::output_schema`]) is answered through the `final_answer` tool
/// ([`with_answer_tool`]): the Messages API's structured-output mode is in beta for some
/// models only, while a tool input schema works with every model and beside the agent's own
/// tools. Without thinking, `tool_choice: any` makes every response a tool call (a real tool
/// or the answer); the API refuses forced tool use together with thinking, so with thinking the
/// choice stays `auto` and the system prompt asks for the tool (an answer written as text is
/// then checked the same way).
pub fn request_body(model: &str, request: &ModelRequest, stream: bool, options: &AnthropicOptions) -> Value {
    let request = with_answer_tool(request);
    let limit = keep_limit(&request.messages, options.cache == CacheMode::Auto);
    KeptItems::start(&request, Some(cache_key(options)), None::<()>)
        .and_then(|kept| encode(model, &request, stream, options, kept, limit))
        .ok()
        .and_then(|(body, _)| serde_json::from_slice(&body).ok())
        .unwrap_or(Value::Null)
}

/// Builds the Messages request body as bytes (what the adapter sends; no intermediate JSON
/// tree). The messages the request's [`reuse`](ModelRequest::reuse) vouches for are not
/// encoded again where their encoding cannot have changed; the memo of this request is left
/// for the next.
pub fn request_bytes(
    model: &str,
    request: &ModelRequest,
    stream: bool,
    options: &AnthropicOptions,
) -> Result<Vec<u8>, ProviderError> {
    let request = with_answer_tool(request);
    let key = Some(cache_key(options));
    let mut kept = KeptItems::for_request(&request, key, || None::<()>)?;
    // When the roles still change where the kept encoding ends, the limit is never before its
    // end; cut back anyway, so that a kept message can never lack a breakpoint it should carry.
    let limit = keep_limit(&request.messages, options.cache == CacheMode::Auto);
    if !merged::fit(&mut kept, &request.messages, limit, wire_role) {
        kept = KeptItems::start(&request, key, None::<()>)?;
    }
    let (body, kept) = encode(model, &request, stream, options, kept, limit)?;
    kept.keep(&request);
    Ok(body)
}

/// The Messages wire format, naming its kept items.
struct Messages;

/// What the kept encoding depends on besides the messages: the cache mode, which decides the
/// tools' breakpoint (a fallback route to another Anthropic provider may have another).
fn cache_key(options: &AnthropicOptions) -> &'static str {
    match options.cache {
        CacheMode::Auto => "auto",
        CacheMode::Static => "static",
        CacheMode::Off => "off",
    }
}

/// The body, encoding the messages `kept` does not cover, and the encoding of the ones before
/// `limit` ([`keep_limit`]), which a later request may continue from.
fn encode(
    model: &str,
    request: &ModelRequest,
    stream: bool,
    options: &AnthropicOptions,
    mut kept: KeptItems<Messages>,
    limit: usize,
) -> Result<(Vec<u8>, KeptItems<Messages>), ProviderError> {
    let auto = options.cache == CacheMode::Auto;
    let wire = merged::merge(&mut kept, request, |_, m| wire_blocks(m))
        .into_iter()
        .map(|(start, role, content)| (start, WireMessage { content, role }))
        .collect();
    // The newest message and the one with the previous call's breakpoint start at or after
    // `limit`: they are sent, not kept.
    let mut sent = merged::keep_before(&mut kept, wire, limit)?;
    if auto {
        mark_messages(&mut sent);
    }
    let caching = options.cache != CacheMode::Off;
    kept.encode_tools(request, || wire_tools(request, caching))?;
    let thinking = options.thinking_budget.map(|budget| Thinking {
        budget_tokens: budget,
        kind: "enabled",
    });
    let rest = Rest {
        model,
        stream,
        system: system(request, caching),
        // The API refuses a temperature together with thinking.
        temperature: request
            .temperature
            .filter(|_| thinking.is_none())
            .map(crate::util::json_f32),
        tool_choice: (request.output_schema.is_some() && thinking.is_none()).then_some(ToolChoice { kind: "any" }),
        thinking,
        tools: kept.tools(request),
    };
    let head = Head {
        max_tokens: request.max_output_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
    };
    let body = kept.body(&head, "messages", &sent, &rest)?;
    Ok((body, kept))
}

/// The role of the wire message `m` goes into, `None` for a message sent elsewhere (a system
/// message, in the system prompt) or not at all (an assistant message with nothing to send).
fn wire_role(m: &Message) -> Option<&'static str> {
    match m.role {
        Role::System => None,
        Role::User | Role::Tool => Some("user"),
        Role::Assistant => sends_anything(m).then_some("assistant"),
    }
}

/// Whether an assistant message has a block to send: exactly when [`assistant_blocks`] makes
/// one, without making them.
fn sends_anything(m: &Message) -> bool {
    !m.tool_calls.is_empty()
        || m.content.iter().any(|p| p.as_text() != Some(""))
        || m.reasoning
            .as_ref()
            .is_some_and(|r| r.signature.is_some() || r.opaque.iter().any(is_redacted))
}

/// Redacted thinking, which goes back as it came.
fn is_redacted(opaque: &Value) -> bool {
    opaque.get("type").and_then(Value::as_str) == Some("redacted_thinking")
}

/// Where a kept encoding must end: at the start of the newest wire message (later messages of
/// its role join it) and, with automatic breakpoints, of the one before the newest assistant
/// message (it carries the previous call's breakpoint, which moves on with the next call).
/// Looks back from the end only as far as those.
fn keep_limit(messages: &[Message], auto: bool) -> usize {
    let newest = merged::newest_start(messages, wire_role);
    if !auto {
        return newest;
    }
    // Back past the newest assistant wire message: the message before it.
    let mut before_answer = merged::newest_first(messages, wire_role)
        .skip_while(|(_, r)| *r != "assistant")
        .skip_while(|(_, r)| *r == "assistant");
    match before_answer.next() {
        Some((before, role)) => newest.min(merged::start_of(messages, before, role, wire_role)),
        None => newest,
    }
}

/// The body's fields before the messages.
#[derive(Serialize)]
struct Head {
    max_tokens: u32,
}

/// The body's fields after the messages, in alphabetical order.
#[derive(Serialize)]
struct Rest<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<System>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Thinking>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<ToolChoice>,
    /// The tools (never an empty list).
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
}

/// The system prompt and the conversation's system messages, with a breakpoint when caching.
fn system(request: &ModelRequest, caching: bool) -> Option<System> {
    let text = merged::system_text(request)?;
    Some(if caching {
        System::Blocks([SystemBlock {
            cache_control: EPHEMERAL,
            text,
            kind: "text",
        }])
    } else {
        System::Text(text)
    })
}

/// The tools, the last one with a breakpoint when caching (encoded only when there are tools).
fn wire_tools(request: &ModelRequest, caching: bool) -> Vec<WireTool<'_>> {
    request
        .tools
        .iter()
        .enumerate()
        .map(|(i, t)| WireTool {
            cache_control: (caching && i + 1 == request.tools.len()).then_some(EPHEMERAL),
            description: &t.description,
            input_schema: &t.parameters,
            name: &t.name,
        })
        .collect()
}

/// `{"type": "any"}`: the response must call one of the tools (for a typed turn, so that the
/// answer comes through the answer tool).
#[derive(Serialize)]
struct ToolChoice {
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct Thinking {
    budget_tokens: u32,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// The system prompt: a string, or one text block when it carries a cache breakpoint.
#[derive(Serialize)]
#[serde(untagged)]
enum System {
    Text(String),
    Blocks([SystemBlock; 1]),
}

#[derive(Serialize)]
struct SystemBlock {
    cache_control: CacheControl,
    text: String,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// A prompt-cache breakpoint (`{"type": "ephemeral"}`: the default five-minute lifetime).
#[derive(Serialize, Clone, Copy)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

const EPHEMERAL: CacheControl = CacheControl { kind: "ephemeral" };

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
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
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
        text: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    Image {
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
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
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
        id: &'a str,
        input: Value,
        name: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    ToolResult {
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
        content: ToolResultContent<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
        tool_use_id: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
}

impl Block<'_> {
    /// Puts a cache breakpoint on this block; false for a block that cannot carry one
    /// (thinking and redacted thinking).
    fn mark(&mut self) -> bool {
        match self {
            Block::Text { cache_control, .. }
            | Block::Image { cache_control, .. }
            | Block::ToolUse { cache_control, .. }
            | Block::ToolResult { cache_control, .. } => {
                *cache_control = Some(EPHEMERAL);
                true
            }
            Block::Thinking { .. } | Block::Opaque(_) => false,
        }
    }
}

/// Puts a cache breakpoint on the last block of `message` that can carry one.
fn mark_last(message: &mut WireMessage<'_>) {
    for block in message.content.iter_mut().rev() {
        if block.mark() {
            return;
        }
    }
}

/// The moving breakpoints of [`CacheMode::Auto`]: the newest message, so the next call reads
/// everything sent so far from the cache, and the message before the newest assistant message,
/// which is where the previous call of the loop put its own (that call ended with it), so its
/// cache entry is found even when more than 20 blocks were added since (the API looks back
/// at most 20 blocks from a breakpoint). With the tools and the system prompt that makes at
/// most 4, the API's limit.
fn mark_messages(messages: &mut [WireMessage<'_>]) {
    if let Some(last) = messages.last_mut() {
        mark_last(last);
    }
    if let Some(answer) = messages.iter().rposition(|m| m.role == "assistant")
        && let Some(before) = answer.checked_sub(1)
    {
        mark_last(&mut messages[before]);
    }
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

/// The wire message role and blocks of `m`; `None` for a message sent elsewhere or not at
/// all (see [`wire_role`]).
fn wire_blocks(m: &Message) -> Option<(&'static str, Vec<Block<'_>>)> {
    match m.role {
        Role::System => None,
        Role::User => Some(("user", content_blocks(&m.content))),
        Role::Assistant => Some(assistant_blocks(m))
            .filter(|b| !b.is_empty())
            .map(|b| ("assistant", b)),
        Role::Tool => {
            let has_image = m.content.iter().any(|p| matches!(p, ContentPart::Image { .. }));
            let content = if has_image {
                ToolResultContent::Blocks(content_blocks(&m.content))
            } else {
                ToolResultContent::Text(m.text())
            };
            let block = Block::ToolResult {
                cache_control: None,
                content,
                is_error: m.is_error.then_some(true),
                tool_use_id: m.tool_call_id.as_deref().unwrap_or_default(),
                kind: "tool_result",
            };
            Some(("user", vec![block]))
        }
    }
}

fn content_blocks(parts: &[ContentPart]) -> Vec<Block<'_>> {
    parts
        .iter()
        .filter(|p| p.as_text() != Some(""))
        .map(|p| match p {
            ContentPart::Text { text } => Block::Text {
                cache_control: None,
                text,
                kind: "text",
            },
            ContentPart::Image { media_type, source } => Block::Image {
                cache_control: None,
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
        for opaque in reasoning.opaque.iter().filter(|o| is_redacted(o)) {
            blocks.push(Block::Opaque(opaque));
        }
    }
    blocks.extend(content_blocks(&m.content));
    for call in &m.tool_calls {
        let input = match call.parse_arguments() {
            Ok(v @ Value::Object(_)) => v,
            _ => Value::Object(serde_json::Map::new()),
        };
        blocks.push(Block::ToolUse {
            cache_control: None,
            id: &call.id,
            input,
            name: &call.name,
            kind: "tool_use",
        });
    }
    blocks
}

#[cfg(test)]
mod reuse_tests;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::wire::test_support::{assert_bytes_of_tree, requests, rich_request};

    /// The view's fields are in the order a `Value` tree sorts them, so the bytes sent are the
    /// ones the tree-built body had, and they parse to [`request_body`].
    #[test]
    fn request_bytes_are_the_sorted_tree() {
        for request in &requests() {
            for options in [
                AnthropicOptions::default(),
                AnthropicOptions {
                    thinking_budget: Some(2048),
                    cache: CacheMode::Static,
                },
                AnthropicOptions {
                    thinking_budget: None,
                    cache: CacheMode::Off,
                },
            ] {
                for stream in [true, false] {
                    let bytes = request_bytes("claude-sonnet-4-5", request, stream, &options).unwrap();
                    assert_bytes_of_tree(&bytes, &request_body("claude-sonnet-4-5", request, stream, &options));
                }
            }
        }
    }

    fn with_cache(cache: CacheMode) -> AnthropicOptions {
        AnthropicOptions {
            cache,
            ..AnthropicOptions::default()
        }
    }

    /// Where the breakpoints are: `tools[i]`, `system`, `messages[i].content[j]`.
    fn breakpoints(body: &Value) -> Vec<String> {
        let mut out = Vec::new();
        for (i, tool) in body["tools"].as_array().into_iter().flatten().enumerate() {
            if tool.get("cache_control").is_some() {
                out.push(format!("tools[{i}]"));
            }
        }
        if body["system"][0].get("cache_control").is_some() {
            out.push("system".to_owned());
        }
        for (i, m) in body["messages"].as_array().into_iter().flatten().enumerate() {
            for (j, block) in m["content"].as_array().into_iter().flatten().enumerate() {
                if let Some(marker) = block.get("cache_control") {
                    assert_eq!(marker, &serde_json::json!({"type": "ephemeral"}));
                    out.push(format!("messages[{i}].content[{j}]"));
                }
            }
        }
        out
    }

    #[test]
    fn auto_marks_tools_system_the_newest_message_and_the_previous_calls_breakpoint() {
        let request = rich_request(None, None);
        let body = request_body("m", &request, true, &AnthropicOptions::default());
        // Wire messages: user (2 merged), assistant (thinking + tool use), user (results),
        // assistant, user. The previous call ended with the tool results.
        assert_eq!(
            breakpoints(&body),
            ["tools[1]", "system", "messages[2].content[1]", "messages[4].content[0]"]
        );
        assert_eq!(body["system"][0]["type"], "text");
        assert!(
            body["system"][0]["text"]
                .as_str()
                .unwrap()
                .ends_with("🌍.\n\nBe brief. Two parts.")
        );
    }

    #[test]
    fn static_marks_only_tools_and_system_and_off_marks_nothing() {
        let request = rich_request(None, None);
        let body = request_body("m", &request, true, &with_cache(CacheMode::Static));
        assert_eq!(breakpoints(&body), ["tools[1]", "system"]);
        let off = request_body("m", &request, true, &with_cache(CacheMode::Off));
        assert!(breakpoints(&off).is_empty());
        assert!(!off.to_string().contains("cache_control"));
        assert!(off["system"].is_string());
    }

    #[test]
    fn thinking_blocks_never_carry_a_breakpoint() {
        // The newest message is an assistant message that ends with thinking: the breakpoint
        // goes on its last block that can carry one.
        let mut answer = Message::assistant("Sure.");
        answer.reasoning = Some(Box::new(agent_core::Reasoning {
            text: "hm".into(),
            signature: Some("sig".into()),
            opaque: vec![serde_json::json!({"type": "redacted_thinking", "data": "x"})],
        }));
        answer.content.clear();
        let request = ModelRequest {
            messages: vec![Message::user("hi"), answer],
            ..ModelRequest::default()
        };
        let body = request_body("m", &request, false, &AnthropicOptions::default());
        // Only thinking in the newest message: no breakpoint there; the message before it has one.
        assert_eq!(breakpoints(&body), ["messages[0].content[0]"]);
        assert_eq!(body["messages"][1]["content"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn never_more_than_four_breakpoints() {
        for request in &requests() {
            for cache in [CacheMode::Auto, CacheMode::Static, CacheMode::Off] {
                let body = request_body("m", request, true, &with_cache(cache));
                assert!(breakpoints(&body).len() <= 4);
            }
        }
        // No system prompt, no tools, one message: one breakpoint, the system field absent.
        let body = request_body("m", &requests()[4], true, &AnthropicOptions::default());
        assert_eq!(breakpoints(&body), ["messages[0].content[0]"]);
        assert!(body.get("system").is_none());
    }
}
