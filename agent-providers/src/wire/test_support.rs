//! Requests shared by the wire modules' tests.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use agent_core::{ContentPart, ImageSource, Message, ModelRequest, Reasoning, ToolCall, ToolSchema};
use serde_json::json;

/// Everything the wire carries, with strings that need escapes.
pub(crate) fn rich_request(temperature: Option<f32>, max_output_tokens: Option<u32>) -> ModelRequest {
    let mut thinking = Message::assistant_with_tools(
        "Let me \"check\" both.\n",
        vec![
            ToolCall {
                id: "call_1".into(),
                name: "get_weather".into(),
                arguments: r#"{"city":"Paris\\n"}"#.into(),
                signature: Some("sig".into()),
            },
            ToolCall::new("call_2", "now", &json!({})),
            ToolCall {
                id: "call_3".into(),
                name: "blank".into(),
                arguments: "  ".into(),
                signature: None,
            },
        ],
    );
    thinking.reasoning = Some(Box::new(Reasoning {
        text: "thinking".into(),
        signature: None,
        opaque: vec![
            json!({"type": "reasoning.text", "text": "t\u{1}", "index": 0, "n": 1.25}),
            json!({"type": "redacted_thinking", "data": "x"}),
        ],
    }));
    let mut system_message = Message::system("Be brief.");
    system_message.content.push(ContentPart::text(" Two parts."));
    ModelRequest {
        system: Some("You are a \u{7f}weather\u{2028} assistant 🌍.".into()),
        messages: vec![
            system_message,
            Message::user_parts(vec![
                ContentPart::text("What's this?\t"),
                ContentPart::Image {
                    media_type: "image/png".into(),
                    source: ImageSource::Base64 { data: "iVBO+/=".into() },
                },
                ContentPart::Image {
                    media_type: "image/jpeg".into(),
                    source: ImageSource::Url {
                        url: "https://example.invalid/a\"b.jpg".into(),
                    },
                },
            ]),
            Message::user_parts(vec![ContentPart::text("two "), ContentPart::text("texts")]),
            thinking,
            Message::tool_result("call_1", "get_weather", r#"{"temp_c":21}"#, false),
            Message::tool_result("call_2", "now", "clock \\ unavailable", true),
            Message::assistant(""),
            Message::assistant("It is 21 °C."),
            Message::user("Thanks!"),
        ],
        tools: Arc::new(vec![
            ToolSchema {
                name: "get_weather".into(),
                description: "Current \"weather\".".into(),
                parameters: json!({
                    "type": "object",
                    "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "default": 1.5}},
                    "required": ["city"],
                    "additionalProperties": false
                }),
            },
            ToolSchema {
                name: "now".into(),
                description: String::new(),
                parameters: json!({"type": "object", "properties": {}}),
            },
        ]),
        max_output_tokens,
        temperature,
        output_schema: None,
        reuse: Default::default(),
    }
}

/// Rich requests with and without limits, an empty one and one with an empty system prompt.
pub(crate) fn requests() -> Vec<ModelRequest> {
    vec![
        rich_request(Some(0.2), Some(1024)),
        rich_request(None, None),
        rich_request(Some(f32::NAN), Some(u32::MAX)),
        ModelRequest::default(),
        ModelRequest {
            system: Some(String::new()),
            messages: vec![Message::user("go")],
            ..ModelRequest::default()
        },
    ]
}

/// Bytes whose keys are in sorted order (what serializing a `serde_json::Value` tree gives)
/// and that parse to `tree`: the bytes a tree-built body would have been.
pub(crate) fn assert_bytes_of_tree(bytes: &[u8], tree: &serde_json::Value) {
    let parsed: serde_json::Value = serde_json::from_slice(bytes).unwrap();
    assert_eq!(
        String::from_utf8_lossy(bytes),
        String::from_utf8(serde_json::to_vec(&parsed).unwrap()).unwrap()
    );
    assert_eq!(&parsed, tree);
}

/// `request` with an encoding memo of its own: what encoding it from scratch sends.
pub(crate) fn alone(request: &ModelRequest) -> ModelRequest {
    ModelRequest {
        reuse: agent_core::EncodingReuse::new(),
        ..request.clone()
    }
}

/// Adds messages to a request, and may edit earlier ones, saying from which index.
pub(crate) type Grow = dyn Fn(&mut Vec<Message>) -> Option<usize>;

/// Makes `request` the next request of its turn, the way the loop does: vouching for the
/// messages it had, then `grow` adds (and maybe edits) some.
pub(crate) fn next_request(request: &mut ModelRequest, grow: impl FnOnce(&mut Vec<Message>) -> Option<usize>) {
    let kept = request.messages.len();
    request.reuse = request.reuse.next_request(kept);
    if let Some(edited) = grow(&mut request.messages) {
        request.reuse.changed_from(edited);
    }
}

/// The next request of `request`'s turn adds `added` and vouches for nothing: after a tracer
/// was put in the kept encoding (`trace`), what `send` sends is the body from scratch.
pub(crate) fn assert_unvouched_is_fresh(
    request: &mut ModelRequest,
    added: Message,
    trace: impl Fn(&ModelRequest),
    send: impl Fn(&ModelRequest) -> Vec<u8>,
) {
    trace(request);
    next_request(request, |m| {
        m.push(added);
        Some(0)
    });
    let body = send(request);
    assert!(!String::from_utf8_lossy(&body).contains("TRACER"));
    assert_eq!(body, send(&alone(request)));
}

/// An assistant message with one call of `shot`.
pub(crate) fn call(id: &str) -> Message {
    Message::assistant_with_tools("", vec![ToolCall::new(id, "shot", &json!({"n": id}))])
}

/// A result of `shot` with an image.
pub(crate) fn result_with_image(id: &str, tag: &str) -> Message {
    let mut result = Message::tool_result(id, "shot", format!("shot \"{tag}\""), false);
    result.content.push(ContentPart::Image {
        media_type: "image/png".into(),
        source: ImageSource::Base64 { data: tag.into() },
    });
    result
}

/// The steps of a turn: calls and their results (runs of several results merge into one
/// user message), images, a system message and an assistant message with nothing to send in
/// the middle, an older message edited (the loop vouches for what comes before it).
pub(crate) fn turn_steps() -> Vec<Box<Grow>> {
    vec![
        Box::new(|m| {
            m.push(call("c1"));
            None
        }),
        Box::new(|m| {
            m.push(Message::tool_result("c1", "shot", "plain \u{2028} text", false));
            None
        }),
        Box::new(|m| {
            let mut two = Message::assistant_with_tools(
                "Both \"at once\".",
                vec![
                    ToolCall::new("c2", "shot", &json!({})),
                    ToolCall::new("c3", "shot", &json!({"deep": [1, {"x": null}]})),
                ],
            );
            two.reasoning = Some(Box::new(Reasoning {
                text: "think".into(),
                signature: Some("sig".into()),
                opaque: vec![json!({"type": "redacted_thinking", "data": "r"})],
            }));
            m.push(two);
            None
        }),
        // A run of results, one by one: each joins the user message of the one before.
        Box::new(|m| {
            m.push(result_with_image("c2", "a"));
            None
        }),
        Box::new(|m| {
            m.push(Message::tool_result("c3", "shot", "failed \\ here", true));
            None
        }),
        // Skipped on the wire: a system message and unsigned thinking alone.
        Box::new(|m| {
            m.push(Message::system("Mind the \"time\"."));
            let mut unsigned = Message::assistant("");
            unsigned.reasoning = Some(Box::new(Reasoning {
                text: "quiet".into(),
                signature: None,
                opaque: Vec::new(),
            }));
            m.push(unsigned);
            m.push(Message::user("go on"));
            None
        }),
        Box::new(|m| {
            m.push(call("c4"));
            m.push(result_with_image("c4", "b"));
            None
        }),
        // An older image turned into a note: the loop vouches for what comes before it.
        Box::new(|m| {
            let index = m.iter().position(|x| x.tool_call_id.as_deref() == Some("c2")).unwrap();
            m[index].content[1] = ContentPart::text("[image omitted]");
            m.push(Message::assistant("done"));
            Some(index)
        }),
        Box::new(|m| {
            m.push(Message::user("thanks"));
            None
        }),
    ]
}

/// A user message, then `calls` calls of `shot` (`c1`, `c2`, ...) each with its result.
pub(crate) fn calls_and_results(calls: usize) -> Vec<Message> {
    let mut messages = vec![Message::user("first")];
    for n in 1..=calls {
        let id = format!("c{n}");
        messages.push(call(&id));
        messages.push(Message::tool_result(&id, "shot", format!("r{n}"), false));
    }
    messages
}
