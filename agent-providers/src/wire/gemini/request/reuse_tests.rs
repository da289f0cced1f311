//! A turn's requests with kept encodings send exactly what encoding each from scratch sends.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use agent_core::{Message, ModelRequest, ToolSchema};
use serde_json::json;

use super::{Contents, KeptItems, request_bytes};
use crate::wire::gemini::GeminiOptions;
use crate::wire::test_support::{
    alone, assert_unvouched_is_fresh, call, calls_and_results, next_request, requests, turn_steps,
};

const OPTIONS: [GeminiOptions; 2] = [
    GeminiOptions {
        include_thoughts: false,
    },
    GeminiOptions { include_thoughts: true },
];

/// The body as encoded from scratch, with no memo.
fn fresh(request: &ModelRequest, options: &GeminiOptions) -> Vec<u8> {
    request_bytes(&alone(request), options).unwrap()
}

fn send(request: &ModelRequest, options: &GeminiOptions) -> Vec<u8> {
    request_bytes(request, options).unwrap()
}

/// A result that does not name its function: the name comes from its call.
fn unnamed_result(id: &str) -> Message {
    let mut result = Message::tool_result(id, "", "from \"the call\"", false);
    result.tool_name = None;
    result
}

#[test]
fn each_request_of_a_turn_is_encoded_as_if_from_scratch() {
    for options in OPTIONS {
        for start in [requests().remove(0), ModelRequest::default()] {
            let mut request = start;
            assert_eq!(send(&request, &options), fresh(&request, &options));
            let mut steps = turn_steps();
            // A result whose name is found in a call the kept encoding covers.
            steps.insert(
                2,
                Box::new(|m| {
                    m.push(call("c9"));
                    None
                }),
            );
            steps.insert(
                3,
                Box::new(|m| {
                    m.push(Message::user("a word between the call and its result"));
                    m.push(unnamed_result("c9"));
                    None
                }),
            );
            for (step, grow) in steps.iter().enumerate() {
                next_request(&mut request, grow);
                let bytes = send(&request, &options);
                assert_eq!(
                    String::from_utf8_lossy(&bytes),
                    String::from_utf8_lossy(&fresh(&request, &options)),
                    "step {step}"
                );
                if step == 3 {
                    let body = String::from_utf8_lossy(&bytes);
                    assert!(
                        body.contains(r#"{"functionResponse":{"id":"c9","name":"shot","#),
                        "{body}"
                    );
                }
                // A retry of the same request reuses what it can, and sends the same.
                assert_eq!(send(&request, &options), bytes, "retry of step {step}");
            }
        }
    }
}

/// Replaces the kept encoding of the request's first content with a tracer.
fn trace(request: &ModelRequest) {
    KeptItems::<Contents>::trace_first(request, br#"{"parts":[{"text":"TRACER"}],"role":"user"}"#);
}

#[test]
fn vouched_messages_are_copied_and_only_the_newest_content_encoded_again() {
    let options = GeminiOptions::default();
    let mut request = ModelRequest {
        messages: calls_and_results(1),
        ..ModelRequest::default()
    };
    send(&request, &options);
    trace(&request);
    // A result joining the newest content: that content is encoded again, the rest kept.
    next_request(&mut request, |m| {
        m.push(Message::tool_result("c1", "shot", "r1 again", false));
        None
    });
    let body = String::from_utf8(send(&request, &options)).unwrap();
    assert!(body.contains("TRACER"), "the kept encoding is sent: {body}");
    assert!(body.contains(r#""result":"r1"}}},{"functionResponse""#), "{body}");
    trace(&request);
    next_request(&mut request, |m| {
        m.push(call("c2"));
        None
    });
    let body = String::from_utf8(send(&request, &options)).unwrap();
    assert!(body.contains("TRACER"), "the kept encoding is sent: {body}");
    assert!(!body.contains(r#""text":"first""#), "{body}");
    // Not vouched for: encoded again.
    let result = Message::tool_result("c2", "shot", "r2", false);
    assert_unvouched_is_fresh(&mut request, result, trace, |r| send(r, &options));
}

#[test]
fn a_memo_is_not_continued_where_it_no_longer_applies() {
    let options = GeminiOptions::default();
    let mut request = ModelRequest {
        messages: calls_and_results(2),
        ..ModelRequest::default()
    };
    send(&request, &options);
    // The message where the kept encoding ends now has the role of the one before it, so it
    // would join that content's kept encoding: encoded again.
    next_request(&mut request, |m| {
        m[2] = Message::assistant("a model message where a result was");
        Some(2)
    });
    assert_eq!(send(&request, &options), fresh(&request, &options));
    // Another tool list: its declarations encoded again.
    next_request(&mut request, |m| {
        m.push(Message::user("with tools"));
        None
    });
    request.tools = Arc::new(vec![ToolSchema {
        name: "shot".into(),
        description: "A \"shot\".".into(),
        parameters: json!({"type": "object", "properties": {"n": {"type": "string"}}}),
    }]);
    let body = send(&request, &options);
    assert_eq!(body, fresh(&request, &options));
    assert!(String::from_utf8_lossy(&body).contains("functionDeclarations"));
    next_request(&mut request, |m| {
        m.push(Message::assistant("ok"));
        None
    });
    request.tools = Arc::new(Vec::new());
    assert_eq!(send(&request, &options), fresh(&request, &options));
    // A typed turn with tools adds the answer tool to each request: sent every time.
    request.tools = Arc::new(vec![ToolSchema {
        name: "shot".into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
    }]);
    request.output_schema = Some(agent_core::OutputSchema::new("answer", json!({"type": "object"})));
    next_request(&mut request, |m| {
        m.push(Message::user("typed"));
        None
    });
    let body = send(&request, &options);
    assert_eq!(body, fresh(&request, &options));
    assert!(String::from_utf8_lossy(&body).contains("final_answer"));
}
