//! The Chat Completions request: a borrowed view of the [`ModelRequest`] in wire order,
//! serialized straight into the body.
//!
//! Within a turn each request repeats the previous one's messages: their encoding is kept in
//! the request's [`EncodingReuse`](agent_core::EncodingReuse) memo, and only the messages
//! added since are encoded (see [`KeptItems`]).

use std::borrow::Cow;

use agent_core::{ContentPart, ImageSource, Message, ModelRequest, ProviderError, Role};
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::wire::kept::KeptItems;

/// Builds the Chat Completions request body as JSON.
pub fn request_body(model: &str, request: &ModelRequest, stream: bool) -> Value {
    KeptItems::start(request, system(request), system_message(request))
        .and_then(|kept| encode(model, request, stream, kept))
        .ok()
        .and_then(|(body, _)| serde_json::from_slice(&body).ok())
        .unwrap_or(Value::Null)
}

/// Builds the Chat Completions request body as bytes (what the adapter sends; no
/// intermediate JSON tree): [`request_body`]'s structure, fields in wire order.
///
/// The messages the request's [`reuse`](ModelRequest::reuse) vouches for are not encoded
/// again: their encoding from the previous request is copied, and the memo of this one is
/// left for the next.
pub fn request_bytes(model: &str, request: &ModelRequest, stream: bool) -> Result<Vec<u8>, ProviderError> {
    // The system prompt is the first item, which every later one follows.
    let kept = KeptItems::for_request(request, system(request), || system_message(request))?;
    let (body, kept) = encode(model, request, stream, kept)?;
    kept.keep(request);
    Ok(body)
}

/// The Chat Completions wire format, naming its kept items.
struct Chat;

/// The body, encoding the messages `kept` does not cover, and the encoding of all of them.
fn encode(
    model: &str,
    request: &ModelRequest,
    stream: bool,
    mut kept: KeptItems<Chat>,
) -> Result<(Vec<u8>, KeptItems<Chat>), ProviderError> {
    let mut renderer = Renderer::default();
    let mut wire = Vec::new();
    for (i, m) in kept.unencoded(request) {
        renderer.push(m, &mut wire);
        for item in wire.drain(..) {
            kept.push(&item)?;
        }
        if renderer.is_idle() {
            kept.cut_here(i + 1);
        }
    }
    // Images of the last results go in a message of their own after them: it is sent, but not
    // kept, since later results of the same run would join it.
    renderer.finish(&mut wire);
    kept.encode_tools(request, || wire_tools(request))?;
    let rest = WireRest::new(request, stream, kept.tools(request));
    let body = kept.body(&Head { model }, "messages", &wire, &rest)?;
    Ok((body, kept))
}

/// The system prompt, unless empty.
fn system(request: &ModelRequest) -> Option<&str> {
    request.system.as_deref().filter(|s| !s.is_empty())
}

fn system_message(request: &ModelRequest) -> Option<WireMessage<'_>> {
    system(request).map(|system| WireMessage::System {
        content: Cow::Borrowed(system),
    })
}

/// The body's fields before the messages.
#[derive(Serialize)]
struct Head<'a> {
    model: &'a str,
}

/// The body's fields after the messages, in wire order.
#[derive(Serialize)]
struct WireRest<'a> {
    /// The tools (never an empty list).
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
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

impl<'a> WireRest<'a> {
    fn new(request: &'a ModelRequest, stream: bool, tools: Option<&'a RawValue>) -> Self {
        WireRest {
            tools,
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

/// The request's tools in wire form; `None` when there are none (the field is left out).
fn wire_tools(request: &ModelRequest) -> Option<Vec<WireTool<'_>>> {
    if request.tools.is_empty() {
        return None;
    }
    Some(
        request
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
    )
}

/// Turns the request's messages, in order, into wire messages.
#[derive(Default)]
struct Renderer<'a> {
    tool_images: ToolImages<'a>,
}

impl<'a> Renderer<'a> {
    /// Adds `m`'s wire message to `out`, after the images of the tool results before it when
    /// it ends their run.
    fn push(&mut self, m: &'a Message, out: &mut Vec<WireMessage<'a>>) {
        if m.role == Role::Tool {
            self.tool_images.add(m);
        } else {
            self.tool_images.flush(out);
        }
        out.push(wire_message(m));
    }

    /// Whether no image waits for the end of its run: what follows is independent of what
    /// came before.
    fn is_idle(&self) -> bool {
        self.tool_images.parts.is_empty()
    }

    /// Adds the images still waiting to `out`.
    fn finish(&mut self, out: &mut Vec<WireMessage<'a>>) {
        self.tool_images.flush(out);
    }
}

fn wire_message(m: &Message) -> WireMessage<'_> {
    match m.role {
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
    use std::sync::Arc;

    use agent_core::ToolSchema;

    use super::*;
    use crate::wire::test_support::{
        Grow, alone, assert_unvouched_is_fresh, next_request, requests, result_with_image,
    };

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

    /// The body as encoded from scratch, with no memo.
    fn fresh(request: &ModelRequest) -> Vec<u8> {
        request_bytes("gpt-4.1", &alone(request), true).unwrap()
    }

    #[test]
    fn each_request_of_a_conversation_is_encoded_as_if_from_scratch() {
        let mut request = requests().remove(0);
        let grows: Vec<Box<Grow>> = vec![
            // Plain steps.
            Box::new(|m| {
                m.push(Message::assistant_with_tools(
                    "",
                    vec![agent_core::ToolCall::new("c1", "shot", &serde_json::json!({}))],
                ));
                None
            }),
            Box::new(|m| {
                m.push(Message::tool_result("c1", "shot", "plain \u{2028} text", false));
                None
            }),
            // A run of results with images: they go in one message after the run, which the
            // next request continues.
            Box::new(|m| {
                m.push(result_with_image("c2", "a"));
                None
            }),
            Box::new(|m| {
                m.push(result_with_image("c3", "b"));
                None
            }),
            Box::new(|m| {
                m.push(Message::assistant("seen both"));
                None
            }),
            // An older image replaced by a note (the loop keeps only the newest few).
            Box::new(|m| {
                let index = m.iter().position(|x| x.tool_call_id.as_deref() == Some("c2")).unwrap();
                m[index].content[1] = ContentPart::text("[image omitted]");
                m.push(Message::user("and now?"));
                Some(index)
            }),
            Box::new(|m| {
                m.push(Message::assistant("done"));
                None
            }),
        ];
        assert_eq!(request_bytes("gpt-4.1", &request, true).unwrap(), fresh(&request));
        for (step, grow) in grows.iter().enumerate() {
            next_request(&mut request, grow);
            let bytes = request_bytes("gpt-4.1", &request, true).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&bytes),
                String::from_utf8_lossy(&fresh(&request)),
                "step {step}"
            );
            // A retry of the same request reuses all of it, and sends the same.
            assert_eq!(
                request_bytes("gpt-4.1", &request, true).unwrap(),
                bytes,
                "retry of step {step}"
            );
        }
    }

    /// Replaces the kept encoding of the request's first message with a tracer.
    fn trace(request: &ModelRequest) {
        KeptItems::<Chat>::trace_first(request, br#",{"role":"user","content":"TRACER"}"#);
    }

    #[test]
    fn vouched_messages_are_copied_and_only_new_ones_encoded() {
        let mut request = requests().remove(0);
        request_bytes("gpt-4.1", &request, true).unwrap();
        trace(&request);
        next_request(&mut request, |m| {
            m.push(Message::user("new"));
            None
        });
        let body = String::from_utf8(request_bytes("gpt-4.1", &request, true).unwrap()).unwrap();
        assert!(body.contains("TRACER"), "the kept encoding is sent: {body}");
        assert!(body.contains(r#"{"role":"user","content":"new"}"#));
        // Not vouched for: encoded again.
        assert_unvouched_is_fresh(&mut request, Message::user("newer"), trace, |r| {
            request_bytes("gpt-4.1", r, true).unwrap()
        });
    }

    #[test]
    fn a_memo_is_not_reused_where_it_no_longer_applies() {
        let mut request = requests().remove(0);
        request_bytes("gpt-4.1", &request, true).unwrap();
        // Another system prompt: nothing of the memo applies.
        next_request(&mut request, |m| {
            m.push(Message::user("more"));
            None
        });
        request.system = Some("Now be verbose.".into());
        assert_eq!(request_bytes("gpt-4.1", &request, true).unwrap(), fresh(&request));
        // A request built but never sent (over budget): the one after it vouches for its
        // messages, which the memo (of the request before) does not describe.
        next_request(&mut request, |m| {
            m[0] = Message::user("edited where the unsent request said so");
            m.push(Message::user("unsent"));
            Some(0)
        });
        next_request(&mut request, |m| {
            m.push(Message::user("after"));
            None
        });
        assert_eq!(request_bytes("gpt-4.1", &request, true).unwrap(), fresh(&request));
        // Another tool list: encoded again (the kept encoding is of the list it was made from).
        next_request(&mut request, |m| {
            m.push(Message::user("with other tools"));
            None
        });
        request.tools = Arc::new(vec![ToolSchema {
            name: "other".into(),
            description: "Another \"tool\".".into(),
            parameters: serde_json::json!({"type": "object"}),
        }]);
        assert_eq!(request_bytes("gpt-4.1", &request, true).unwrap(), fresh(&request));
        next_request(&mut request, |_| None);
        request.tools = Arc::new(Vec::new());
        assert_eq!(request_bytes("gpt-4.1", &request, true).unwrap(), fresh(&request));
        // Vouching for nothing re-encodes everything, even right after a request.
        next_request(&mut request, |m| {
            m[1] = Message::user("edited in place");
            Some(0)
        });
        assert_eq!(request_bytes("gpt-4.1", &request, true).unwrap(), fresh(&request));
    }
}
