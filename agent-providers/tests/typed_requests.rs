//! What each adapter sends for a typed turn (a [`ModelRequest::output_schema`]): insta
//! snapshots of the request bodies, with and without tools, and the byte encoding agreeing
//! with the JSON one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::Arc;

use agent_core::{Message, ModelRequest, OutputSchema, ToolSchema};
use agent_providers::anthropic::AnthropicOptions;
use agent_providers::gemini::GeminiOptions;
use agent_providers::{anthropic, gemini, openai, openai_responses};
use serde_json::{Value, json};

/// A schema as `schemars` writes it, with what Gemini's subset lacks: `$schema`, `$defs` and a
/// `$ref`, `additionalProperties`, a nullable type array.
fn schema() -> OutputSchema {
    OutputSchema::new(
        "Weather",
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "temperature_c": {"type": "integer"},
                "wind": {"type": ["string", "null"]},
                "place": {"$ref": "#/$defs/Place"}
            },
            "required": ["city", "temperature_c"],
            "additionalProperties": false,
            "$defs": {"Place": {"type": "object", "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}}}}
        }),
    )
}

fn request(with_tools: bool) -> ModelRequest {
    let tools = if with_tools {
        vec![ToolSchema {
            name: "get_weather".into(),
            description: "Current weather for a city.".into(),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        }]
    } else {
        Vec::new()
    };
    ModelRequest {
        system: Some("You are a weather assistant.".into()),
        messages: vec![Message::user("Weather in Paris?")],
        tools: Arc::new(tools),
        output_schema: Some(schema()),
        ..ModelRequest::default()
    }
}

fn same_bytes(body: &Value, bytes: Vec<u8>) {
    assert_eq!(&serde_json::from_slice::<Value>(&bytes).unwrap(), body);
}

#[test]
fn openai_sends_response_format_beside_the_tools() {
    let request = request(true);
    let body = openai::request_body("gpt-4.1", &request, true);
    assert_eq!(
        body["response_format"]["json_schema"]["schema"],
        request.output_schema.as_ref().unwrap().schema
    );
    assert_eq!(body["tools"].as_array().unwrap().len(), 1);
    same_bytes(&body, openai::request_bytes("gpt-4.1", &request, true).unwrap());
    insta::assert_json_snapshot!("typed_openai_request", body);

    let strict = ModelRequest {
        output_schema: Some(schema().with_strict(true)),
        ..request
    };
    assert_eq!(
        openai::request_body("gpt-4.1", &strict, true)["response_format"]["json_schema"]["strict"],
        true
    );
}

#[test]
fn openai_responses_sends_text_format() {
    let request = request(true);
    let body = openai_responses::request_body("gpt-5", &request, true);
    assert_eq!(body["text"]["format"]["type"], "json_schema");
    same_bytes(&body, openai_responses::request_bytes("gpt-5", &request, true).unwrap());
    insta::assert_json_snapshot!("typed_openai_responses_request", body);
}

#[test]
fn anthropic_offers_the_answer_tool() {
    let request = request(true);
    let options = AnthropicOptions::default();
    let body = anthropic::request_body("claude-sonnet-4-5", &request, true, &options);
    assert_eq!(body["tool_choice"], json!({"type": "any"}));
    assert_eq!(body["tools"][1]["name"], "final_answer");
    same_bytes(
        &body,
        anthropic::request_bytes("claude-sonnet-4-5", &request, true, &options).unwrap(),
    );
    insta::assert_json_snapshot!("typed_anthropic_request", body);

    // The API refuses forced tool use with thinking: the choice stays auto, the system
    // prompt asks for the tool.
    let thinking = AnthropicOptions {
        thinking_budget: Some(2048),
        ..AnthropicOptions::default()
    };
    let body = anthropic::request_body("claude-sonnet-4-5", &request, true, &thinking);
    assert!(body.get("tool_choice").is_none());
    assert!(body["system"].to_string().contains("call the tool final_answer"));

    // An untyped request is unchanged: no answer tool, no tool choice.
    let plain = ModelRequest {
        output_schema: None,
        ..request
    };
    let body = anthropic::request_body("claude-sonnet-4-5", &plain, true, &options);
    assert!(body.get("tool_choice").is_none());
    assert_eq!(body["tools"].as_array().unwrap().len(), 1);
}

#[test]
fn gemini_uses_json_mode_without_tools_and_the_answer_tool_with_them() {
    let options = GeminiOptions::default();
    let plain = request(false);
    let body = gemini::request_body(&plain, &options);
    let text = body.to_string();
    assert!(!text.contains("additionalProperties") && !text.contains("$schema") && !text.contains("$ref"));
    assert_eq!(body["generationConfig"]["responseMimeType"], "application/json");
    assert_eq!(
        body["generationConfig"]["responseSchema"]["properties"]["place"]["properties"]["lat"]["type"],
        "NUMBER"
    );
    same_bytes(&body, gemini::request_bytes(&plain, &options).unwrap());
    insta::assert_json_snapshot!("typed_gemini_request", body);

    let with_tools = request(true);
    let body = gemini::request_body(&with_tools, &options);
    assert!(body["generationConfig"].get("responseMimeType").is_none(), "{body}");
    assert_eq!(body["toolConfig"], json!({"functionCallingConfig": {"mode": "ANY"}}));
    let declarations = body["tools"][0]["functionDeclarations"].as_array().unwrap();
    assert_eq!(declarations[1]["name"], "final_answer");
    same_bytes(&body, gemini::request_bytes(&with_tools, &options).unwrap());
    insta::assert_json_snapshot!("typed_gemini_request_with_tools", body);
}
