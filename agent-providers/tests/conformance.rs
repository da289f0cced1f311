//! The conformance suite: one scenario table, run against all four adapters through a real
//! loopback HTTP server that replays recorded wire bodies (constructed ones for OpenAI Responses,
//! see the fixture index), whole and cut into small pieces.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::Arc;

use agent_core::{
    CancellationToken, FinishReason, Message, ModelRequest, ModelResponse, ProviderError, ToolSchema, collect_stream,
};
use common::{ALL, MockServer, Reply, Wire, adapter, fixture};
use serde_json::{Value, json};

#[derive(Clone, Debug)]
struct Want {
    text_prefix: &'static str,
    calls: Value,
    finish: FinishReason,
    usage: Option<(u64, u64)>,
    reasoning_chars: Option<usize>,
    signature: bool,
}

fn want(text_prefix: &'static str) -> Want {
    Want {
        text_prefix,
        calls: json!([]),
        finish: FinishReason::Stop,
        usage: None,
        reasoning_chars: None,
        signature: false,
    }
}

impl Want {
    fn calls(mut self, calls: Value) -> Self {
        self.calls = calls;
        self.finish = FinishReason::ToolCalls;
        self
    }
    fn finish(mut self, finish: FinishReason) -> Self {
        self.finish = finish;
        self
    }
    fn usage(mut self, input: u64, output: u64) -> Self {
        self.usage = Some((input, output));
        self
    }
    fn reasoning(mut self, chars: usize) -> Self {
        self.reasoning_chars = Some(chars);
        self
    }
    fn signed(mut self) -> Self {
        self.signature = true;
        self
    }
}

#[derive(Clone, Debug)]
enum Expect {
    Ok(Want),
    /// The error kind, and a phrase its message contains.
    Err(&'static str, &'static str),
}

#[derive(Clone, Debug)]
enum Body {
    File(&'static str),
    /// The first half of a file's bytes.
    Truncated(&'static str),
    Raw(&'static str),
}

struct Case {
    scenario: &'static str,
    wire: Wire,
    body: Body,
    tools: bool,
    expect: Expect,
}

fn case(scenario: &'static str, wire: Wire, body: Body, expect: Expect) -> Case {
    Case {
        scenario,
        wire,
        body,
        tools: true,
        expect,
    }
}

fn table() -> Vec<Case> {
    use Body::*;
    use Expect::Err as E;
    use Expect::Ok as O;
    use Wire::*;
    let add_mul = json!([["add", {"a": 2, "b": 3}], ["multiply", {"a": 2, "b": 3}]]);
    vec![
        // plain text (no tools in the request)
        Case { tools: false, ..case("plain text", OpenAi, File("openai/stream-text.sse"), O(want("I'm unable to provide real-time weather").usage(14, 30))) },
        Case { tools: false, ..case("plain text", Anthropic, File("anthropic/stream-text.sse"), O(want("Olá! (That's \"hi\" in Portuguese)").usage(16, 38))) },
        Case { tools: false, ..case("plain text", Gemini, File("gemini/stream-text.sse"), O(want("Of course!\n\nThe most common way").usage(11, 652))) },
        Case { tools: false, ..case("plain text", OpenAiResponses, File("openai-responses/stream-text.sse"), O(want("Olá! I can't check live weather").usage(1290, 19))) },
        // text despite tools
        case("text despite tools", OpenAi, File("openai/stream-text.sse"), O(want("I'm unable to provide real-time weather"))),
        case("text despite tools", Anthropic, File("anthropic/stream-text.sse"), O(want("Olá!"))),
        case("text despite tools", Gemini, File("gemini/stream-text-trailing-signature.sse"), O(want("\"Hi\" in Portuguese is **\"Oi\"**").signed().usage(11, 245))),
        case("text despite tools", OpenAiResponses, File("openai-responses/stream-text.sse"), O(want("Olá!"))),
        // one tool call
        case("one tool call", OpenAi, File("openai/stream-tool-call.sse"), O(want("").calls(json!([["get_weather", {"city": "New York City"}]])).usage(44, 16))),
        case("one tool call", Anthropic, File("anthropic/stream-tool-use.sse"), O(want("I'll check the current weather in Paris for you.").calls(json!([["get_weather", {"location": "Paris"}]])).usage(377, 65))),
        case("one tool call", Gemini, File("gemini/stream-function-call.sse"), O(want("").calls(json!([["weather", {"location": "Florence,Italy"}]])).usage(54, 58))),
        case("one tool call", OpenAi, File("vllm/stream-tool-call.sse"), O(want("").calls(json!([["run_command", {"command": "ls"}]])))),
        case("one tool call", OpenAiResponses, File("openai-responses/stream-tool-call.sse"), O(want("").calls(json!([["get_weather", {"city": "New York City"}]])).usage(58, 18))),
        // two tool calls in one response
        case("two tool calls", OpenAi, File("openai/stream-two-tool-calls.sse"), O(want("").calls(json!([["GetWeatherArgs", {"city": "Edinburgh", "country": "GB", "units": "c"}], ["get_stock_price", {"ticker": "AAPL", "exchange": "NASDAQ"}]])).usage(149, 60))),
        case("two tool calls", Anthropic, File("anthropic/stream-parallel-tool-use.sse"), O(want("I'll add and multiply the numbers 2 and 3 for you.").calls(add_mul.clone()).usage(502, 137))),
        case("two tool calls", Gemini, File("gemini/stream-parallel-function-calls.sse"), O(want("").calls(add_mul.clone()).usage(157, 470))),
        case("two tool calls", OpenAi, File("groq/stream-parallel-tool-calls.sse"), O(want("I'll perform both addition and multiplication").calls(add_mul.clone()).usage(201, 58))),
        case("two tool calls", OpenAi, File("ollama/stream-parallel-tool-calls.sse"), O(want("").calls(json!([["run_command", {"command": "ls"}], ["run_command", {"command": "ls -l"}]])))),
        case("two tool calls", OpenAiResponses, File("openai-responses/stream-two-tool-calls.sse"), O(want("").calls(add_mul.clone()).usage(96, 50))),
        // reasoning
        case("reasoning", OpenAi, File("deepseek/stream-reasoning-content.sse"), O(want("Hello! 😊 It's wonderful to meet you!").reasoning(262).usage(6, 169))),
        case("reasoning", OpenAi, File("openrouter/stream-reasoning-tool-call.sse"), O(want("").reasoning(388).calls(json!([["weather", {"location": "Florence, Italy"}]])).usage(607, 143))),
        case("reasoning", OpenAi, File("llamacpp/stream-reasoning-tool-call.sse"), O(want("").reasoning(67).calls(json!([["weather", {"location": "Florence, Italy"}]])).usage(139, 42))),
        case("reasoning", Anthropic, File("anthropic/stream-thinking.sse"), O(want("").reasoning(301).signed().calls(json!([["weather", {"location": "Florence, Italy"}]])).usage(424, 119))),
        case("reasoning", Gemini, File("gemini/stream-thinking-function-call.sse"), O(want("").reasoning(327).calls(json!([["weather", {"location": "Florence, Italy"}]])).usage(54, 76))),
        case("reasoning", OpenAiResponses, File("openai-responses/stream-reasoning-tool-call.sse"), O(want("").reasoning(152).calls(json!([["get_weather", {"city": "Florence, Italy"}]])).usage(512, 210))),
        case("reasoning", OpenAiResponses, File("openai-responses/stream-reasoning-text.sse"), O(want("It is 21 °C and sunny in Florence.").reasoning(48).usage(640, 96))),
        // usage (cumulative or repeated reports are not added up)
        case("usage", OpenAi, File("deepseek/stream-reasoning-tool-call.sse"), O(want("").reasoning(191).calls(json!([["weather", {"location": "San Francisco"}]])).usage(339, 83))),
        case("usage", Anthropic, File("anthropic/stream-parallel-tool-use.sse"), O(want("I'll add").calls(add_mul.clone()).usage(502, 137))),
        case("usage", Gemini, File("gemini/stream-text.sse"), O(want("Of course!").usage(11, 652))),
        case("usage", OpenAiResponses, File("openai-responses/stream-reasoning-text.sse"), O(want("It is").reasoning(48).usage(640, 96))),
        // stop reasons
        case("stop reasons", OpenAi, File("openai/stream-finish-length.sse"), O(want("{\"").finish(FinishReason::Length).usage(79, 1))),
        case("stop reasons", OpenAi, File("openai/stream-refusal.sse"), O(want("I'm sorry, I can't assist with that request.").finish(FinishReason::ContentFilter))),
        case("stop reasons", Anthropic, File("anthropic/stream-max-tokens-truncated-tool.sse"), E("malformed", "output-token limit in the middle of tool call `make_file`")),
        case("stop reasons", Gemini, File("gemini/stream-max-tokens.sse"), O(want("We").reasoning(367).finish(FinishReason::Length))),
        case("stop reasons", Gemini, File("gemini/stream-malformed-function-call.sse"), O(want("").finish(FinishReason::Other("MALFORMED_FUNCTION_CALL".into())))),
        case("stop reasons", OpenAiResponses, File("openai-responses/stream-incomplete-max-tokens.sse"), O(want("Once upon a time, in a city of bridges").finish(FinishReason::Length).usage(20, 16))),
        // an error event after HTTP 200
        case("error mid-stream", OpenAi, File("openai/stream-error-midstream.sse"), E("server", "The server had an error")),
        case("error mid-stream", Anthropic, File("anthropic/error-overloaded-midstream.sse"), E("server", "Overloaded")),
        case("error mid-stream", Anthropic, File("anthropic/stream-error-midstream-api-error.sse"), E("server", "Overloaded")),
        case("error mid-stream", Gemini, File("gemini/stream-error-midstream.sse"), E("server", "overloaded")),
        case("error mid-stream", OpenAiResponses, File("openai-responses/stream-failed.sse"), E("server", "The server had an error")),
        case("error mid-stream", OpenAiResponses, File("openai-responses/stream-error-event.sse"), E("rate_limited", "Rate limit reached for gpt-4.1")),
        // a body cut short
        case("truncated stream", OpenAi, Truncated("openai/stream-text.sse"), E("malformed", "")),
        case("truncated stream", Anthropic, Truncated("anthropic/stream-text.sse"), E("malformed", "")),
        case("truncated stream", Gemini, Truncated("gemini/stream-text.sse"), E("malformed", "")),
        case("truncated stream", OpenAiResponses, Truncated("openai-responses/stream-text.sse"), E("malformed", "")),
        // broken JSON inside an event
        case("malformed SSE", OpenAi, Raw("data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}\n\ndata: [DONE]\n\n"), E("malformed", "{\\\"choices\\\"")),
        case("malformed SSE", Anthropic, Raw("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\n\n"), E("malformed", "message_start")),
        case("malformed SSE", Gemini, Raw("data: {\"candidates\": [\r\n\r\n"), E("malformed", "candidates")),
        case("malformed SSE", OpenAiResponses, Raw("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\n\n"), E("malformed", "response.output_text.delta")),
    ]
}

fn request(with_tools: bool) -> ModelRequest {
    let tools = if with_tools {
        vec![ToolSchema {
            name: "get_weather".into(),
            description: "Weather for a city.".into(),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        }]
    } else {
        Vec::new()
    };
    ModelRequest {
        system: Some("You are terse.".into()),
        messages: vec![Message::user("hi")],
        tools: Arc::new(tools),
        ..ModelRequest::default()
    }
}

fn body_bytes(body: &Body) -> Vec<u8> {
    match body {
        Body::File(path) => fixture(path),
        Body::Truncated(path) => {
            let bytes = fixture(path);
            bytes[..bytes.len() / 2].to_vec()
        }
        Body::Raw(text) => text.as_bytes().to_vec(),
    }
}

fn check(label: &str, expect: &Expect, result: Result<ModelResponse, ProviderError>) {
    match (expect, result) {
        (Expect::Ok(w), Ok(r)) => {
            let text = r.message.text();
            assert!(text.starts_with(w.text_prefix), "{label}: text {text:?}");
            let calls: Vec<Value> = r
                .message
                .tool_calls
                .iter()
                .map(|c| {
                    json!([
                        c.name,
                        c.parse_arguments()
                            .unwrap_or_else(|e| panic!("{label}: args {:?}: {e}", c.arguments))
                    ])
                })
                .collect();
            assert_eq!(Value::Array(calls), w.calls, "{label}: tool calls");
            let mut ids: Vec<&str> = r.message.tool_calls.iter().map(|c| c.id.as_str()).collect();
            assert!(ids.iter().all(|id| !id.is_empty()), "{label}: empty id");
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), r.message.tool_calls.len(), "{label}: duplicate ids");
            assert_eq!(r.finish_reason, w.finish, "{label}: finish");
            if let Some((input, output)) = w.usage {
                let u = r.usage.unwrap_or_else(|| panic!("{label}: no usage"));
                assert_eq!((u.input_tokens, u.output_tokens), (input, output), "{label}: usage");
            }
            let reasoning = r.message.reasoning.as_ref();
            assert_eq!(
                reasoning.map(|x| x.text.chars().count()).filter(|n| *n > 0),
                w.reasoning_chars,
                "{label}: reasoning"
            );
            let signed = reasoning.is_some_and(|x| x.signature.is_some())
                || r.message.tool_calls.iter().any(|c| c.signature.is_some());
            if w.signature {
                assert!(signed, "{label}: signature kept");
            }
        }
        (Expect::Err(kind, phrase), Err(e)) => {
            assert_eq!(e.kind(), *kind, "{label}: {e}");
            assert!(e.to_string().contains(phrase), "{label}: {e}");
        }
        (expect, result) => panic!("{label}: expected {expect:?}, got {result:?}"),
    }
}

/// Every scenario through the real HTTP stack: the body whole, then cut into 1-byte and
/// 7-byte pieces (mid-JSON and mid-UTF-8: "Olá", "😊").
#[tokio::test]
async fn scenario_table_over_http() {
    let cases = table();
    for wire in ALL {
        assert!(cases.iter().any(|c| c.wire == wire), "every adapter has scenarios");
    }
    for c in &cases {
        for chunk in [None, Some(1), Some(7)] {
            let mut reply = Reply::new(200, body_bytes(&c.body)).header("content-type", "text/event-stream");
            if let Some(size) = chunk {
                reply = reply.chunked(size);
            }
            let server = MockServer::start([reply]).await;
            let provider = adapter(c.wire, &server.url());
            let label = format!("{} / {:?} / {:?} / chunk {chunk:?}", c.scenario, c.wire, c.body);
            let result = match provider.stream(&request(c.tools), CancellationToken::new()).await {
                Ok(stream) => collect_stream(stream).await,
                Err(e) => Err(e),
            };
            check(&label, &c.expect, result);
            assert_eq!(
                server.requests().len(),
                1,
                "{label}: errors inside a 200 stream are not retried by the adapter"
            );
        }
    }
}

/// The decoders alone, fed every possible cut of every body (pieces of 1 to 12 bytes): the
/// events are the same as for the whole body.
#[test]
fn decoders_are_insensitive_to_chunk_boundaries() {
    use agent_providers::sse::SseParser;
    use agent_providers::{
        WireDecoder, anthropic::AnthropicDecoder, gemini::GeminiDecoder, openai::OpenAiDecoder,
        openai_responses::ResponsesDecoder,
    };

    fn run<D: WireDecoder>(mut decoder: D, body: &[u8], size: usize) -> Vec<String> {
        let mut parser = SseParser::new();
        let mut sse = Vec::new();
        let mut out = Vec::new();
        let mut result = Ok(());
        for piece in body.chunks(size) {
            result = parser.push(piece, &mut sse);
            if result.is_err() {
                break;
            }
        }
        let result = result
            .and_then(|()| parser.finish(&mut sse))
            .and_then(|()| sse.iter().try_for_each(|e| decoder.on_event(e, &mut out)))
            .and_then(|()| decoder.on_end(&mut out));
        let mut text: Vec<String> = out
            .into_iter()
            .map(|e| {
                // Synthesized ids differ between runs; compare everything else.
                let mut v = serde_json::to_value(e).unwrap();
                if let Some(id) = v.get_mut("id") {
                    *id = json!("*");
                }
                v.to_string()
            })
            .collect();
        text.push(format!("{:?}", result.err().map(|e| e.kind())));
        text
    }

    for c in table() {
        let body = body_bytes(&c.body);
        let whole = match c.wire {
            Wire::OpenAi => run(OpenAiDecoder::new(), &body, body.len()),
            Wire::OpenAiResponses => run(ResponsesDecoder::new(), &body, body.len()),
            Wire::Anthropic => run(AnthropicDecoder::new(), &body, body.len()),
            Wire::Gemini => run(GeminiDecoder::new(), &body, body.len()),
        };
        for size in 1..=12 {
            let cut = match c.wire {
                Wire::OpenAi => run(OpenAiDecoder::new(), &body, size),
                Wire::OpenAiResponses => run(ResponsesDecoder::new(), &body, size),
                Wire::Anthropic => run(AnthropicDecoder::new(), &body, size),
                Wire::Gemini => run(GeminiDecoder::new(), &body, size),
            };
            assert_eq!(cut, whole, "{} / {:?} cut every {size} bytes", c.scenario, c.body);
        }
    }
}

/// Non-streamed bodies of each adapter.
#[tokio::test]
async fn non_streaming_bodies() {
    let cases: Vec<(Wire, &str, Expect)> = vec![
        (Wire::OpenAi, "openai/nonstream-text.json", Expect::Ok(want("I'm unable to provide real-time weather").usage(14, 37))),
        (Wire::OpenAi, "openai/nonstream-two-tool-calls.json", Expect::Ok(want("").calls(json!([["GetWeatherArgs", {"city": "Edinburgh", "country": "GB", "units": "c"}], ["get_stock_price", {"ticker": "AAPL", "exchange": "NASDAQ"}]])).usage(149, 60))),
        (Wire::OpenAi, "deepseek/nonstream-reasoning.json", Expect::Ok(want("Hello! How can I help you today?").reasoning(583).usage(12, 9))),
        (Wire::OpenAiResponses, "openai-responses/nonstream-text.json", Expect::Ok(want("Olá! How can I help you today?").usage(22, 10))),
        (Wire::OpenAiResponses, "openai-responses/nonstream-reasoning-tool-calls.json", Expect::Ok(want("").reasoning(70).calls(json!([["add", {"a": 2, "b": 3}], ["multiply", {"a": 2, "b": 3}]])).usage(140, 180))),
        (Wire::Anthropic, "anthropic/nonstream-tool-use.json", Expect::Ok(want("I'll check the weather in Florence, Italy for you.").calls(json!([["weather", {"location": "Florence,Italy"}]])).usage(394, 66))),
        (Wire::Gemini, "gemini/nonstream-text.json", Expect::Ok(want("Olá!").usage(11, 26))),
        (Wire::Gemini, "gemini/nonstream-parallel-function-calls.json", Expect::Ok(want("").calls(json!([["add", {"a": 2, "b": 3}], ["multiply", {"a": 2, "b": 3}]])).signed().usage(125, 109))),
        (Wire::Gemini, "gemini/nonstream-prompt-blocked.json", Expect::Ok(want("").finish(FinishReason::ContentFilter))),
    ];
    for (wire, path, expect) in cases {
        let server = MockServer::start([Reply::json(200, path)]).await;
        let provider = common::adapter_with(wire, &server.url(), common::fast_http(), false);
        let result = provider.complete(&request(true), CancellationToken::new()).await;
        check(path, &expect, result);
        let sent = &server.requests()[0];
        assert!(sent.body.get("stream").is_none(), "{path}: non-streaming request");
        if wire == Wire::Gemini {
            assert!(sent.path.ends_with(":generateContent"), "{}", sent.path);
        }
    }
}

/// HTTP error bodies of each provider map to the right kinds, with the provider's message.
#[tokio::test]
async fn http_error_bodies() {
    let cases: Vec<(Wire, u16, &str, &str, &str)> = vec![
        (
            Wire::OpenAi,
            400,
            "openai/error-400-context-length.json",
            "context_overflow",
            "Input tokens exceed the configured limit",
        ),
        (
            Wire::OpenAi,
            429,
            "openai/error-429-rate-limit.json",
            "rate_limited",
            "Rate limit reached",
        ),
        (
            Wire::OpenAiResponses,
            400,
            "openai-responses/error-400-context-length.json",
            "context_overflow",
            "exceeds the context window",
        ),
        (
            Wire::OpenAiResponses,
            400,
            "openai-responses/error-400-encrypted-content.json",
            "bad_request",
            "Encrypted content is not supported",
        ),
        (
            Wire::Anthropic,
            400,
            "anthropic/error-400-prompt-too-long.json",
            "context_overflow",
            "prompt is too long",
        ),
        (
            Wire::Anthropic,
            429,
            "anthropic/error-429-rate-limit.json",
            "rate_limited",
            "exceed your account's rate limit",
        ),
        (
            Wire::Anthropic,
            529,
            "anthropic/error-529-overloaded.json",
            "server",
            "Overloaded",
        ),
        (
            Wire::Gemini,
            400,
            "gemini/error-400-invalid-argument.json",
            "bad_request",
            "Penalty is not enabled",
        ),
        (
            Wire::Gemini,
            429,
            "gemini/error-429-resource-exhausted.json",
            "rate_limited",
            "You exceeded your current quota",
        ),
    ];
    for (wire, status, path, kind, phrase) in cases {
        // One attempt, so retryable errors surface at once.
        let http = agent_providers::HttpConfig {
            max_attempts: 1,
            ..common::fast_http()
        };
        let server = MockServer::start([Reply::json(status, path)]).await;
        let provider = common::adapter_with(wire, &server.url(), http, true);
        let err = match provider.stream(&request(false), CancellationToken::new()).await {
            Ok(_) => panic!("{path}: expected an error"),
            Err(e) => e,
        };
        assert_eq!(err.kind(), kind, "{path}: {err}");
        assert!(err.to_string().contains(phrase), "{path}: {err}");
        if path.starts_with("gemini/error-429") {
            // RetryInfo in the body is the retry hint.
            assert!(
                matches!(err, ProviderError::RateLimited { retry_after: Some(d), .. } if d.as_secs() == 58),
                "{err:?}"
            );
        }
    }
}

/// Every recorded body of the collection is exercised by one of the suites.
#[test]
fn every_recorded_body_is_exercised() {
    let sources = [
        include_str!("conformance.rs"),
        include_str!("requests.rs"),
        include_str!("resilience.rs"),
        include_str!("agent_e2e.rs"),
    ]
    .concat();
    let cases: Vec<Value> = serde_json::from_slice(&fixture("cases.json")).unwrap();
    assert_eq!(cases.len(), 57);
    for case in cases {
        let file = case["file"].as_str().unwrap();
        assert!(!fixture(file).is_empty(), "{file} is copied");
        assert!(
            sources.contains(&format!("\"{file}\"")),
            "{file} is not exercised by any test"
        );
    }
}
