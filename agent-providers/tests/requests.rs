//! What each adapter sends: insta snapshots of the request bodies (system prompt, tools, a
//! history with tool calls, tool results, reasoning and images), the headers and URLs, and the
//! specification's configuration scenarios.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::collections::HashMap;
use std::sync::Arc;

use agent_core::{
    CancellationToken, ContentPart, ImageSource, Message, ModelRequest, Reasoning, ToolCall, ToolSchema, collect_stream,
};
use agent_providers::{ProviderConfig, ProviderKind, anthropic, gemini, openai, openai_responses};
use common::{MockServer, Reply, Wire, adapter};
use serde_json::{Value, json};

fn tools() -> Vec<ToolSchema> {
    vec![
        ToolSchema {
            name: "get_weather".into(),
            description: "Current weather for a city.".into(),
            parameters: json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "title": "WeatherArgs",
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name."},
                    "units": {"type": ["string", "null"], "enum": ["c", "f", null]},
                    "days": {"type": "integer", "minimum": 1, "default": 1},
                    "place": {"$ref": "#/$defs/Place"}
                },
                "required": ["city"],
                "additionalProperties": false,
                "$defs": {"Place": {"type": "object", "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}}}}
            }),
        },
        ToolSchema {
            name: "now".into(),
            description: "The current time.".into(),
            parameters: json!({"type": "object", "properties": {}}),
        },
    ]
}

/// A conversation with everything a wire has to carry.
fn rich_request() -> ModelRequest {
    let mut thinking_turn = Message::assistant_with_tools(
        "Let me check both.",
        vec![
            ToolCall {
                id: "call_1".into(),
                name: "get_weather".into(),
                arguments: r#"{"city":"Paris"}"#.into(),
                signature: Some("sig-call-1".into()),
            },
            ToolCall::new("call_2", "now", &json!({})),
        ],
    );
    thinking_turn.reasoning = Some(Box::new(Reasoning {
        text: "The user wants weather and time.".into(),
        signature: Some("sig-thinking".into()),
        opaque: vec![
            json!({"type": "reasoning.text", "text": "The user wants weather and time.", "signature": "or-sig", "format": "anthropic-claude-v1", "index": 0}),
            json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}),
        ],
    }));
    ModelRequest {
        system: Some("You are a weather assistant.".into()),
        messages: vec![
            Message::user_parts(vec![
                ContentPart::text("What's the weather where this photo was taken, and what time is it?"),
                ContentPart::Image {
                    media_type: "image/png".into(),
                    source: ImageSource::Base64 {
                        data: "iVBORw0KGgo=".into(),
                    },
                },
                ContentPart::Image {
                    media_type: "image/jpeg".into(),
                    source: ImageSource::Url {
                        url: "https://example.invalid/photo.jpg".into(),
                    },
                },
            ]),
            thinking_turn,
            Message::tool_result("call_1", "get_weather", r#"{"temp_c":21}"#, false),
            Message::tool_result("call_2", "now", "clock unavailable", true),
            Message::assistant("It is 21 °C in Paris; I could not read the clock."),
            Message::user("Thanks!"),
        ],
        tools: Arc::new(tools()),
        max_output_tokens: Some(1024),
        temperature: Some(0.2),
        output_schema: None,
        reuse: Default::default(),
    }
}

#[test]
fn openai_request_body() {
    insta::assert_json_snapshot!("openai_request", openai::request_body("gpt-4.1", &rich_request(), true));
}

#[test]
fn openai_responses_request_body() {
    let body = openai_responses::request_body("gpt-5", &rich_request(), true);
    // Stateless: nothing stored, the encrypted reasoning asked for; a reasoning model gets
    // summaries and no temperature.
    assert_eq!(body["store"], false);
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["reasoning"], json!({"summary": "auto"}));
    assert!(body.get("temperature").is_none());
    insta::assert_json_snapshot!("openai_responses_request", body);
    // Another model: its temperature, no reasoning parameters.
    let body = openai_responses::request_body("gpt-4.1", &rich_request(), false);
    assert_eq!(body["temperature"], json!(0.2));
    assert!(body.get("include").is_none() && body.get("reasoning").is_none() && body.get("stream").is_none());
    assert_eq!(body["store"], false);
}

/// A reasoning turn as the Responses decoder leaves it in the transcript: its reasoning items
/// go back whole, and the items that followed them keep their ids, in their original order.
#[test]
fn openai_responses_replays_reasoning_items_in_order() {
    let mut turn = Message::assistant_with_tools(
        "Checking both.",
        vec![
            ToolCall::new("call_a", "get_weather", &json!({"city": "Paris"})),
            ToolCall::new("call_b", "now", &json!({})),
        ],
    );
    turn.reasoning = Some(Box::new(Reasoning {
        text: "Plan.\n\nThen the time.".into(),
        signature: None,
        opaque: vec![
            json!({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Plan."}], "encrypted_content": "enc-1"}),
            json!({"type": "message", "id": "msg_1"}),
            json!({"type": "function_call", "id": "fc_1", "call_id": "call_a"}),
            json!({"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "enc-2"}),
            json!({"type": "function_call", "id": "fc_2", "call_id": "call_b"}),
            // Entries of other wires, and a reasoning item without encrypted content, are not sent.
            json!({"type": "reasoning.text", "text": "x", "index": 0}),
            json!({"type": "redacted_thinking", "data": "x"}),
            json!({"type": "reasoning", "id": "rs_3", "summary": []}),
        ],
    }));
    let request = ModelRequest {
        messages: vec![
            Message::user("Weather and time?"),
            turn,
            Message::tool_result("call_a", "get_weather", "21 C", false),
            Message::tool_result("call_b", "now", "12:00", false),
        ],
        ..ModelRequest::default()
    };
    let body = openai_responses::request_body("gpt-5", &request, true);
    insta::assert_json_snapshot!("openai_responses_replay", body["input"]);
    // Without its reasoning, an item goes back without an id (the API would refuse one whose
    // reasoning item is missing).
    let mut plain = request.clone();
    plain.messages[1].reasoning = None;
    let body = openai_responses::request_body("gpt-5", &plain, true);
    let input = body["input"].as_array().unwrap();
    assert_eq!(
        input[1],
        json!({"type": "message", "role": "assistant", "content": "Checking both."})
    );
    assert!(input.iter().all(|i| i.get("id").is_none()), "{body}");
}

#[test]
fn anthropic_request_body() {
    let body = anthropic::request_body("claude-sonnet-4-5", &rich_request(), true, &Default::default());
    // Consecutive tool results are merged into one user message of tool_result blocks.
    let messages = body["messages"].as_array().unwrap();
    let results = &messages[2];
    assert_eq!(results["role"], "user");
    assert_eq!(results["content"].as_array().unwrap().len(), 2);
    // Prompt caching (on by default): the system prompt is a text block with a breakpoint.
    assert_eq!(
        body["system"],
        json!([{"cache_control": {"type": "ephemeral"}, "text": "You are a weather assistant.", "type": "text"}])
    );
    insta::assert_json_snapshot!("anthropic_request", body);
}

#[test]
fn gemini_request_body() {
    let body = gemini::request_body(&rich_request(), &Default::default());
    let text = body.to_string();
    assert!(!text.contains("additionalProperties") && !text.contains("$schema") && !text.contains("$ref"));
    insta::assert_json_snapshot!("gemini_request", body);
}

/// Two page tools answered, the first with a screenshot: what each wire makes of a tool
/// result that carries an image.
fn screenshot_request() -> ModelRequest {
    let mut shot = Message::tool_result("call_1", "page_screenshot", "screenshot of the viewport", false);
    shot.content.push(ContentPart::Image {
        media_type: "image/png".into(),
        source: ImageSource::Base64 {
            data: "iVBORw0KGgo=".into(),
        },
    });
    ModelRequest {
        messages: vec![
            Message::user("What does the page look like?"),
            Message::assistant_with_tools(
                "",
                vec![
                    ToolCall::new("call_1", "page_screenshot", &json!({})),
                    ToolCall::new("call_2", "page_read", &json!({})),
                ],
            ),
            shot,
            Message::tool_result("call_2", "page_read", "url: http://127.0.0.1/", false),
            Message::assistant("A blank page."),
        ],
        ..ModelRequest::default()
    }
}

#[test]
fn tool_result_images_reach_every_wire() {
    // Chat Completions takes text only in a tool message: the image follows the results in
    // one user message naming the call, before the next assistant message.
    let openai = openai::request_body("gpt-4.1", &screenshot_request(), false);
    let roles: Vec<&str> = openai["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "tool", "user", "assistant"]);
    assert_eq!(
        openai["messages"][4]["content"][0]["text"],
        "The images returned by tool call call_1:"
    );
    assert_eq!(
        openai["messages"][4]["content"][1]["image_url"]["url"],
        "data:image/png;base64,iVBORw0KGgo="
    );
    insta::assert_json_snapshot!("openai_tool_image", openai["messages"]);

    // Anthropic: the image is a block inside the tool_result.
    let anthropic = anthropic::request_body("claude-sonnet-4-5", &screenshot_request(), false, &Default::default());
    let result = &anthropic["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["content"][1]["type"], "image");
    assert_eq!(
        anthropic["messages"][2]["content"][1]["content"],
        "url: http://127.0.0.1/"
    );
    insta::assert_json_snapshot!("anthropic_tool_image", anthropic["messages"]);

    // Responses: the output of function_call_output takes input_text and input_image parts.
    let responses = openai_responses::request_body("gpt-4.1", &screenshot_request(), false);
    let output = &responses["input"][3]["output"];
    assert_eq!(responses["input"][3]["type"], "function_call_output");
    assert_eq!(
        output[0],
        json!({"type": "input_text", "text": "screenshot of the viewport"})
    );
    assert_eq!(
        output[1],
        json!({"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"})
    );
    assert_eq!(responses["input"][4]["output"], "url: http://127.0.0.1/");
    insta::assert_json_snapshot!("openai_responses_tool_image", responses["input"]);

    // Gemini: inlineData right after the functionResponse, in the same user turn.
    let gemini = gemini::request_body(&screenshot_request(), &Default::default());
    let parts = gemini["contents"][2]["parts"].as_array().unwrap();
    assert!(parts[0].get("functionResponse").is_some());
    assert_eq!(parts[1]["inlineData"]["mimeType"], "image/png");
    assert!(parts[2].get("functionResponse").is_some());
    insta::assert_json_snapshot!("gemini_tool_image", gemini["contents"]);
}

#[test]
fn gemini_maps_the_system_prompt_to_system_instruction() {
    let request = ModelRequest {
        system: Some("Answer in French.".into()),
        messages: vec![Message::user("Hello")],
        ..ModelRequest::default()
    };
    let body = gemini::request_body(&request, &Default::default());
    assert_eq!(
        body["systemInstruction"],
        json!({"parts": [{"text": "Answer in French."}]})
    );
    assert_eq!(
        body["contents"],
        json!([{"role": "user", "parts": [{"text": "Hello"}]}])
    );
    assert!(!body.to_string().contains("\"role\":\"system\""));
}

#[test]
fn gemini_tool_schema_types() {
    let decl = gemini::schema(
        &json!({"type": "object", "properties": {"assetId": {"type": "string"}}, "required": ["assetId"]}),
        &json!({}),
        0,
    );
    assert_eq!(decl["properties"]["assetId"]["type"], "STRING");
    assert_eq!(decl["type"], "OBJECT");
    assert_eq!(decl["required"], json!(["assetId"]));
}

#[tokio::test]
async fn headers_and_paths() {
    for wire in common::ALL {
        let body = match wire {
            Wire::OpenAi => "openai/stream-text.sse",
            Wire::OpenAiResponses => "openai-responses/stream-text.sse",
            Wire::Anthropic => "anthropic/stream-text.sse",
            Wire::Gemini => "gemini/stream-text.sse",
        };
        let server = MockServer::start([Reply::sse(body)]).await;
        let provider = adapter(wire, &server.url());
        let stream = provider
            .stream(&rich_request(), CancellationToken::new())
            .await
            .unwrap();
        collect_stream(stream).await.unwrap();
        let sent = &server.requests()[0];
        let h = |name: &str| sent.headers.get(name).map(|v| v.to_str().unwrap().to_owned());
        assert_eq!(h("content-type").as_deref(), Some("application/json"));
        match wire {
            Wire::OpenAi => {
                assert_eq!(sent.path, "/v1/chat/completions");
                assert_eq!(h("authorization").as_deref(), Some("Bearer sk-test-secret-key"));
                assert_eq!(sent.body["stream_options"], json!({"include_usage": true}));
            }
            Wire::OpenAiResponses => {
                assert_eq!(sent.path, "/v1/responses");
                assert_eq!(h("authorization").as_deref(), Some("Bearer sk-test-secret-key"));
                assert_eq!(sent.body["stream"], true);
                assert_eq!(sent.body["store"], false);
                assert_eq!(sent.body["instructions"], "You are a weather assistant.");
            }
            Wire::Anthropic => {
                assert_eq!(sent.path, "/v1/messages");
                assert_eq!(h("x-api-key").as_deref(), Some("sk-test-secret-key"));
                assert_eq!(h("anthropic-version").as_deref(), Some("2023-06-01"));
                assert!(h("authorization").is_none());
            }
            Wire::Gemini => {
                assert_eq!(sent.path, "/v1beta/models/gemini-test:streamGenerateContent?alt=sse");
                assert_eq!(h("x-goog-api-key").as_deref(), Some("sk-test-secret-key"));
                assert!(!sent.path.contains("key="), "the key never goes in the URL");
            }
        }
    }
}

fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    move |name| map.get(name).cloned()
}

#[test]
fn unknown_provider_message() {
    let err = ProviderConfig::from_lookup(lookup(&[
        ("LLM_PROVIDER", "unknown-provider"),
        ("LLM_MODEL", "m"),
        ("LLM_API_KEY", "k"),
    ]))
    .unwrap_err();
    assert_eq!(err.to_string(), "Unknown LLM provider: unknown-provider");
    assert_eq!(err.kind(), "config");
}

#[test]
fn missing_variables_are_named() {
    for (vars, missing) in [
        (vec![("LLM_MODEL", "m"), ("LLM_API_KEY", "k")], "LLM_PROVIDER"),
        (vec![("LLM_PROVIDER", "gemini"), ("LLM_API_KEY", "k")], "LLM_MODEL"),
        (vec![("LLM_PROVIDER", "gemini"), ("LLM_MODEL", "m")], "LLM_API_KEY"),
        (
            vec![("LLM_PROVIDER", "anthropic"), ("LLM_MODEL", "m"), ("LLM_API_KEY", "")],
            "LLM_API_KEY",
        ),
    ] {
        let err = ProviderConfig::from_lookup(lookup(&vars)).unwrap_err();
        assert_eq!(err.kind(), "config");
        assert!(err.to_string().contains(missing), "{err}");
    }
    // A local OpenAI-compatible server may run without a key: an empty value is allowed.
    let config = ProviderConfig::from_lookup(lookup(&[
        ("LLM_PROVIDER", "openai-compatible"),
        ("LLM_MODEL", "qwen"),
        ("LLM_API_KEY", ""),
        ("LLM_BASE_URL", "http://127.0.0.1:8080/v1"),
    ]))
    .unwrap();
    assert!(config.api_key.is_empty());
    assert_eq!(config.base_url.as_deref(), Some("http://127.0.0.1:8080/v1"));
}

#[test]
fn every_provider_builds_from_env_vars() {
    for (name, id) in [
        ("openai-compatible", "openai-compatible"),
        ("openai-responses", "openai-responses"),
        ("anthropic", "anthropic"),
        ("gemini", "gemini"),
    ] {
        let config = ProviderConfig::from_lookup(lookup(&[
            ("LLM_PROVIDER", name),
            ("LLM_MODEL", "some-model"),
            ("LLM_API_KEY", "secret-key-123"),
        ]))
        .unwrap();
        let provider = config.build().unwrap();
        assert_eq!(provider.id(), id);
        assert_eq!(provider.model(), "some-model");
        assert!(
            !format!("{config:?}").contains("secret-key-123"),
            "Debug never shows the key"
        );
    }
}

#[test]
fn gemini_ignores_the_base_url() {
    let config = ProviderConfig::from_lookup(lookup(&[
        ("LLM_PROVIDER", "gemini"),
        ("LLM_MODEL", "gemini-2.5-flash"),
        ("LLM_API_KEY", "k"),
        ("LLM_BASE_URL", "http://127.0.0.1:1/not-used"),
    ]))
    .unwrap();
    let gemini = agent_providers::Gemini::new(&config).unwrap();
    assert_eq!(
        gemini.url(),
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
    // The other adapters do use it.
    let openai = agent_providers::OpenAiCompatible::new(&ProviderConfig {
        kind: ProviderKind::OpenAiCompatible,
        ..config.clone()
    })
    .unwrap();
    assert_eq!(openai.url(), "http://127.0.0.1:1/not-used/chat/completions");
}

#[tokio::test]
async fn gemini_ids_are_non_empty_and_unique() {
    // Gemini 2.5 sends no ids: two calls in one answer, and the same answer twice.
    let server = MockServer::start([
        Reply::json(200, "gemini/nonstream-parallel-function-calls.json"),
        Reply::json(200, "gemini/nonstream-parallel-function-calls.json"),
    ])
    .await;
    let provider = common::adapter_with(Wire::Gemini, &server.url(), common::fast_http(), false);
    let mut ids = Vec::new();
    for _ in 0..2 {
        let r = provider
            .complete(&rich_request(), CancellationToken::new())
            .await
            .unwrap();
        ids.extend(r.message.tool_calls.iter().map(|c| c.id.clone()));
    }
    assert_eq!(ids.len(), 4);
    assert!(ids.iter().all(|id| !id.is_empty()));
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 4, "{ids:?}");
    // Gemini 3 sends ids: they are kept.
    let server = MockServer::start([Reply::sse("gemini/stream-parallel-function-calls.sse")]).await;
    let r = collect_stream(
        adapter(Wire::Gemini, &server.url())
            .stream(&rich_request(), CancellationToken::new())
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    let ids: Vec<&str> = r.message.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["8hd01vsf", "k0srpqrc"]);
}

#[tokio::test]
async fn gemini_free_form_chat_without_tools() {
    let server = MockServer::start([Reply::json(200, "gemini/nonstream-text.json")]).await;
    let provider = common::adapter_with(Wire::Gemini, &server.url(), common::fast_http(), false);
    let request = ModelRequest {
        messages: vec![Message::user("Hello")],
        ..ModelRequest::default()
    };
    let r = provider.complete(&request, CancellationToken::new()).await.unwrap();
    assert_eq!(r.message.text(), "Olá!");
    assert!(r.message.tool_calls.is_empty());
    let sent = &server.requests()[0].body;
    assert!(sent.get("tools").is_none());
    assert_eq!(
        sent["contents"],
        json!([{"role": "user", "parts": [{"text": "Hello"}]}])
    );
}

/// The thought signature of a Gemini function call and the Anthropic thinking signature come
/// back on the next request exactly as they arrived.
#[tokio::test]
async fn signatures_round_trip() {
    let sig_of = |v: &Value| v.as_str().unwrap().to_owned();
    // Gemini
    let server = MockServer::start([
        Reply::sse("gemini/stream-function-call.sse"),
        Reply::sse("gemini/stream-text.sse"),
    ])
    .await;
    let provider = adapter(Wire::Gemini, &server.url());
    let first = collect_stream(
        provider
            .stream(&rich_request(), CancellationToken::new())
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    let call = first.message.tool_calls[0].clone();
    let mut request = rich_request();
    request.messages.push(first.message.clone());
    request
        .messages
        .push(Message::tool_result(&call.id, "weather", "40 C", false));
    collect_stream(provider.stream(&request, CancellationToken::new()).await.unwrap())
        .await
        .unwrap();
    let sent = &server.requests()[1].body;
    let contents = sent["contents"].as_array().unwrap();
    let model_turn = &contents[contents.len() - 2];
    assert_eq!(model_turn["parts"][0]["functionCall"]["name"], "weather");
    assert_eq!(
        sig_of(&model_turn["parts"][0]["thoughtSignature"]),
        call.signature.clone().unwrap()
    );
    let response = &contents[contents.len() - 1]["parts"][0]["functionResponse"];
    assert_eq!(response["name"], "weather");
    assert_eq!(response["response"], json!({"result": "40 C"}));
    // Anthropic
    let server = MockServer::start([
        Reply::sse("anthropic/stream-thinking.sse"),
        Reply::sse("anthropic/stream-text.sse"),
    ])
    .await;
    let provider = adapter(Wire::Anthropic, &server.url());
    let first = collect_stream(
        provider
            .stream(&rich_request(), CancellationToken::new())
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    let reasoning = first.message.reasoning.clone().unwrap();
    let call = first.message.tool_calls[0].clone();
    let mut request = rich_request();
    request.messages.push(first.message.clone());
    request
        .messages
        .push(Message::tool_result(&call.id, &call.name, "40 C", false));
    collect_stream(provider.stream(&request, CancellationToken::new()).await.unwrap())
        .await
        .unwrap();
    let sent = &server.requests()[1].body;
    let messages = sent["messages"].as_array().unwrap();
    let assistant = &messages[messages.len() - 2]["content"];
    assert_eq!(assistant[0]["type"], "thinking");
    assert_eq!(assistant[0]["thinking"], reasoning.text.as_str());
    assert_eq!(sig_of(&assistant[0]["signature"]), reasoning.signature.unwrap());
    assert_eq!(
        assistant[1],
        json!({"type": "tool_use", "id": call.id, "name": "weather", "input": {"location": "Florence, Italy"}})
    );
    // OpenRouter reasoning_details are merged by index and echoed.
    let server = MockServer::start([
        Reply::sse("openrouter/stream-reasoning-tool-call.sse"),
        Reply::sse("openai/stream-text.sse"),
    ])
    .await;
    let provider = adapter(Wire::OpenAi, &server.url());
    let first = collect_stream(
        provider
            .stream(&rich_request(), CancellationToken::new())
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    let mut request = rich_request();
    request.messages = vec![Message::user("weather?"), first.message.clone()];
    collect_stream(provider.stream(&request, CancellationToken::new()).await.unwrap())
        .await
        .unwrap();
    let sent = &server.requests()[1].body;
    let details = &sent["messages"][2]["reasoning_details"];
    assert_eq!(details.as_array().unwrap().len(), 1, "{details}");
    assert!(
        details[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("The user is asking for weather information in Florence")
    );
    assert!(
        details[0]["signature"]
            .as_str()
            .unwrap()
            .starts_with("Eq0ECkgIDRABGAIq")
    );
}

/// Multi-turn reasoning without server-side state: the encrypted reasoning item of a streamed
/// answer, and the id of the call that followed it, go back on the next request unchanged.
#[tokio::test]
async fn responses_reasoning_round_trips() {
    let server = MockServer::start([
        Reply::sse("openai-responses/stream-reasoning-tool-call.sse"),
        Reply::sse("openai-responses/stream-reasoning-text.sse"),
        Reply::sse("openai-responses/stream-text.sse"),
    ])
    .await;
    let config = ProviderConfig::new(ProviderKind::OpenAiResponses, "gpt-5-mini", "sk-test-secret-key")
        .with_base_url(format!("{}/v1", server.url()));
    let provider = config.build().unwrap();
    let mut request = ModelRequest {
        system: Some("You are terse.".into()),
        messages: vec![Message::user("Weather in Florence?")],
        ..ModelRequest::default()
    };
    let first = collect_stream(provider.stream(&request, CancellationToken::new()).await.unwrap())
        .await
        .unwrap();
    let reasoning = first.message.reasoning.clone().unwrap();
    assert!(
        reasoning.text.starts_with("**Checking the weather**"),
        "{}",
        reasoning.text
    );
    let usage = first.usage.unwrap();
    assert_eq!((usage.cached_input_tokens, usage.reasoning_tokens), (384, 192));
    let call = first.message.tool_calls[0].clone();
    assert_eq!(call.id, "call_ZmxvcmVuY2UwMDAwMDAw");
    request.messages.push(first.message.clone());
    request
        .messages
        .push(Message::tool_result(&call.id, &call.name, "21 C, sunny", false));
    let second = collect_stream(provider.stream(&request, CancellationToken::new()).await.unwrap())
        .await
        .unwrap();
    let sent = &server.requests()[1].body;
    assert_eq!(sent["include"], json!(["reasoning.encrypted_content"]));
    let input = sent["input"].as_array().unwrap();
    assert_eq!(input.len(), 4, "{sent}");
    assert_eq!(input[1]["type"], "reasoning");
    assert_eq!(input[1]["id"], "rs_4e5f60718293a4b5c6d7e8f90a1b2c3d");
    let fixture = String::from_utf8(common::fixture("openai-responses/stream-reasoning-tool-call.sse")).unwrap();
    let encrypted = input[1]["encrypted_content"].as_str().unwrap();
    assert!(encrypted.starts_with("gAAAAA") && fixture.contains(encrypted));
    assert_eq!(input[1]["summary"].as_array().unwrap().len(), 2);
    assert_eq!(
        input[2],
        json!({"type": "function_call", "id": "fc_4e5f60718293a4b5c6d7e8f90a1b2c3d", "call_id": call.id,
               "name": "get_weather", "arguments": "{\"city\":\"Florence, Italy\"}"})
    );
    assert_eq!(
        input[3],
        json!({"type": "function_call_output", "call_id": call.id, "output": "21 C, sunny"})
    );
    // The second answer (reasoning, then text) goes back as an output message with its id.
    request.messages.push(second.message.clone());
    request.messages.push(Message::user("Thanks!"));
    collect_stream(provider.stream(&request, CancellationToken::new()).await.unwrap())
        .await
        .unwrap();
    let sent = &server.requests()[2].body;
    let input = sent["input"].as_array().unwrap();
    let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "function_call",
            "function_call_output",
            "reasoning",
            "message",
            "message"
        ]
    );
    assert_eq!(input[4]["id"], "rs_5f60718293a4b5c6d7e8f90a1b2c3d4e");
    assert_eq!(
        input[5],
        json!({"type": "message", "id": "msg_5f60718293a4b5c6d7e8f90a1b2c3d4e", "role": "assistant", "status": "completed",
               "content": [{"type": "output_text", "text": "It is 21 °C and sunny in Florence.", "annotations": []}]})
    );
    assert_eq!(
        input[6],
        json!({"type": "message", "role": "user", "content": "Thanks!"})
    );
}
