//! Prompt caching: the Anthropic request keeps the bytes of its cached prefix from one call to
//! the next (only an older breakpoint marker goes), the adapter sends exactly those bytes, and
//! every wire's usage reports cache reads and writes (recorded fixtures and made-up counts).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::Arc;

use agent_core::{CancellationToken, Message, ModelRequest, Provider, StreamEvent, ToolSchema, Usage, collect_stream};
use agent_providers::anthropic::{self, AnthropicDecoder, AnthropicOptions, CacheMode};
use agent_providers::gemini::GeminiDecoder;
use agent_providers::openai::{self, OpenAiDecoder};
use agent_providers::{Anthropic, ProviderConfig, ProviderKind, decode_sse};
use common::{MockServer, Reply, fixture};
use serde_json::{Value, json};

const MARKER: &str = r#""cache_control":{"type":"ephemeral"},"#;
const MODEL: &str = "claude-test";

fn tools() -> Arc<Vec<ToolSchema>> {
    Arc::new(vec![
        ToolSchema {
            name: "get_weather".into(),
            description: "Current weather for a city.".into(),
            parameters: json!({"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}),
        },
        ToolSchema {
            name: "now".into(),
            description: "The current time.".into(),
            parameters: json!({"type": "object", "properties": {}}),
        },
    ])
}

fn request(messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        system: Some("You are a weather assistant. Answer in one sentence.".into()),
        messages,
        tools: tools(),
        max_output_tokens: Some(1024),
        temperature: None,
        output_schema: None,
        reuse: Default::default(),
    }
}

/// The requests of two turns as the loop builds them: turn 1 asks, calls a tool, gets its
/// result and ends with an answer; turn 2 appends a user message.
fn conversation() -> Vec<ModelRequest> {
    let ask = Message::user("What's the weather in Paris?");
    let call = Message::assistant_with_tools(
        "I'll check.",
        vec![agent_core::ToolCall::new(
            "toolu_1",
            "get_weather",
            &json!({"location": "Paris"}),
        )],
    );
    let result = Message::tool_result("toolu_1", "get_weather", r#"{"temp_c":21}"#, false);
    let answer = Message::assistant("It is 21 °C in Paris.");
    let again = Message::user("And tomorrow?");
    vec![
        request(vec![ask.clone()]),
        request(vec![ask.clone(), call.clone(), result.clone()]),
        request(vec![ask, call, result, answer, again]),
    ]
}

fn body(request: &ModelRequest, options: &AnthropicOptions) -> String {
    String::from_utf8(anthropic::request_bytes(MODEL, request, true, options).unwrap()).unwrap()
}

/// The body up to and including the last content block of the last message. Keys are in
/// sorted order: `max_tokens`, `messages` (each `{"content":[...],"role":...}`), then `model`,
/// `stream`, `system` and `tools`, which every call of a conversation sends the same.
fn through_last_block(body: &str) -> &str {
    let messages_end = body.find(r#"],"model":"#).unwrap();
    let content_end = body[..messages_end].rfind(r#"],"role":""#).unwrap();
    assert!(body[..content_end].ends_with('}'));
    &body[..content_end]
}

/// `text` without its `n`-th marker (0-based).
fn without_marker(text: &str, n: usize) -> String {
    let (at, _) = text.match_indices(MARKER).nth(n).unwrap();
    format!("{}{}", &text[..at], &text[at + MARKER.len()..])
}

/// What the next request must start with: the previous body through its breakpoint on the
/// last block, minus the message marker that moved (the one before the last: the breakpoint
/// of the call before, which the next call no longer needs).
fn expected_prefix(previous: &str) -> String {
    let mut prefix = through_last_block(previous).to_owned();
    assert!(
        prefix.rfind(MARKER).unwrap() > prefix.rfind(r#"{"content":"#).unwrap(),
        "the last block carries a breakpoint: {prefix}"
    );
    while prefix.matches(MARKER).count() > 1 {
        prefix = without_marker(&prefix, 0);
    }
    prefix
}

#[test]
fn a_second_turn_keeps_the_prefix_bytes_up_to_the_breakpoint() {
    let requests = conversation();
    let bodies: Vec<String> = requests.iter().map(|r| body(r, &AnthropicOptions::default())).collect();
    for pair in bodies.windows(2) {
        let (previous, next) = (&pair[0], &pair[1]);
        let prefix = expected_prefix(previous);
        assert!(
            next.starts_with(&prefix),
            "the next request changed the cached prefix:\nprevious {previous}\nnext     {next}"
        );
        // Four breakpoints at most, and the next request's own one is on its newest block.
        assert!(next.matches(MARKER).count() <= 4);
        assert!(expected_prefix(next).len() > prefix.len());
    }
    // Turn 1's last request (ending with the tool result) to turn 2's first: identical bytes
    // through the tool result and its breakpoint, which turn 2 keeps as its second one.
    let (turn1, turn2) = (&bodies[1], &bodies[2]);
    let through_result = through_last_block(turn1);
    assert!(through_result.ends_with(r#""tool_use_id":"toolu_1","type":"tool_result"}"#));
    let turn2_json: Value = serde_json::from_str(turn2).unwrap();
    assert_eq!(
        turn2_json["messages"][2]["content"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert_eq!(
        turn2_json["messages"][4]["content"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert!(turn2_json["messages"][0]["content"][0].get("cache_control").is_none());
    // Tools and system prompt are the same bytes, markers included, in every request.
    let head = &turn1[..turn1.find(r#""messages":"#).unwrap()];
    let tail = &turn1[turn1.find(r#","model":"#).unwrap()..];
    for body in &bodies {
        assert!(body.starts_with(head));
        assert!(body.ends_with(tail));
    }
    assert_eq!(head, r#"{"max_tokens":1024,"#);
    assert!(tail.contains(r#""system":[{"cache_control":{"type":"ephemeral"},"text":"You are a weather assistant."#));
    assert!(tail.contains(r#"{"cache_control":{"type":"ephemeral"},"description":"The current time.""#));
}

#[test]
fn without_markers_the_bodies_are_the_off_bodies() {
    for request in conversation() {
        let auto = body(&request, &AnthropicOptions::default());
        let off = body(
            &request,
            &AnthropicOptions {
                cache: CacheMode::Off,
                ..AnthropicOptions::default()
            },
        );
        let system = request.system.clone().unwrap();
        let plain = auto.replace(MARKER, "").replace(
            &format!(
                r#""system":[{{"text":{},"type":"text"}}]"#,
                serde_json::to_string(&system).unwrap()
            ),
            &format!(r#""system":{}"#, serde_json::to_string(&system).unwrap()),
        );
        assert_eq!(plain, off);
    }
}

/// Two calls through the adapter against the local mock server send exactly the wire's
/// bytes, so the second starts with the first's prefix; the usage of each call arrives.
#[tokio::test]
async fn two_calls_through_the_adapter_send_the_cached_prefix() {
    let server = MockServer::start([
        Reply::sse("anthropic/stream-tool-use.sse"),
        Reply::new(200, cached_stream()).header("content-type", "text/event-stream"),
    ])
    .await;
    let config = ProviderConfig::new(ProviderKind::Anthropic, MODEL, "sk-test-secret-key")
        .with_base_url(format!("{}/v1", server.url()))
        .with_http(common::fast_http());
    let provider = Anthropic::new(&config).unwrap();
    let first_request = request(vec![Message::user("What's the weather in Paris?")]);
    let first = collect_stream(provider.stream(&first_request, CancellationToken::new()).await.unwrap())
        .await
        .unwrap();
    let call = first.message.tool_calls[0].clone();
    let mut second_request = first_request.clone();
    second_request.messages.push(first.message.clone());
    second_request
        .messages
        .push(Message::tool_result(&call.id, &call.name, "21 C", false));
    let second = collect_stream(
        provider
            .stream(&second_request, CancellationToken::new())
            .await
            .unwrap(),
    )
    .await
    .unwrap();

    let sent = server.requests();
    assert_eq!(sent.len(), 2);
    let options = AnthropicOptions::default();
    for (recorded, request) in sent.iter().zip([&first_request, &second_request]) {
        assert_eq!(recorded.raw.as_ref(), body(request, &options).as_bytes());
    }
    let (previous, next) = (
        std::str::from_utf8(&sent[0].raw).unwrap(),
        std::str::from_utf8(&sent[1].raw).unwrap(),
    );
    assert!(next.starts_with(&expected_prefix(previous)));
    assert_eq!(first.usage.unwrap().cache_write_tokens, 0);
    assert_eq!(
        second.usage.unwrap(),
        Usage {
            input_tokens: 12 + 1800 + 40,
            output_tokens: 9,
            cached_input_tokens: 1800,
            cache_write_tokens: 40,
            reasoning_tokens: 0,
        }
    );
}

/// An Anthropic stream that reads 1 800 tokens from the cache and writes 40 (message_start),
/// then repeats the counts with the final output tokens (message_delta).
fn cached_stream() -> String {
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": MODEL, "stop_reason": null, "usage": {"input_tokens": 12, "cache_creation_input_tokens": 40, "cache_read_input_tokens": 1800, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "21 °C."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"input_tokens": 12, "cache_creation_input_tokens": 40, "cache_read_input_tokens": 1800, "output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ];
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

fn last_usage(events: &[StreamEvent]) -> Usage {
    events
        .iter()
        .rev()
        .find_map(|e| match e {
            StreamEvent::Usage { usage } => Some(*usage),
            _ => None,
        })
        .expect("a usage report")
}

fn stream_usage(path: &str) -> Usage {
    let body = fixture(path);
    let (events, error) = match path.split('/').next().unwrap() {
        "anthropic" => decode_sse(&mut AnthropicDecoder::default(), &body),
        "gemini" => decode_sse(&mut GeminiDecoder::new(), &body),
        _ => decode_sse(&mut OpenAiDecoder::new(), &body),
    };
    assert!(error.is_none(), "{path}: {error:?}");
    last_usage(&events)
}

/// (input, cache reads, cache writes) of `usage`.
fn counts(usage: Usage) -> (u64, u64, u64) {
    (usage.input_tokens, usage.cached_input_tokens, usage.cache_write_tokens)
}

/// Every recorded response that carries a cache counter (`cache_read_input_tokens`,
/// `cache_creation_input_tokens`, `cached_tokens`, `prompt_cache_hit_tokens`,
/// `cache_write_tokens`) reads into these numbers. The Gemini recordings carry no
/// `cachedContentTokenCount`; it is tested below with a made-up response.
#[test]
fn recorded_cache_counters_parse_into_usage() {
    let streams = [
        ("anthropic/stream-text.sse", (16, 0, 0)),
        ("anthropic/stream-thinking.sse", (424, 0, 0)),
        ("anthropic/stream-tool-use.sse", (377, 0, 0)),
        ("anthropic/stream-parallel-tool-use.sse", (502, 0, 0)),
        // DeepSeek's own counter wins over its `prompt_tokens_details` copy (1 against 0).
        ("deepseek/stream-reasoning-content.sse", (6, 1, 0)),
        ("deepseek/stream-reasoning-tool-call.sse", (339, 320, 0)),
        ("openrouter/stream-reasoning-tool-call.sse", (607, 0, 0)),
    ];
    for (path, want) in streams {
        assert_eq!(counts(stream_usage(path)), want, "{path}");
    }
    let anthropic = anthropic::parse_response(&fixture("anthropic/nonstream-tool-use.json")).unwrap();
    assert_eq!(counts(last_usage(&anthropic)), (394, 0, 0));
    let deepseek = openai::parse_response(&fixture("deepseek/nonstream-reasoning.json")).unwrap();
    assert_eq!(counts(last_usage(&deepseek)), (12, 0, 0));
    // The recordings that carry cache counters but fail before their usage is reported.
    for path in [
        "anthropic/stream-max-tokens-truncated-tool.sse",
        "anthropic/error-overloaded-midstream.sse",
        "anthropic/stream-error-midstream-api-error.sse",
    ] {
        let (_, error) = decode_sse(&mut AnthropicDecoder::default(), &fixture(path));
        assert!(error.is_some(), "{path}");
    }
}

#[test]
fn cache_reads_and_writes_of_every_wire() {
    // Anthropic: writes in message_start, the cumulative counts again in message_delta.
    let (events, error) = decode_sse(&mut AnthropicDecoder::default(), cached_stream().as_bytes());
    assert!(error.is_none());
    assert_eq!(counts(last_usage(&events)), (1852, 1800, 40));
    // Anthropic, not streamed.
    let body = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": MODEL, "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn", "usage": {"input_tokens": 5, "cache_creation_input_tokens": 2048, "cache_read_input_tokens": 0, "output_tokens": 2}});
    let events = anthropic::parse_response(body.to_string().as_bytes()).unwrap();
    assert_eq!(counts(last_usage(&events)), (2053, 0, 2048));
    // OpenAI: reads in prompt_tokens_details.cached_tokens (prompt_tokens includes them).
    let chunk = json!({"id": "c", "object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 2006, "completion_tokens": 3, "total_tokens": 2009, "prompt_tokens_details": {"cached_tokens": 1920}}});
    let sse = format!("data: {chunk}\n\ndata: [DONE]\n\n");
    let (events, _) = decode_sse(&mut OpenAiDecoder::new(), sse.as_bytes());
    assert_eq!(counts(last_usage(&events)), (2006, 1920, 0));
    // OpenRouter serving a model that charges for cache writes.
    let chunk = json!({"id": "c", "choices": [], "usage": {"prompt_tokens": 3000, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 2990}}});
    let sse = format!("data: {chunk}\n\ndata: [DONE]\n\n");
    let (events, _) = decode_sse(&mut OpenAiDecoder::new(), sse.as_bytes());
    assert_eq!(counts(last_usage(&events)), (3000, 0, 2990));
    // Gemini: cachedContentTokenCount (included in promptTokenCount).
    let response = json!({"candidates": [{"content": {"parts": [{"text": "ok"}], "role": "model"}, "finishReason": "STOP", "index": 0}], "usageMetadata": {"promptTokenCount": 2100, "candidatesTokenCount": 3, "totalTokenCount": 2103, "cachedContentTokenCount": 2048}});
    let sse = format!("data: {response}\n\n");
    let (events, error) = decode_sse(&mut GeminiDecoder::new(), sse.as_bytes());
    assert!(error.is_none(), "{error:?}");
    assert_eq!(counts(last_usage(&events)), (2100, 2048, 0));
}

#[test]
fn usage_add_sums_cache_writes() {
    let mut total = Usage {
        input_tokens: 10,
        cache_write_tokens: 7,
        ..Usage::default()
    };
    total.add(&Usage {
        input_tokens: 5,
        cached_input_tokens: 3,
        cache_write_tokens: u64::MAX,
        ..Usage::default()
    });
    assert_eq!(counts(total), (15, 3, u64::MAX));
    // Older reports without the field still read.
    let old: Usage = serde_json::from_value(json!({"input_tokens": 1, "output_tokens": 2})).unwrap();
    assert_eq!(old.cache_write_tokens, 0);
}

/// `prompt_cache` of a [`ProviderConfig`] given as data reaches the Anthropic request.
#[tokio::test]
async fn the_configured_prompt_cache_reaches_the_request() {
    let server = MockServer::start([
        Reply::sse("anthropic/stream-text.sse"),
        Reply::sse("anthropic/stream-text.sse"),
        Reply::sse("anthropic/stream-text.sse"),
    ])
    .await;
    let request = &conversation()[2];
    for cache in [Some("off"), Some("static"), None] {
        let mut data = json!({"kind": "anthropic", "model": MODEL, "api_key": "k", "base_url": server.url()});
        if let Some(cache) = cache {
            data["prompt_cache"] = json!(cache);
        }
        let config: ProviderConfig = serde_json::from_value(data).unwrap();
        let provider = config.build().unwrap();
        collect_stream(provider.stream(request, CancellationToken::new()).await.unwrap())
            .await
            .unwrap();
    }
    let sent = server.requests();
    let markers = |i: usize| std::str::from_utf8(&sent[i].raw).unwrap().matches(MARKER).count();
    assert_eq!((markers(0), markers(1), markers(2)), (0, 2, 4));
    assert!(sent[0].body["system"].is_string());
    let mode = |name: &str| serde_json::from_value::<CacheMode>(json!(name)).unwrap();
    assert_eq!(
        (mode("auto"), mode("static"), mode("off")),
        (CacheMode::Auto, CacheMode::Static, CacheMode::Off)
    );
    assert!(
        serde_json::from_value::<ProviderConfig>(json!({"kind": "anthropic", "model": "m", "prompt_cache": "manual"}))
            .is_err()
    );
}
