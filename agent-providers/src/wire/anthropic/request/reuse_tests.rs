//! A turn's requests with kept encodings send exactly what encoding each from scratch sends.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use agent_core::{Message, ModelRequest, ToolSchema};
use serde_json::json;

use super::{KeptItems, Messages, request_bytes};
use crate::wire::anthropic::{AnthropicOptions, CacheMode};
use crate::wire::test_support::{
    alone, assert_unvouched_is_fresh, call, calls_and_results, next_request, requests, turn_steps,
};

fn options(cache: CacheMode) -> AnthropicOptions {
    AnthropicOptions {
        cache,
        ..AnthropicOptions::default()
    }
}

const MODES: [CacheMode; 3] = [CacheMode::Auto, CacheMode::Static, CacheMode::Off];

/// The body as encoded from scratch, with no memo.
fn fresh(request: &ModelRequest, options: &AnthropicOptions) -> Vec<u8> {
    request_bytes("claude-sonnet-4-5", &alone(request), true, options).unwrap()
}

fn send(request: &ModelRequest, options: &AnthropicOptions) -> Vec<u8> {
    request_bytes("claude-sonnet-4-5", request, true, options).unwrap()
}

#[test]
fn each_request_of_a_turn_is_encoded_as_if_from_scratch() {
    for cache in MODES {
        let options = options(cache);
        for start in [requests().remove(0), ModelRequest::default()] {
            let mut request = start;
            assert_eq!(send(&request, &options), fresh(&request, &options));
            for (step, grow) in turn_steps().iter().enumerate() {
                next_request(&mut request, grow);
                let bytes = send(&request, &options);
                assert_eq!(
                    String::from_utf8_lossy(&bytes),
                    String::from_utf8_lossy(&fresh(&request, &options)),
                    "{cache:?}, step {step}"
                );
                // A retry of the same request reuses what it can, and sends the same.
                assert_eq!(send(&request, &options), bytes, "{cache:?}, retry of step {step}");
            }
        }
    }
}

/// Replaces the kept encoding of the request's first wire message with a tracer.
fn trace(request: &ModelRequest) {
    KeptItems::<Messages>::trace_first(
        request,
        br#"{"content":[{"text":"TRACER","type":"text"}],"role":"user"}"#,
    );
}

#[test]
fn vouched_messages_are_copied_and_only_the_moving_end_encoded_again() {
    let options = options(CacheMode::Auto);
    let mut request = ModelRequest {
        messages: calls_and_results(1),
        ..ModelRequest::default()
    };
    send(&request, &options);
    next_request(&mut request, |m| {
        m.push(call("c2"));
        m.push(Message::tool_result("c2", "shot", "r2", false));
        None
    });
    send(&request, &options);
    trace(&request);
    next_request(&mut request, |m| {
        m.push(call("c3"));
        None
    });
    let body = String::from_utf8(send(&request, &options)).unwrap();
    assert!(body.contains("TRACER"), "the kept encoding is sent: {body}");
    assert!(!body.contains(r#""text":"first""#), "{body}");
    // The breakpoints moved with the newest messages: on the newest call, and on the results
    // before it, where the previous call ended.
    assert_eq!(body.matches("cache_control").count(), 2, "{body}");
    assert!(
        body.contains(r#"{"cache_control":{"type":"ephemeral"},"content":"r2""#),
        "{body}"
    );
    // Not vouched for: encoded again.
    let result = Message::tool_result("c3", "shot", "r3", false);
    assert_unvouched_is_fresh(&mut request, result, trace, |r| send(r, &options));
}

#[test]
fn a_memo_is_not_continued_where_it_no_longer_applies() {
    let auto = options(CacheMode::Auto);
    // The message where the kept encoding ends now has the role of the one before it, so it
    // would join that message's kept encoding: encoded again.
    for cache in MODES {
        let options = options(cache);
        let mut request = ModelRequest {
            messages: calls_and_results(3),
            ..ModelRequest::default()
        };
        send(&request, &options);
        next_request(&mut request, |m| {
            m[2] = Message::assistant("an assistant message where a result was");
            Some(2)
        });
        assert_eq!(send(&request, &options), fresh(&request, &options), "{cache:?}");
    }
    let mut request = ModelRequest {
        messages: vec![Message::user("first"), call("c1")],
        ..ModelRequest::default()
    };
    send(&request, &auto);
    // Another cache mode (a fallback route to another Anthropic provider): its own encoding
    // of the tools, so nothing of the memo.
    request.tools = Arc::new(vec![ToolSchema {
        name: "shot".into(),
        description: "A \"shot\".".into(),
        parameters: json!({"type": "object"}),
    }]);
    next_request(&mut request, |m| {
        m.push(Message::user("more"));
        None
    });
    send(&request, &auto);
    let off = options(CacheMode::Off);
    next_request(&mut request, |m| {
        m.push(Message::assistant("ok"));
        None
    });
    let body = send(&request, &off);
    assert_eq!(body, fresh(&request, &off));
    assert!(!String::from_utf8_lossy(&body).contains("cache_control"));
    // Another tool list: encoded again.
    next_request(&mut request, |m| {
        m.push(Message::user("with other tools"));
        None
    });
    request.tools = Arc::new(Vec::new());
    assert_eq!(send(&request, &off), fresh(&request, &off));
    // A typed turn adds the answer tool to each request: sent every time.
    next_request(&mut request, |m| {
        m.push(Message::assistant("typed"));
        None
    });
    request.output_schema = Some(agent_core::OutputSchema::new("answer", json!({"type": "object"})));
    assert_eq!(send(&request, &auto), fresh(&request, &auto));
    next_request(&mut request, |m| {
        m.push(Message::user("again"));
        None
    });
    let body = send(&request, &auto);
    assert_eq!(body, fresh(&request, &auto));
    assert!(String::from_utf8_lossy(&body).contains("final_answer"));
}
