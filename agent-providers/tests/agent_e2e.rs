//! End to end: agent-core's loop, through each adapter, against the loopback server: two tool
//! iterations (one call, then two calls at once), then a final answer.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use agent_core::{Agent, OutcomeStatus, ToolContext, ToolError, tool_fn};
use common::{MockServer, Reply, Wire, adapter};
use serde_json::{Value, json};

fn echo(name: &'static str) -> impl agent_core::Tool {
    tool_fn(
        name,
        "Returns its arguments.",
        move |args: Value, _cx: ToolContext| async move { Ok::<_, ToolError>(json!({"tool": name, "args": args})) },
    )
}

#[tokio::test]
async fn agent_loop_runs_two_tool_iterations_then_answers() {
    for wire in common::ALL {
        let (files, tools, final_prefix): ([&str; 3], [&'static str; 3], &str) = match wire {
            Wire::OpenAi => (
                [
                    "openai/stream-tool-call.sse",
                    "openai/stream-two-tool-calls.sse",
                    "openai/stream-text.sse",
                ],
                ["get_weather", "GetWeatherArgs", "get_stock_price"],
                "I'm unable to provide real-time weather",
            ),
            Wire::OpenAiResponses => (
                [
                    "openai-responses/stream-tool-call.sse",
                    "openai-responses/stream-two-tool-calls.sse",
                    "openai-responses/stream-text.sse",
                ],
                ["get_weather", "add", "multiply"],
                "Olá!",
            ),
            Wire::Anthropic => (
                [
                    "anthropic/stream-tool-use.sse",
                    "anthropic/stream-parallel-tool-use.sse",
                    "anthropic/stream-text.sse",
                ],
                ["get_weather", "add", "multiply"],
                "Olá!",
            ),
            Wire::Gemini => (
                [
                    "gemini/stream-function-call.sse",
                    "gemini/stream-parallel-function-calls.sse",
                    "gemini/stream-text.sse",
                ],
                ["weather", "add", "multiply"],
                "Of course!",
            ),
        };
        let server = MockServer::start(files.map(Reply::sse)).await;
        let agent = Agent::builder()
            .provider(adapter(wire, &server.url()))
            .tool(echo(tools[0]))
            .tool(echo(tools[1]))
            .tool(echo(tools[2]))
            .system_prompt("You are a test agent.")
            .build()
            .unwrap();
        let session = agent.create_session().await.unwrap();
        let outcome = session.send("Do the thing.").await;
        assert_eq!(outcome.status, OutcomeStatus::Done, "{wire:?}: {:?}", outcome.error);
        assert_eq!(outcome.iterations, 3, "{wire:?}");
        assert_eq!(outcome.tool_calls, 3, "{wire:?}");
        assert!(
            outcome
                .final_text
                .as_deref()
                .unwrap_or_default()
                .starts_with(final_prefix),
            "{wire:?}: {:?}",
            outcome.final_text
        );
        assert!(outcome.usage.input_tokens > 0, "{wire:?}: usage is summed");

        // What the model was sent: each request carries the previous tool results.
        let requests = server.requests();
        assert_eq!(requests.len(), 3);
        let second = requests[1].body.to_string();
        let third = requests[2].body.to_string();
        match wire {
            Wire::OpenAi => {
                assert!(
                    second.contains(r#""tool_call_id":"call_4XzlGBLtUe9dy3GVNV4jhq7h""#),
                    "{second}"
                );
                assert!(
                    third.contains(r#""tool_call_id":"call_DNYTawLBoN8fj3KN6qU9N1Ou""#),
                    "{third}"
                );
                assert_eq!(
                    requests[2].body["messages"][0],
                    json!({"role": "system", "content": "You are a test agent."})
                );
            }
            Wire::OpenAiResponses => {
                let input = requests[1].body["input"].as_array().unwrap();
                assert_eq!(
                    input[input.len() - 2],
                    json!({"type": "function_call", "call_id": "call_Q2hVb3J0bGVzc0lkMQ", "name": "get_weather",
                           "arguments": "{\"city\":\"New York City\"}"})
                );
                assert_eq!(input[input.len() - 1]["type"], "function_call_output");
                assert_eq!(input[input.len() - 1]["call_id"], "call_Q2hVb3J0bGVzc0lkMQ");
                // The two results of the parallel calls follow both calls, in order.
                let input = requests[2].body["input"].as_array().unwrap();
                let kinds: Vec<&str> = input[input.len() - 4..]
                    .iter()
                    .map(|i| i["type"].as_str().unwrap())
                    .collect();
                assert_eq!(
                    kinds,
                    [
                        "function_call",
                        "function_call",
                        "function_call_output",
                        "function_call_output"
                    ]
                );
                assert_eq!(requests[2].body["instructions"], "You are a test agent.");
                assert_eq!(requests[2].body["store"], false);
                assert!(third.contains(r#""call_id":"call_bXVsMDAwMDAwMDAwMDAw""#), "{third}");
            }
            Wire::Anthropic => {
                assert!(
                    second.contains(r#""tool_use_id":"toolu_01NRLabsLyVHZPKxbKvkfSMn""#),
                    "{second}"
                );
                // The two results of the parallel calls travel in one user message.
                let messages = requests[2].body["messages"].as_array().unwrap();
                let last = messages.last().unwrap();
                assert_eq!(last["role"], "user");
                let kinds: Vec<&str> = last["content"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|b| b["type"].as_str().unwrap())
                    .collect();
                assert_eq!(kinds, ["tool_result", "tool_result"]);
            }
            Wire::Gemini => {
                assert!(second.contains(r#""functionResponse":{"id":"#), "{second}");
                let contents = requests[2].body["contents"].as_array().unwrap();
                let last = contents.last().unwrap();
                let names: Vec<&str> = last["parts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| p["functionResponse"]["name"].as_str().unwrap())
                    .collect();
                assert_eq!(names, ["add", "multiply"]);
                assert!(requests[2].body["systemInstruction"].is_object());
            }
        }
    }
}

#[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
struct Weather {
    city: String,
    temperature_c: i64,
    conditions: Vec<String>,
}

/// A typed turn through each adapter: a tool call, then the answer in the wire's structured
/// form (JSON text for OpenAI's and Gemini's JSON modes, the `final_answer` tool for
/// Anthropic), parsed into the type. The answer bodies are constructed (see the fixtures'
/// README); the tool calls are recorded.
#[tokio::test]
async fn typed_answer_after_a_tool_call_on_every_wire() {
    for wire in common::ALL {
        let (files, tool): (&[&str], Option<&'static str>) = match wire {
            Wire::OpenAi => (
                &["openai/stream-tool-call.sse", "openai/stream-structured-output.sse"],
                Some("get_weather"),
            ),
            Wire::OpenAiResponses => (
                &[
                    "openai-responses/stream-tool-call.sse",
                    "openai-responses/stream-structured-output.sse",
                ],
                Some("get_weather"),
            ),
            Wire::Anthropic => (
                &[
                    "anthropic/stream-tool-use.sse",
                    "anthropic/stream-final-answer-tool.sse",
                ],
                Some("get_weather"),
            ),
            // Gemini's JSON mode cannot be combined with tools: this turn has none (with tools
            // the adapter offers the answer tool, see tests/typed_requests.rs).
            Wire::Gemini => (&["gemini/stream-structured-output.sse"], None),
        };
        let server = MockServer::start(files.iter().map(|f| Reply::sse(f))).await;
        let mut builder = Agent::builder().provider(adapter(wire, &server.url()));
        if let Some(tool) = tool {
            builder = builder.tool(echo(tool));
        }
        let session = builder.build().unwrap().create_session().await.unwrap();
        let outcome = session.send_typed::<Weather>("Weather in Paris?").await;
        assert_eq!(outcome.status, OutcomeStatus::Done, "{wire:?}: {:?}", outcome.error);
        assert_eq!(
            outcome.structured_as::<Weather>().unwrap(),
            Weather {
                city: "Paris".into(),
                temperature_c: 21,
                conditions: vec!["sunny".into(), "light wind".into()],
            },
            "{wire:?}"
        );
        assert_eq!(outcome.tool_calls as usize, files.len() - 1, "{wire:?}");

        let requests = server.requests();
        assert_eq!(requests.len(), files.len(), "{wire:?}");
        for request in &requests {
            let body = &request.body;
            match wire {
                Wire::OpenAi => {
                    assert_eq!(body["response_format"]["type"], "json_schema");
                    assert_eq!(body["response_format"]["json_schema"]["name"], "Weather");
                    assert_eq!(body["tools"][0]["function"]["name"], "get_weather");
                }
                Wire::OpenAiResponses => {
                    assert_eq!(body["text"]["format"]["type"], "json_schema");
                    assert_eq!(body["text"]["format"]["name"], "Weather");
                }
                Wire::Anthropic => {
                    assert_eq!(body["tool_choice"], json!({"type": "any"}));
                    let names: Vec<&str> = body["tools"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|t| t["name"].as_str().unwrap())
                        .collect();
                    assert_eq!(names, ["get_weather", "final_answer"]);
                }
                Wire::Gemini => {
                    assert_eq!(body["generationConfig"]["responseMimeType"], "application/json");
                    assert_eq!(body["generationConfig"]["responseSchema"]["type"], "OBJECT");
                    assert!(body.get("tools").is_none());
                }
            }
        }
    }
}
