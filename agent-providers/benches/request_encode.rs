//! Request encoding of each adapter: a 40-message history (tool calls, tool results with page
//! text that needs escapes, reasoning) and eight tools with JSON Schemas, encoded to the bytes
//! the adapter posts. (Before the wire modules, `openai` was a hand-written JSON writer and
//! `anthropic`/`gemini` built a `serde_json::Value` tree first; all three now serialize a
//! borrowed derived view into a pre-sized buffer.)
//!
//! `openai_next_step` (and `openai_responses_next_step`) is the request of the next step of
//! the same turn: the 37 messages the previous request sent are copied from its kept encoding
//! (see `agent_core::EncodingReuse`), and only the 3 new ones are encoded. In
//! `anthropic_next_step` the newest wire message and the one with the previous call's cache
//! breakpoint are encoded again too (5 of the 40 messages, two of them page text); in
//! `gemini_next_step` the newest content (the last result and the user message it joins).
//!
//! Run: `cargo bench -p agent-providers --bench request_encode`
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::sync::Arc;

use agent_core::{ContentPart, EncodingReuse, Message, ModelRequest, Reasoning, ToolCall, ToolSchema};
use agent_providers::{anthropic, gemini, openai, openai_responses};
use criterion::measurement::WallTime;
use criterion::{BatchSize, BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;

fn request() -> ModelRequest {
    let page = "Heading \"One\"\n\tA paragraph of page text with a quote \" and a backslash \\ and \
                unicode é 🌍.\n"
        .repeat(24);
    let tools: Vec<ToolSchema> = (0..8)
        .map(|i| ToolSchema {
            name: format!("tool_{i}"),
            description: format!("Tool number {i}: does something useful with a \"target\"."),
            parameters: json!({
                "type": "object",
                "properties": {
                    "target": {"type": "string", "description": "What to act on."},
                    "count": {"type": "integer", "minimum": 1, "default": 1},
                    "mode": {"type": "string", "enum": ["fast", "careful"]},
                    "options": {"type": "object", "properties": {"deep": {"type": "boolean"}}}
                },
                "required": ["target"],
                "additionalProperties": false
            }),
        })
        .collect();
    let mut messages = vec![Message::user("Find the pricing page and summarise it.")];
    for turn in 0..13 {
        let id = format!("call_{turn}");
        let mut assistant = Message::assistant_with_tools(
            "Let me look at that.",
            vec![ToolCall::new(
                &id,
                "tool_1",
                &json!({"target": format!("link {turn}"), "count": 2}),
            )],
        );
        assistant.reasoning = Some(Box::new(Reasoning {
            text: "Thinking about the next step.".into(),
            signature: Some("c2lnbmF0dXJl".into()),
            opaque: vec![],
        }));
        messages.push(assistant);
        messages.push(Message::tool_result(&id, "tool_1", &page, false));
        messages.push(Message::user_parts(vec![ContentPart::text("continue")]));
    }
    ModelRequest {
        system: Some("You are a browsing assistant. Be brief.".into()),
        messages,
        tools: Arc::new(tools),
        max_output_tokens: Some(2048),
        temperature: Some(0.2),
        output_schema: None,
        reuse: Default::default(),
    }
}

/// The request with an encoding memo of its own: encoded from scratch.
fn fresh(request: &ModelRequest) -> ModelRequest {
    ModelRequest {
        reuse: EncodingReuse::new(),
        ..request.clone()
    }
}

/// The request with its last 3 messages as the next step of the turn: the request before
/// them encoded by `encode` first, its kept encoding vouched for.
fn next_step(request: &ModelRequest, encode: impl Fn(&ModelRequest)) -> ModelRequest {
    let mut previous = fresh(request);
    let new = previous.messages.split_off(previous.messages.len() - 3);
    encode(&previous);
    let kept = previous.messages.len();
    let mut next = ModelRequest {
        reuse: previous.reuse.next_request(kept),
        ..previous
    };
    next.messages.extend(new);
    next
}

/// Benches `encode` on the request from scratch (`name`) and as the next step of its turn
/// (`name_next_step`). Every request is a fresh one: none shares a memo with an earlier one but
/// the step before it.
fn bench_format(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    request: &ModelRequest,
    encode: impl Fn(&ModelRequest) -> Vec<u8>,
) {
    group.bench_function(name, |b| {
        b.iter_batched(
            || fresh(request),
            |fresh| encode(black_box(&fresh)).len(),
            BatchSize::SmallInput,
        )
    });
    group.bench_function(format!("{name}_next_step"), |b| {
        b.iter_batched(
            || {
                next_step(request, |r| {
                    encode(r);
                })
            },
            |next| encode(black_box(&next)).len(),
            BatchSize::SmallInput,
        )
    });
}

fn bench(c: &mut Criterion) {
    let request = request();
    let mut group = c.benchmark_group("request_encode");
    let size = openai::request_bytes("gpt-4.1", &request, true).unwrap().len();
    group.throughput(Throughput::Bytes(size as u64));
    bench_format(&mut group, "openai", &request, |r| {
        openai::request_bytes("gpt-4.1", r, true).unwrap()
    });
    bench_format(&mut group, "openai_responses", &request, |r| {
        openai_responses::request_bytes("gpt-4.1", r, true).unwrap()
    });
    let options = anthropic::AnthropicOptions::default();
    bench_format(&mut group, "anthropic", &request, |r| {
        anthropic::request_bytes("claude", r, true, &options).unwrap()
    });
    let options = gemini::GeminiOptions::default();
    bench_format(&mut group, "gemini", &request, |r| {
        gemini::request_bytes(r, &options).unwrap()
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
