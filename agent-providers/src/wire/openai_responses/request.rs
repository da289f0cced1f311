//! The Responses request: a borrowed view of the [`ModelRequest`] as `input` items, in wire
//! order, serialized straight into the body.

use std::borrow::Cow;

use agent_core::{ContentPart, ImageSource, Message, ModelRequest, ProviderError, Role};
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::ReasoningSummary;
use super::models::is_reasoning_model;
use super::replay::{Entry, entry};
use crate::wire::kept::KeptItems;

/// Builds the Responses request body as JSON.
///
/// ```
/// use agent_core::{Message, ModelRequest};
/// let request = ModelRequest { messages: vec![Message::user("hi")], ..ModelRequest::default() };
/// let body = agent_providers::openai_responses::request_body("gpt-5", &request, true);
/// assert_eq!(body["store"], false);
/// assert_eq!(body["include"][0], "reasoning.encrypted_content");
/// assert_eq!(body["input"][0]["content"], "hi");
/// ```
pub fn request_body(model: &str, request: &ModelRequest, stream: bool) -> Value {
    request_body_with(model, request, stream, ReasoningSummary::Auto)
}

/// [`request_body`] asking reasoning models for `summary`.
pub(crate) fn request_body_with(model: &str, request: &ModelRequest, stream: bool, summary: ReasoningSummary) -> Value {
    KeptItems::start(request, None, None::<Item<'_>>)
        .and_then(|kept| encode(model, request, stream, summary, kept))
        .ok()
        .and_then(|(body, _)| serde_json::from_slice(&body).ok())
        .unwrap_or(Value::Null)
}

/// Builds the Responses request body as bytes (what the adapter sends; no intermediate JSON
/// tree): [`request_body`]'s structure, fields in wire order.
///
/// The messages the request's [`reuse`](ModelRequest::reuse) vouches for are not encoded
/// again: their items from the previous request are copied (see
/// [`EncodingReuse`](agent_core::EncodingReuse)).
pub fn request_bytes(model: &str, request: &ModelRequest, stream: bool) -> Result<Vec<u8>, ProviderError> {
    request_bytes_with(model, request, stream, ReasoningSummary::Auto)
}

/// [`request_bytes`] asking reasoning models for `summary` (what the adapter sends).
pub(crate) fn request_bytes_with(
    model: &str,
    request: &ModelRequest,
    stream: bool,
    summary: ReasoningSummary,
) -> Result<Vec<u8>, ProviderError> {
    let kept = KeptItems::for_request(request, None, || None::<Item<'_>>)?;
    let (body, kept) = encode(model, request, stream, summary, kept)?;
    kept.keep(request);
    Ok(body)
}

/// The Responses wire format, naming its kept items.
struct Responses;

/// The body, encoding the messages `kept` does not cover, and the items of all of them. Each
/// message's items depend on that message alone (the system prompt goes in `instructions`).
fn encode(
    model: &str,
    request: &ModelRequest,
    stream: bool,
    summary: ReasoningSummary,
    mut kept: KeptItems<Responses>,
) -> Result<(Vec<u8>, KeptItems<Responses>), ProviderError> {
    let mut items = Vec::new();
    for (i, m) in kept.unencoded(request) {
        items_of(m, &mut items);
        for item in items.drain(..) {
            kept.push(&item)?;
        }
        kept.cut_here(i + 1);
    }
    kept.encode_tools(request, || wire_tools(request))?;
    let head = Head {
        model,
        instructions: request.system.as_deref().filter(|s| !s.is_empty()),
    };
    let rest = WireRest::new(model, request, stream, summary, kept.tools(request));
    let body = kept.body(&head, "input", &[] as &[Item<'_>], &rest)?;
    Ok((body, kept))
}

/// The body's fields before `input`.
#[derive(Serialize)]
struct Head<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
}

/// The body's fields after `input`, in wire order.
#[derive(Serialize)]
struct WireRest<'a> {
    /// The tools (never an empty list).
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<ReasoningParams>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<TextParams<'a>>,
    /// Nothing is kept on the server: the transcript carries what the next call needs.
    store: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    include: Vec<&'static str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
}

/// Structured output for a typed turn: `{"format": {"type": "json_schema", ...}}`, usable
/// together with tools.
#[derive(Serialize)]
struct TextParams<'a> {
    format: TextFormat<'a>,
}

#[derive(Serialize)]
struct TextFormat<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    schema: &'a Value,
    strict: bool,
}

#[derive(Serialize)]
struct ReasoningParams {
    summary: &'static str,
}

/// One `input` item. Untagged: each variant spells its own `type`.
#[derive(Serialize)]
#[serde(untagged)]
enum Item<'a> {
    Message(MessageItem<'a>),
    /// A reasoning item replayed as it arrived.
    Reasoning(&'a Value),
    Call(CallItem<'a>),
    Output(OutputItem<'a>),
}

#[derive(Serialize)]
struct MessageItem<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    /// Set on an assistant message that followed a replayed reasoning item (then it has the
    /// output message's shape: `status` and `output_text` parts).
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    role: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<&'static str>,
    content: Content<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<Part<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    InputText { text: Cow<'a, str> },
    InputImage { image_url: String, detail: &'static str },
    OutputText { text: Cow<'a, str>, annotations: [u8; 0] },
}

#[derive(Serialize)]
struct CallItem<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    call_id: &'a str,
    name: &'a str,
    arguments: &'a str,
}

#[derive(Serialize)]
struct OutputItem<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    call_id: &'a str,
    output: Content<'a>,
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
    /// The tools' schemas are not written for strict mode (every property required, no
    /// additional properties), which the API would otherwise assume.
    strict: bool,
}

impl<'a> WireRest<'a> {
    fn new(
        model: &str,
        request: &'a ModelRequest,
        stream: bool,
        summary: ReasoningSummary,
        tools: Option<&'a RawValue>,
    ) -> Self {
        let reasons = is_reasoning_model(model);
        WireRest {
            tools,
            max_output_tokens: request.max_output_tokens,
            // Reasoning models refuse a temperature.
            temperature: request.temperature.filter(|_| !reasons).map(crate::util::json_f32),
            reasoning: summary
                .wire_value()
                .filter(|_| reasons)
                .map(|summary| ReasoningParams { summary }),
            text: request.output_schema.as_ref().map(|o| TextParams {
                format: TextFormat {
                    kind: "json_schema",
                    name: &o.name,
                    schema: &o.schema,
                    strict: o.strict,
                },
            }),
            store: false,
            include: if reasons {
                vec!["reasoning.encrypted_content"]
            } else {
                Vec::new()
            },
            stream,
        }
    }
}

/// A message's `input` items.
fn items_of<'a>(m: &'a Message, input: &mut Vec<Item<'a>>) {
    match m.role {
        Role::System => input.push(message("system", plain_content(m))),
        Role::User => input.push(message("user", user_content(&m.content))),
        Role::Assistant => assistant(m, input),
        Role::Tool => input.push(Item::Output(OutputItem {
            kind: "function_call_output",
            call_id: m.tool_call_id.as_deref().unwrap_or_default(),
            output: user_content(&m.content),
        })),
    }
}

/// The request's tools in wire form.
fn wire_tools(request: &ModelRequest) -> Vec<WireTool<'_>> {
    request
        .tools
        .iter()
        .map(|t| WireTool {
            kind: "function",
            name: &t.name,
            description: &t.description,
            parameters: &t.parameters,
            strict: false,
        })
        .collect()
}

fn message<'a>(role: &'static str, content: Content<'a>) -> Item<'a> {
    Item::Message(MessageItem {
        kind: "message",
        id: None,
        role,
        status: None,
        content,
    })
}

/// The text of a message, borrowed when it is a single part.
fn text_of(m: &Message) -> Cow<'_, str> {
    match m.content.as_slice() {
        [ContentPart::Text { text }] => Cow::Borrowed(text),
        _ => Cow::Owned(m.text()),
    }
}

fn plain_content(m: &Message) -> Content<'_> {
    Content::Text(text_of(m))
}

/// A user message's or tool result's content: a string when it is all text, else
/// `input_text` and `input_image` parts in order.
fn user_content(parts: &[ContentPart]) -> Content<'_> {
    if parts.iter().all(|p| matches!(p, ContentPart::Text { .. })) {
        return Content::Text(match parts {
            [ContentPart::Text { text }] => Cow::Borrowed(text.as_str()),
            _ => Cow::Owned(parts.iter().filter_map(ContentPart::as_text).collect()),
        });
    }
    Content::Parts(
        parts
            .iter()
            .map(|p| match p {
                ContentPart::Text { text } => Part::InputText {
                    text: Cow::Borrowed(text),
                },
                ContentPart::Image { media_type, source } => Part::InputImage {
                    image_url: match source {
                        ImageSource::Base64 { data } => format!("data:{media_type};base64,{data}"),
                        ImageSource::Url { url } => url.clone(),
                    },
                    detail: "auto",
                },
            })
            .collect(),
    )
}

/// An assistant message: its reasoning items and the items that followed them in their
/// original order, with ids (see `replay`), then whatever text and calls are left, without.
fn assistant<'a>(m: &'a Message, input: &mut Vec<Item<'a>>) {
    let text = text_of(m);
    let mut text = (!text.is_empty()).then_some(text);
    let mut sent = vec![false; m.tool_calls.len()];
    let entries = m.reasoning.iter().flat_map(|r| r.opaque.iter()).filter_map(entry);
    for e in entries {
        match e {
            Entry::Reasoning(item) => input.push(Item::Reasoning(item)),
            Entry::Message(id) => {
                if let Some(text) = text.take() {
                    input.push(Item::Message(MessageItem {
                        kind: "message",
                        id: Some(id),
                        role: "assistant",
                        status: Some("completed"),
                        content: Content::Parts(vec![Part::OutputText { text, annotations: [] }]),
                    }));
                }
            }
            Entry::Call { id, call_id } => {
                let found = m
                    .tool_calls
                    .iter()
                    .zip(sent.iter_mut())
                    .find(|(c, s)| !**s && c.id == call_id);
                if let Some((call, sent)) = found {
                    *sent = true;
                    input.push(call_item(call, Some(id)));
                }
            }
        }
    }
    if let Some(text) = text {
        input.push(message("assistant", Content::Text(text)));
    }
    for (call, _) in m.tool_calls.iter().zip(&sent).filter(|(_, s)| !**s) {
        input.push(call_item(call, None));
    }
}

fn call_item<'a>(call: &'a agent_core::ToolCall, id: Option<&'a str>) -> Item<'a> {
    Item::Call(CallItem {
        kind: "function_call",
        id,
        call_id: &call.id,
        name: &call.name,
        arguments: if call.arguments.trim().is_empty() {
            "{}"
        } else {
            &call.arguments
        },
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::wire::test_support::{alone, next_request, requests};

    fn fresh(model: &str, request: &ModelRequest) -> Vec<u8> {
        request_bytes(model, &alone(request), true).unwrap()
    }

    /// Each request of a turn, built from the previous one's kept items, is what encoding it
    /// from scratch gives; a retry sends the same; and the kept items are what is sent.
    #[test]
    fn each_request_of_a_conversation_is_encoded_as_if_from_scratch() {
        for model in ["gpt-4.1", "gpt-5"] {
            let mut request = requests().remove(0);
            assert_eq!(request_bytes(model, &request, true).unwrap(), fresh(model, &request));
            let steps: [(&str, Option<usize>); 4] =
                [("more", None), ("edited", Some(1)), ("after", None), ("all", Some(0))];
            for (step, (text, edit)) in steps.into_iter().enumerate() {
                next_request(&mut request, move |m: &mut Vec<Message>| {
                    if let Some(at) = edit {
                        m[at] = Message::user(format!("{text} in place"));
                    }
                    m.push(Message::assistant_with_tools(
                        text,
                        vec![agent_core::ToolCall::new(
                            format!("c{step}"),
                            "now",
                            &serde_json::json!({}),
                        )],
                    ));
                    m.push(Message::tool_result(
                        format!("c{step}"),
                        "now",
                        format!("\"{text}\"\n"),
                        false,
                    ));
                    edit
                });
                let bytes = request_bytes(model, &request, true).unwrap();
                assert_eq!(
                    String::from_utf8_lossy(&bytes),
                    String::from_utf8_lossy(&fresh(model, &request)),
                    "{model}, step {step}"
                );
                assert_eq!(
                    request_bytes(model, &request, true).unwrap(),
                    bytes,
                    "retry of step {step}"
                );
            }
        }
    }

    #[test]
    fn vouched_messages_are_copied_and_only_new_ones_encoded() {
        let mut request = requests().remove(0);
        request_bytes("gpt-4.1", &request, true).unwrap();
        KeptItems::<Responses>::trace_first(&request, br#"{"type":"message","role":"user","content":"TRACER"}"#);
        next_request(&mut request, |m: &mut Vec<Message>| {
            m.push(Message::user("new"));
            None
        });
        let body = String::from_utf8(request_bytes("gpt-4.1", &request, true).unwrap()).unwrap();
        assert!(body.contains("TRACER"), "the kept items are sent: {body}");
        assert!(body.contains(r#""content":"new""#), "{body}");
    }

    #[test]
    fn request_bytes_are_request_body() {
        for request in &requests() {
            for (model, stream) in [("gpt-4.1", true), ("gpt-5", false)] {
                let bytes = request_bytes(model, request, stream).unwrap();
                let value: Value = serde_json::from_slice(&bytes).unwrap();
                assert_eq!(value, request_body(model, request, stream));
            }
        }
    }
}
