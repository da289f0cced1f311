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
    thinking.reasoning = Some(Reasoning {
        text: "thinking".into(),
        signature: None,
        opaque: vec![
            json!({"type": "reasoning.text", "text": "t\u{1}", "index": 0, "n": 1.25}),
            json!({"type": "redacted_thinking", "data": "x"}),
        ],
    });
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
