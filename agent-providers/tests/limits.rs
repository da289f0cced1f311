//! Hostile servers: endless tool arguments, endless events and responses, endless error
//! bodies all end in a clear error naming the cap (and the setting that raises it), with the
//! process's memory bounded, against a loopback server that never stops sending.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::time::Duration;

use agent_core::{CancellationToken, Message, ModelRequest, Provider, ProviderError, StreamEvent, collect_stream};
use agent_providers::anthropic::{self, AnthropicDecoder};
use agent_providers::gemini::{self, GeminiDecoder};
use agent_providers::openai::{self, OpenAiDecoder};
use agent_providers::openai_responses::{self, ResponsesDecoder};
use agent_providers::{HttpConfig, Limits, decode_sse};
use common::{MockServer, Reply, Wire, adapter_with, fast_http};

fn request() -> ModelRequest {
    ModelRequest {
        messages: vec![Message::user("hi")],
        ..ModelRequest::default()
    }
}

async fn call(provider: &dyn Provider) -> Result<agent_core::ModelResponse, ProviderError> {
    collect_stream(provider.stream(&request(), CancellationToken::new()).await?).await
}

/// A memory figure of this process from `/proc/self/status`, in bytes: `VmRSS` (resident
/// now) or `VmHWM` (the peak resident so far, which a buffer freed at the end still shows).
fn memory(field: &str) -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    let kib: usize = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

/// How far the peak resident set rose above `before` (bytes).
fn peak_growth(before: usize) -> usize {
    memory("VmHWM:").saturating_sub(before)
}

/// Settings for these tests: one attempt, and a call timeout that ends the call (as a
/// timeout, failing the test's assertions) if a cap does not.
fn http() -> HttpConfig {
    HttpConfig {
        max_attempts: 1,
        call_timeout: Duration::from_secs(60),
        ..fast_http()
    }
}

/// The response cap of the endless-response tests: small enough to reach quickly.
const RESPONSE_CAP: usize = 4 << 20;

/// [`http`] with the response cap at [`RESPONSE_CAP`].
fn response_capped() -> HttpConfig {
    HttpConfig {
        max_response_bytes: RESPONSE_CAP,
        ..http()
    }
}

const PIECE: usize = 8 * 1024;

/// A stream that opens a tool call and then sends argument fragments forever.
fn endless_arguments(wire: Wire) -> Reply {
    let xs = "x".repeat(PIECE);
    let (head, piece) = match wire {
        Wire::OpenAi => (
            r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}}]}"#
                .to_owned()
                + "\n\n",
            format!(
                "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":\"{xs}\"}}}}]}}}}]}}\n\n"
            ),
        ),
        Wire::OpenAiResponses => (
            r#"data: {"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":""}}"#
                .to_owned()
                + "\n\n",
            format!(
                "data: {{\"type\":\"response.function_call_arguments.delta\",\"output_index\":0,\"item_id\":\"fc_1\",\"delta\":\"{xs}\"}}\n\n"
            ),
        ),
        Wire::Anthropic => (
            concat!(
                "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n",
                "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,",
                "\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"f\",\"input\":{}}}\n\n"
            )
            .to_owned(),
            format!(
                "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"{xs}\"}}}}\n\n"
            ),
        ),
        // Gemini sends a call whole, in one event: that event never ends.
        Wire::Gemini => (
            r#"data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"a":""#.to_owned(),
            xs,
        ),
    };
    Reply::new(200, head)
        .header("content-type", "text/event-stream")
        .forever(piece)
}

/// A stream of text deltas that never ends.
fn endless_text(wire: Wire) -> Reply {
    let piece = match wire {
        Wire::OpenAi => r#"data: {"choices":[{"index":0,"delta":{"content":"hello "}}]}"#.to_owned() + "\n\n",
        Wire::OpenAiResponses => {
            r#"data: {"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"hello "}"#.to_owned()
                + "\n\n"
        }
        Wire::Anthropic => {
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hello \"}}\n\n"
                .to_owned()
        }
        Wire::Gemini => r#"data: {"candidates":[{"content":{"parts":[{"text":"hello "}]}}]}"#.to_owned() + "\r\n\r\n",
    };
    let head = match wire {
        Wire::Anthropic => concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
        ),
        _ => "",
    };
    Reply::new(200, head)
        .header("content-type", "text/event-stream")
        .forever(piece.repeat(PIECE / piece.len()))
}

/// Runs one call against a server that sends `reply`, and checks it fails as malformed with a
/// message naming `setting`, that the server had to stop (the client went away), and that
/// memory stayed bounded.
async fn cut_at(wire: Wire, reply: Reply, http: HttpConfig, streaming: bool, setting: &str, cap: usize) {
    let before = memory("VmRSS:");
    let server = MockServer::start([reply]).await;
    let provider = adapter_with(wire, &server.url(), http, streaming);
    let err = call(provider.as_ref()).await.unwrap_err();
    let text = err.to_string();
    assert_eq!(err.kind(), "malformed", "{wire:?}: {text}");
    assert!(
        text.contains(&cap.to_string()) && text.contains(&format!("HttpConfig::{setting}")),
        "{wire:?}: {text}"
    );
    // The server sent at least up to the cap, then the client hung up.
    assert!(server.forever_sent() >= cap / 2, "{wire:?}: {}", server.forever_sent());
    for _ in 0..100 {
        if server.dropped() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(server.dropped(), 1, "{wire:?}: the endless body was dropped");
    let grown = peak_growth(before);
    assert!(grown < 200 << 20, "{wire:?}: peak RSS grew by {} MiB", grown >> 20);
}

#[tokio::test]
async fn endless_tool_arguments_end_at_the_tool_arguments_cap() {
    let cap = agent_providers::DEFAULT_MAX_TOOL_ARGS_BYTES;
    for wire in [Wire::OpenAi, Wire::OpenAiResponses, Wire::Anthropic] {
        cut_at(wire, endless_arguments(wire), http(), true, "max_tool_args_bytes", cap).await;
    }
}

#[tokio::test]
async fn an_endless_event_ends_at_the_response_cap() {
    // Gemini's call arrives in one event: that event is what grows.
    cut_at(
        Wire::Gemini,
        endless_arguments(Wire::Gemini),
        response_capped(),
        true,
        "max_response_bytes",
        RESPONSE_CAP,
    )
    .await;
}

#[tokio::test]
async fn an_endless_stream_ends_at_the_response_cap() {
    for wire in common::ALL {
        cut_at(
            wire,
            endless_text(wire),
            response_capped(),
            true,
            "max_response_bytes",
            RESPONSE_CAP,
        )
        .await;
    }
}

#[tokio::test]
async fn an_endless_non_streamed_body_ends_at_the_response_cap() {
    for wire in common::ALL {
        let reply = Reply::new(200, "{\"x\":\"")
            .header("content-type", "application/json")
            .forever("y".repeat(PIECE));
        cut_at(
            wire,
            reply,
            response_capped(),
            false,
            "max_response_bytes",
            RESPONSE_CAP,
        )
        .await;
    }
}

#[tokio::test]
async fn an_endless_error_body_is_cut_and_keeps_its_status() {
    let cap = agent_providers::DEFAULT_MAX_ERROR_BODY_BYTES;
    for (status, kind) in [(500, "server"), (429, "rate_limited"), (400, "bad_request")] {
        let before = memory("VmRSS:");
        let server = MockServer::start([Reply::new(status, "<html><body>").forever("z".repeat(PIECE))]).await;
        let provider = adapter_with(Wire::OpenAi, &server.url(), http(), true);
        let err = call(provider.as_ref()).await.unwrap_err();
        let text = err.to_string();
        assert_eq!(err.kind(), kind, "{text}");
        assert!(
            text.contains(&format!("cut at {cap} bytes")) && text.contains("HttpConfig::max_error_body_bytes"),
            "{text}"
        );
        assert!(peak_growth(before) < 200 << 20);
    }
}

// The same caps in the pure decoders (no network), for every wire and for whole bodies.

fn small() -> Limits {
    Limits {
        max_tool_args_bytes: 100,
        max_tool_calls: 3,
        ..Limits::default()
    }
}

/// A stream and a whole body of each wire with `calls` tool calls of `args` argument bytes.
fn calls_body(wire: Wire, calls: usize, args: usize) -> (String, String) {
    let value = "v".repeat(args.saturating_sub(8));
    let json_args = format!(r#"{{"a":"{value}"}}"#);
    let escaped = serde_json::to_string(&json_args).unwrap();
    match wire {
        Wire::OpenAi => {
            let mut stream = String::new();
            let mut whole = Vec::new();
            for i in 0..calls {
                stream += &format!(
                    "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{i},\"id\":\"c{i}\",\"function\":{{\"name\":\"f\",\"arguments\":{escaped}}}}}]}}}}]}}\n\n"
                );
                whole.push(format!(
                    "{{\"id\":\"c{i}\",\"type\":\"function\",\"function\":{{\"name\":\"f\",\"arguments\":{escaped}}}}}"
                ));
            }
            stream +=
                "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
            let body = format!(
                "{{\"choices\":[{{\"index\":0,\"message\":{{\"role\":\"assistant\",\"tool_calls\":[{}]}},\"finish_reason\":\"tool_calls\"}}]}}",
                whole.join(",")
            );
            (stream, body)
        }
        Wire::OpenAiResponses => {
            let mut stream = String::new();
            let mut whole = Vec::new();
            for i in 0..calls {
                let item = format!(
                    "{{\"type\":\"function_call\",\"id\":\"fc_{i}\",\"call_id\":\"c{i}\",\"name\":\"f\",\"arguments\":{escaped}}}"
                );
                stream += &format!(
                    "data: {{\"type\":\"response.output_item.done\",\"output_index\":{i},\"item\":{item}}}\n\n"
                );
                whole.push(item);
            }
            stream += "data: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"}}\n\n";
            let body = format!("{{\"status\":\"completed\",\"output\":[{}]}}", whole.join(","));
            (stream, body)
        }
        Wire::Anthropic => {
            let mut stream =
                String::from("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n");
            let mut whole = Vec::new();
            for i in 0..calls {
                stream += &format!(
                    "data: {{\"type\":\"content_block_start\",\"index\":{i},\"content_block\":{{\"type\":\"tool_use\",\"id\":\"t{i}\",\"name\":\"f\",\"input\":{{}}}}}}\n\n\
                     data: {{\"type\":\"content_block_delta\",\"index\":{i},\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":{escaped}}}}}\n\n\
                     data: {{\"type\":\"content_block_stop\",\"index\":{i}}}\n\n"
                );
                whole.push(format!(
                    "{{\"type\":\"tool_use\",\"id\":\"t{i}\",\"name\":\"f\",\"input\":{json_args}}}"
                ));
            }
            stream += "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\ndata: {\"type\":\"message_stop\"}\n\n";
            let body = format!(
                "{{\"type\":\"message\",\"content\":[{}],\"stop_reason\":\"tool_use\"}}",
                whole.join(",")
            );
            (stream, body)
        }
        Wire::Gemini => {
            let parts: Vec<String> = (0..calls)
                .map(|_| format!("{{\"functionCall\":{{\"name\":\"f\",\"args\":{json_args}}}}}"))
                .collect();
            let body = format!(
                "{{\"candidates\":[{{\"content\":{{\"parts\":[{}]}},\"finishReason\":\"STOP\"}}]}}",
                parts.join(",")
            );
            (format!("data: {body}\n\n"), body)
        }
    }
}

/// The error of decoding `wire`'s stream and whole body under `limits`, if any (both must agree).
fn decode_error(wire: Wire, calls: usize, args: usize, limits: Limits) -> Option<String> {
    let (stream, body) = calls_body(wire, calls, args);
    let (events, streamed) = match wire {
        Wire::OpenAi => decode_sse(&mut OpenAiDecoder::with_limits(limits), stream.as_bytes()),
        Wire::OpenAiResponses => decode_sse(&mut ResponsesDecoder::with_limits(limits), stream.as_bytes()),
        Wire::Anthropic => decode_sse(&mut AnthropicDecoder::with_limits(limits), stream.as_bytes()),
        Wire::Gemini => decode_sse(&mut GeminiDecoder::with_limits(limits), stream.as_bytes()),
    };
    let whole = match wire {
        Wire::OpenAi => openai::parse_response_with(body.as_bytes(), limits),
        Wire::OpenAiResponses => openai_responses::parse_response_with(body.as_bytes(), limits),
        Wire::Anthropic => anthropic::parse_response_with(body.as_bytes(), limits),
        Wire::Gemini => gemini::parse_response_with(body.as_bytes(), limits),
    };
    let starts = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::ToolCallStart { .. }))
        .count();
    assert!(starts <= limits.max_tool_calls, "{wire:?}: {starts} calls started");
    let streamed = streamed.map(|e| {
        assert_eq!(e.kind(), "malformed", "{wire:?}: {e}");
        e.to_string()
    });
    let whole = whole.err().map(|e| {
        assert_eq!(e.kind(), "malformed", "{wire:?}: {e}");
        e.to_string()
    });
    assert_eq!(streamed, whole, "{wire:?}: streamed and whole bodies agree");
    streamed
}

#[test]
fn tool_calls_and_arguments_within_the_caps_pass() {
    for wire in common::ALL {
        assert_eq!(decode_error(wire, 3, 100, small()), None, "{wire:?}");
    }
}

#[test]
fn too_many_tool_calls_fail_with_the_caps_message() {
    for wire in common::ALL {
        let err = decode_error(wire, 4, 10, small()).unwrap();
        assert!(
            err.contains("more than 3 tool calls") && err.contains("HttpConfig::max_tool_calls"),
            "{wire:?}: {err}"
        );
        let err = decode_error(wire, 129, 10, Limits::default()).unwrap();
        assert!(err.contains("more than 128 tool calls"), "{wire:?}: {err}");
    }
}

#[test]
fn tool_arguments_over_the_cap_fail_with_the_caps_message() {
    for wire in common::ALL {
        let err = decode_error(wire, 1, 101, small()).unwrap();
        assert!(
            err.contains("exceed 100 bytes") && err.contains("HttpConfig::max_tool_args_bytes"),
            "{wire:?}: {err}"
        );
        let err = decode_error(wire, 1, (1 << 20) + 1, Limits::default()).unwrap();
        assert!(err.contains("exceed 1048576 bytes"), "{wire:?}: {err}");
    }
}

#[test]
fn huge_token_counts_saturate() {
    let max = u64::MAX;
    let anthropic = format!(
        "data: {{\"type\":\"message_start\",\"message\":{{\"usage\":{{\"input_tokens\":{max},\"cache_read_input_tokens\":{max},\"cache_creation_input_tokens\":{max},\"output_tokens\":1}}}}}}\n\n\
         data: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"end_turn\"}},\"usage\":{{\"output_tokens\":{max}}}}}\n\n\
         data: {{\"type\":\"message_stop\"}}\n\n"
    );
    let gemini = format!(
        "data: {{\"candidates\":[{{\"content\":{{\"parts\":[{{\"text\":\"hi\"}}]}},\"finishReason\":\"STOP\"}}],\
         \"usageMetadata\":{{\"promptTokenCount\":{max},\"candidatesTokenCount\":{max},\"thoughtsTokenCount\":{max}}}}}\n\n"
    );
    let openai = format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"hi\"}},\"finish_reason\":\"stop\"}}],\
         \"usage\":{{\"prompt_tokens\":{max},\"completion_tokens\":{max}}}}}\n\ndata: [DONE]\n\n"
    );
    let responses = format!(
        "data: {{\"type\":\"response.completed\",\"response\":{{\"status\":\"completed\",\"usage\":{{\"input_tokens\":{max},\
         \"input_tokens_details\":{{\"cached_tokens\":{max}}},\"output_tokens\":{max},\"output_tokens_details\":{{\"reasoning_tokens\":{max}}}}}}}}}\n\n"
    );
    let usage = |events: Vec<StreamEvent>| {
        events
            .into_iter()
            .find_map(|e| match e {
                StreamEvent::Usage { usage } => Some(usage),
                _ => None,
            })
            .unwrap()
    };
    let (events, err) = decode_sse(&mut AnthropicDecoder::new(), anthropic.as_bytes());
    assert!(err.is_none(), "{err:?}");
    let u = usage(events);
    assert_eq!(
        (u.input_tokens, u.output_tokens, u.cached_input_tokens),
        (max, max, max)
    );
    let (events, err) = decode_sse(&mut GeminiDecoder::new(), gemini.as_bytes());
    assert!(err.is_none(), "{err:?}");
    let u = usage(events);
    assert_eq!((u.input_tokens, u.output_tokens, u.reasoning_tokens), (max, max, max));
    let (events, err) = decode_sse(&mut OpenAiDecoder::new(), openai.as_bytes());
    assert!(err.is_none(), "{err:?}");
    assert_eq!(usage(events).output_tokens, max);
    let (events, err) = decode_sse(&mut ResponsesDecoder::new(), responses.as_bytes());
    assert!(err.is_none(), "{err:?}");
    let u = usage(events);
    assert_eq!(
        (
            u.input_tokens,
            u.cached_input_tokens,
            u.output_tokens,
            u.reasoning_tokens
        ),
        (max, max, max, max)
    );
}

#[test]
fn a_tool_call_index_at_the_top_of_its_range_does_not_overflow() {
    // A fragment without an index after one at u32::MAX opens "the next" slot.
    let body = format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{},\"id\":\"a\",\"function\":{{\"name\":\"f\",\"arguments\":\"{{}}\"}}}}]}}}}]}}\n\n\
         data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"id\":\"b\",\"function\":{{\"name\":\"g\",\"arguments\":\"{{}}\"}}}}]}},\"finish_reason\":\"tool_calls\"}}]}}\n\n\
         data: [DONE]\n\n",
        u32::MAX
    );
    let (events, err) = decode_sse(&mut OpenAiDecoder::new(), body.as_bytes());
    assert!(err.is_none(), "{err:?}");
    assert!(events.iter().any(|e| matches!(e, StreamEvent::Done { .. })));
}
