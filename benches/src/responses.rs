//! The mock server's OpenAI Responses endpoint (`POST …/responses`): the same behaviour as the
//! chat-completions one (tool calls while fewer than `tool_steps × calls_per_step` tool results
//! follow the last user message, then the final text), in the Responses wire format: the
//! semantic SSE events (`response.created`, `response.output_item.added`,
//! `response.function_call_arguments.delta` / `.done`, `response.output_text.delta`,
//! `response.output_item.done`, `response.completed` with usage) or, without `"stream": true`,
//! the response object.

use std::borrow::Cow;
use std::sync::atomic::Ordering;

use serde::Deserialize;

use super::{MockLlm, esc};

#[derive(Deserialize)]
struct ResponsesRequest<'a> {
    #[serde(borrow, default)]
    model: Cow<'a, str>,
    #[serde(borrow, default)]
    input: Vec<InputItem<'a>>,
    #[serde(default)]
    stream: bool,
    #[serde(default)]
    tools: Vec<FunctionTool>,
}

/// An input item: a message (`role`) or another item (`type`, e.g. `function_call_output`).
#[derive(Deserialize)]
struct InputItem<'a> {
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "type")]
    kind: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct FunctionTool {
    #[serde(default)]
    name: String,
}

/// Usage as the Responses API reports it.
const USAGE: &str = r#"{"input_tokens":50,"input_tokens_details":{"cached_tokens":0},"output_tokens":10,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":60}"#;

impl MockLlm {
    /// The response to one Responses body: `(content type, body)`, or a 400 message.
    pub fn answer_responses(&self, body: &[u8]) -> Result<(&'static str, String), String> {
        let request: ResponsesRequest<'_> =
            serde_json::from_slice(body).map_err(|e| format!("bad request body: {e}"))?;
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        let results = request
            .input
            .iter()
            .rev()
            .take_while(|item| item.role.as_deref() != Some("user"))
            .filter(|item| item.kind.as_deref() == Some("function_call_output"))
            .count() as u64;
        let model = esc(&request.model);
        let wanted = self.config.tool_steps * self.config.calls_per_step;
        let output = if results < wanted {
            let tool = match (&self.config.tool, request.tools.first()) {
                (Some(t), _) => t.clone(),
                (None, Some(t)) => t.name.clone(),
                (None, None) => {
                    return Ok(respond(
                        &model,
                        n,
                        request.stream,
                        &[text_item(n, "(no tools offered)")],
                    ));
                }
            };
            let calls = self.config.calls_per_step.min(wanted - results);
            let args = esc(&self.config.arguments);
            (0..calls)
                .map(|i| Item::Call {
                    id: format!("fc_{n}_{i}"),
                    call_id: format!("call_{n}_{i}"),
                    name: esc(&tool),
                    arguments: args.clone(),
                })
                .collect::<Vec<_>>()
        } else {
            vec![text_item(n, &self.config.final_text)]
        };
        Ok(respond(&model, n, request.stream, &output))
    }
}

/// One output item, its strings already escaped for JSON.
enum Item {
    Call {
        id: String,
        call_id: String,
        name: String,
        arguments: String,
    },
    Text {
        id: String,
        text: String,
    },
}

fn text_item(n: u64, text: &str) -> Item {
    Item::Text {
        id: format!("msg_{n}"),
        text: esc(text),
    }
}

impl Item {
    /// The item as `response.output_item.added` shows it (nothing generated yet).
    fn started(&self) -> String {
        match self {
            Item::Call { id, call_id, name, .. } => format!(
                r#"{{"id":"{id}","type":"function_call","status":"in_progress","arguments":"","call_id":"{call_id}","name":"{name}"}}"#
            ),
            Item::Text { id, .. } => {
                format!(r#"{{"id":"{id}","type":"message","status":"in_progress","content":[],"role":"assistant"}}"#)
            }
        }
    }

    /// The finished item.
    fn done(&self) -> String {
        match self {
            Item::Call {
                id,
                call_id,
                name,
                arguments,
            } => format!(
                r#"{{"id":"{id}","type":"function_call","status":"completed","arguments":"{arguments}","call_id":"{call_id}","name":"{name}"}}"#
            ),
            Item::Text { id, text } => format!(
                r#"{{"id":"{id}","type":"message","status":"completed","content":[{{"type":"output_text","annotations":[],"text":"{text}"}}],"role":"assistant"}}"#
            ),
        }
    }
}

/// The response object with `output` and `status`.
fn response(model: &str, n: u64, status: &str, output: &str, usage: &str) -> String {
    format!(
        r#"{{"id":"resp_{n}","object":"response","created_at":0,"status":"{status}","model":"{model}","output":[{output}],"store":false,"usage":{usage}}}"#
    )
}

fn respond(model: &str, n: u64, stream: bool, items: &[Item]) -> (&'static str, String) {
    let done: Vec<String> = items.iter().map(Item::done).collect();
    let finished = response(model, n, "completed", &done.join(","), USAGE);
    if !stream {
        return ("application/json", finished);
    }
    let mut out = String::with_capacity(1024 * items.len() + 512);
    let mut seq = 0u32;
    let mut event = |kind: &str, data: String| {
        out.push_str(&format!(
            "event: {kind}\ndata: {{\"type\":\"{kind}\",\"sequence_number\":{seq},{data}}}\n\n"
        ));
        seq += 1;
    };
    event(
        "response.created",
        format!(r#""response":{}"#, response(model, n, "in_progress", "", "null")),
    );
    for (index, item) in items.iter().enumerate() {
        event(
            "response.output_item.added",
            format!(r#""output_index":{index},"item":{}"#, item.started()),
        );
        match item {
            Item::Call { id, arguments, .. } => {
                // The arguments in two pieces cut mid-JSON, as a model streams them.
                let cut = arguments.len() / 2;
                let cut = if arguments.is_char_boundary(cut) && !arguments[..cut].ends_with('\\') {
                    cut
                } else {
                    0
                };
                for piece in [&arguments[..cut], &arguments[cut..]] {
                    event(
                        "response.function_call_arguments.delta",
                        format!(r#""item_id":"{id}","output_index":{index},"delta":"{piece}""#),
                    );
                }
                event(
                    "response.function_call_arguments.done",
                    format!(r#""item_id":"{id}","output_index":{index},"arguments":"{arguments}""#),
                );
            }
            Item::Text { id, text } => event(
                "response.output_text.delta",
                format!(r#""item_id":"{id}","output_index":{index},"content_index":0,"delta":"{text}""#),
            ),
        }
        event(
            "response.output_item.done",
            format!(r#""output_index":{index},"item":{}"#, done[index]),
        );
    }
    event("response.completed", format!(r#""response":{finished}"#));
    ("text/event-stream", out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use serde_json::{Value, json};

    use crate::{MockConfig, MockLlm};

    /// The `data:` payloads of an SSE body, each parsed.
    fn events(body: &str) -> Vec<Value> {
        body.lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .map(|data| serde_json::from_str(data).unwrap())
            .collect()
    }

    fn request(results: usize, stream: bool) -> Vec<u8> {
        let mut input = vec![json!({"role": "user", "content": "go"})];
        for i in 0..results {
            input.push(json!({"type": "function_call", "call_id": format!("c{i}"), "name": "step", "arguments": "{}"}));
            input.push(json!({"type": "function_call_output", "call_id": format!("c{i}"), "output": "ok"}));
        }
        json!({"model": "m\"1", "input": input, "tools": [{"type": "function", "name": "step"}], "stream": stream})
            .to_string()
            .into_bytes()
    }

    #[test]
    fn calls_the_first_tool_until_enough_results_follow_then_answers() {
        let mock = MockLlm::new(MockConfig {
            tool_steps: 2,
            arguments: r#"{"q":"a \"b\""}"#.into(),
            ..MockConfig::default()
        });
        let (kind, body) = mock.answer_responses(&request(1, true)).unwrap();
        assert_eq!(kind, "text/event-stream");
        let events = events(&body);
        let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            [
                "response.created",
                "response.output_item.added",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "response.output_item.done",
                "response.completed"
            ]
        );
        let pieces: String = events[2..4].iter().map(|e| e["delta"].as_str().unwrap()).collect();
        assert_eq!(pieces, r#"{"q":"a \"b\""}"#);
        let done = &events[6]["response"];
        assert_eq!(done["model"], "m\"1");
        assert_eq!(done["output"][0]["name"], "step");
        assert_eq!(done["usage"]["output_tokens"], 10);

        let (kind, body) = mock.answer_responses(&request(2, false)).unwrap();
        assert_eq!(kind, "application/json");
        let response: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(response["status"], "completed");
        assert_eq!(response["output"][0]["content"][0]["text"], "All steps are done.");
        assert_eq!(mock.requests(), 2);
        assert!(mock.answer_responses(b"not json").is_err());
    }
}
