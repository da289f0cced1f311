//! OpenAI-compatible Chat Completions (`{base_url}/chat/completions`): OpenAI, OpenRouter,
//! Ollama, LM Studio, llama.cpp, vLLM, Groq, DeepSeek, LiteLLM.
//!
//! The wire translation is pure: [`request_body`] builds the JSON body, [`OpenAiDecoder`] turns
//! SSE events into [`StreamEvent`]s and [`parse_response`] reads a non-streamed body.

use agent_core::{
    CancellationToken, ContentPart, EventStream, FinishReason, ImageSource, Message, ModelRequest, Provider,
    ProviderError, Role, StreamEvent, Usage, async_trait,
};
use bytes::Bytes;
use futures::StreamExt;
use reqwest::Url;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::config::{ProviderConfig, header_map};
use crate::errors::{ErrorInfo, malformed_json};
use crate::json::JsonWriter;
use crate::limits::Limits;
use crate::reasoning_details::ReasoningDetails;
use crate::sse::SseEvent;
use crate::transport::{Transport, WireDecoder, parse_url};
use crate::util::{Text, new_call_id, truncated_call_error};

/// The default base URL (OpenAI itself).
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// Builds the Chat Completions request body as JSON.
pub fn request_body(model: &str, request: &ModelRequest, stream: bool) -> Value {
    serde_json::to_value(WireRequest::new(model, request, stream)).unwrap_or(Value::Null)
}

/// Builds the Chat Completions request body as bytes (what the adapter sends; no
/// intermediate JSON tree): the bytes `serde_json::to_vec` gives for [`request_body`]'s
/// structure, fields in wire order.
pub fn request_bytes(model: &str, request: &ModelRequest, stream: bool) -> Result<Vec<u8>, ProviderError> {
    let wire = WireRequest::new(model, request, stream);
    let mut w = JsonWriter::with_capacity(1024 + 192 * wire.messages.len() + 512 * wire.tools.len());
    wire.write(&mut w);
    Ok(w.buf)
}

#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<Value>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum WireMessage<'a> {
    System {
        content: Cow<'a, str>,
    },
    User {
        content: UserContent<'a>,
    },
    Assistant {
        content: Option<Cow<'a, str>>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireCall<'a>>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        reasoning_details: Vec<&'a Value>,
    },
    Tool {
        tool_call_id: &'a str,
        content: Cow<'a, str>,
    },
}

#[derive(Serialize)]
#[serde(untagged)]
enum UserContent<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<UserPart<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum UserPart<'a> {
    Text { text: &'a str },
    ImageUrl { image_url: ImageUrl },
}

#[derive(Serialize)]
struct ImageUrl {
    url: String,
}

#[derive(Serialize)]
struct WireCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionCall<'a>,
}

#[derive(Serialize)]
struct WireFunctionCall<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

/// The text of a message, borrowed when it is a single part.
fn text_of(m: &Message) -> Cow<'_, str> {
    match m.content.as_slice() {
        [ContentPart::Text { text }] => Cow::Borrowed(text),
        _ => Cow::Owned(m.text()),
    }
}

impl<'a> WireRequest<'a> {
    fn new(model: &'a str, request: &'a ModelRequest, stream: bool) -> Self {
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
            messages.push(WireMessage::System {
                content: Cow::Borrowed(system),
            });
        }
        for m in &request.messages {
            messages.push(match m.role {
                Role::System => WireMessage::System { content: text_of(m) },
                Role::User => WireMessage::User {
                    content: user_content(&m.content),
                },
                Role::Assistant => {
                    let text = text_of(m);
                    let content = if text.is_empty() && !m.tool_calls.is_empty() {
                        None
                    } else {
                        Some(text)
                    };
                    let tool_calls = m
                        .tool_calls
                        .iter()
                        .map(|c| WireCall {
                            id: &c.id,
                            kind: "function",
                            function: WireFunctionCall {
                                name: &c.name,
                                arguments: if c.arguments.trim().is_empty() {
                                    "{}"
                                } else {
                                    &c.arguments
                                },
                            },
                        })
                        .collect();
                    // OpenRouter's reasoning_details must come back unchanged.
                    let reasoning_details = m
                        .reasoning
                        .iter()
                        .flat_map(|r| r.opaque.iter())
                        .filter(|v| {
                            v.get("type")
                                .and_then(Value::as_str)
                                .is_some_and(|t| t.starts_with("reasoning."))
                        })
                        .collect();
                    WireMessage::Assistant {
                        content,
                        tool_calls,
                        reasoning_details,
                    }
                }
                Role::Tool => WireMessage::Tool {
                    tool_call_id: m.tool_call_id.as_deref().unwrap_or_default(),
                    content: text_of(m),
                },
            });
        }
        WireRequest {
            model,
            messages,
            tools: request
                .tools
                .iter()
                .map(|t| WireTool {
                    kind: "function",
                    function: WireFunction {
                        name: &t.name,
                        description: &t.description,
                        parameters: &t.parameters,
                    },
                })
                .collect(),
            max_tokens: request.max_output_tokens,
            temperature: request.temperature.map(crate::util::json_f32),
            stream,
            stream_options: stream.then_some(StreamOptions { include_usage: true }),
        }
    }
}

impl WireRequest<'_> {
    /// Writes the body as the derived `Serialize` does.
    fn write(&self, w: &mut JsonWriter) {
        w.raw("{\"model\":");
        w.string(self.model);
        w.raw(",\"messages\":[");
        for (i, m) in self.messages.iter().enumerate() {
            if i > 0 {
                w.raw(",");
            }
            m.write(w);
        }
        w.raw("]");
        if !self.tools.is_empty() {
            w.raw(",\"tools\":[");
            for (i, t) in self.tools.iter().enumerate() {
                if i > 0 {
                    w.raw(",");
                }
                w.raw("{\"type\":");
                w.string(t.kind);
                w.raw(",\"function\":{\"name\":");
                w.string(t.function.name);
                w.raw(",\"description\":");
                w.string(t.function.description);
                w.raw(",\"parameters\":");
                w.value(t.function.parameters);
                w.raw("}}");
            }
            w.raw("]");
        }
        if let Some(max_tokens) = self.max_tokens {
            w.raw(",\"max_tokens\":");
            w.u64(u64::from(max_tokens));
        }
        if let Some(temperature) = &self.temperature {
            w.raw(",\"temperature\":");
            w.value(temperature);
        }
        if self.stream {
            w.raw(",\"stream\":true");
        }
        if let Some(options) = &self.stream_options {
            w.raw(if options.include_usage {
                ",\"stream_options\":{\"include_usage\":true}"
            } else {
                ",\"stream_options\":{\"include_usage\":false}"
            });
        }
        w.raw("}");
    }
}

impl WireMessage<'_> {
    fn write(&self, w: &mut JsonWriter) {
        match self {
            WireMessage::System { content } => {
                w.raw("{\"role\":\"system\",\"content\":");
                w.string(content);
            }
            WireMessage::User { content } => {
                w.raw("{\"role\":\"user\",\"content\":");
                match content {
                    UserContent::Text(text) => w.string(text),
                    UserContent::Parts(parts) => {
                        w.raw("[");
                        for (i, part) in parts.iter().enumerate() {
                            if i > 0 {
                                w.raw(",");
                            }
                            match part {
                                UserPart::Text { text } => {
                                    w.raw("{\"type\":\"text\",\"text\":");
                                    w.string(text);
                                }
                                UserPart::ImageUrl { image_url } => {
                                    w.raw("{\"type\":\"image_url\",\"image_url\":{\"url\":");
                                    w.string(&image_url.url);
                                    w.raw("}");
                                }
                            }
                            w.raw("}");
                        }
                        w.raw("]");
                    }
                }
            }
            WireMessage::Assistant {
                content,
                tool_calls,
                reasoning_details,
            } => {
                w.raw("{\"role\":\"assistant\",\"content\":");
                match content {
                    Some(text) => w.string(text),
                    None => w.raw("null"),
                }
                if !tool_calls.is_empty() {
                    w.raw(",\"tool_calls\":[");
                    for (i, call) in tool_calls.iter().enumerate() {
                        if i > 0 {
                            w.raw(",");
                        }
                        w.raw("{\"id\":");
                        w.string(call.id);
                        w.raw(",\"type\":");
                        w.string(call.kind);
                        w.raw(",\"function\":{\"name\":");
                        w.string(call.function.name);
                        w.raw(",\"arguments\":");
                        w.string(call.function.arguments);
                        w.raw("}}");
                    }
                    w.raw("]");
                }
                if !reasoning_details.is_empty() {
                    w.raw(",\"reasoning_details\":[");
                    for (i, detail) in reasoning_details.iter().enumerate() {
                        if i > 0 {
                            w.raw(",");
                        }
                        w.value(detail);
                    }
                    w.raw("]");
                }
            }
            WireMessage::Tool { tool_call_id, content } => {
                w.raw("{\"role\":\"tool\",\"tool_call_id\":");
                w.string(tool_call_id);
                w.raw(",\"content\":");
                w.string(content);
            }
        }
        w.raw("}");
    }
}

fn user_content(parts: &[ContentPart]) -> UserContent<'_> {
    if parts.iter().all(|p| matches!(p, ContentPart::Text { .. })) {
        return UserContent::Text(match parts {
            [ContentPart::Text { text }] => Cow::Borrowed(text.as_str()),
            _ => Cow::Owned(parts.iter().filter_map(ContentPart::as_text).collect()),
        });
    }
    UserContent::Parts(
        parts
            .iter()
            .map(|p| match p {
                ContentPart::Text { text } => UserPart::Text { text },
                ContentPart::Image { media_type, source } => UserPart::ImageUrl {
                    image_url: ImageUrl {
                        url: match source {
                            ImageSource::Base64 { data } => format!("data:{media_type};base64,{data}"),
                            ImageSource::Url { url } => url.clone(),
                        },
                    },
                },
            })
            .collect(),
    )
}

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow)]
    choices: Option<Vec<Choice<'a>>>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    index: Option<u32>,
    #[serde(borrow)]
    delta: Option<Delta<'a>>,
    #[serde(borrow)]
    message: Option<Delta<'a>>,
    #[serde(borrow)]
    finish_reason: Option<Text<'a>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow)]
    content: Option<Text<'a>>,
    #[serde(borrow)]
    reasoning_content: Option<Text<'a>>,
    #[serde(borrow)]
    reasoning: Option<Text<'a>>,
    #[serde(borrow)]
    refusal: Option<Text<'a>>,
    #[serde(borrow)]
    tool_calls: Option<Vec<ToolCallDelta<'a>>>,
    reasoning_details: Option<Vec<Value>>,
}

#[derive(Deserialize)]
struct ToolCallDelta<'a> {
    index: Option<u32>,
    #[serde(borrow)]
    id: Option<Text<'a>>,
    #[serde(borrow)]
    function: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
struct FunctionDelta<'a> {
    #[serde(borrow)]
    name: Option<Text<'a>>,
    #[serde(borrow)]
    arguments: Option<Text<'a>>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    prompt_tokens_details: Option<PromptDetails>,
    completion_tokens_details: Option<CompletionDetails>,
    /// DeepSeek's cache counter.
    prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct PromptDetails {
    cached_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct CompletionDetails {
    reasoning_tokens: Option<u64>,
}

impl WireUsage {
    fn to_usage(&self) -> Usage {
        Usage {
            input_tokens: self.prompt_tokens,
            output_tokens: self.completion_tokens,
            cached_input_tokens: self
                .prompt_tokens_details
                .as_ref()
                .and_then(|d| d.cached_tokens)
                .or(self.prompt_cache_hit_tokens)
                .unwrap_or(0),
            reasoning_tokens: self
                .completion_tokens_details
                .as_ref()
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or(0),
        }
    }
}

#[derive(Debug, Default)]
struct Slot {
    index: u32,
    id: String,
    name: String,
    started: bool,
    ended: bool,
    args: String,
}

/// Decoder of the Chat Completions stream. Tool calls are assembled by `index` (a missing
/// index takes the next free slot), `reasoning_content`/`reasoning` become reasoning,
/// `reasoning_details` are merged by index and kept as opaque reasoning, and `Done` comes at
/// `[DONE]` (or at the end of a body that had a finish reason).
#[derive(Debug, Default)]
pub struct OpenAiDecoder {
    slots: Vec<Slot>,
    finish: Option<String>,
    refusal: bool,
    done: bool,
    details: ReasoningDetails,
    limits: Limits,
}

impl OpenAiDecoder {
    /// A decoder for one response, with the default [`Limits`].
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder for one response within `limits` (tool-call count and argument size).
    pub fn with_limits(limits: Limits) -> Self {
        OpenAiDecoder {
            limits,
            ..Self::default()
        }
    }

    fn on_delta(&mut self, delta: Delta<'_>, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        for text in [delta.reasoning_content, delta.reasoning].into_iter().flatten() {
            if !text.is_empty() {
                out.push(StreamEvent::ReasoningDelta {
                    text: text.into_owned(),
                });
            }
        }
        if let Some(details) = delta.reasoning_details {
            for d in details {
                self.details.merge(d);
            }
        }
        if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
            out.push(StreamEvent::TextDelta {
                text: text.into_owned(),
            });
        }
        if let Some(text) = delta.refusal.filter(|t| !t.is_empty()) {
            self.refusal = true;
            out.push(StreamEvent::TextDelta {
                text: text.into_owned(),
            });
        }
        for call in delta.tool_calls.into_iter().flatten() {
            self.on_tool_delta(call, out)?;
        }
        Ok(())
    }

    fn on_tool_delta(&mut self, call: ToolCallDelta<'_>, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let pos = match call.index {
            Some(index) => self.slots.iter().position(|s| s.index == index),
            // No index (older Ollama): a fragment with an id opens the next slot, one without
            // continues the last call.
            None if call.id.is_some() => None,
            None => self.slots.len().checked_sub(1),
        };
        let pos = match pos {
            Some(p) => p,
            None => {
                self.limits.check_tool_calls(self.slots.len() + 1)?;
                let index = call
                    .index
                    .unwrap_or_else(|| self.slots.iter().map(|s| s.index.saturating_add(1)).max().unwrap_or(0));
                self.slots.push(Slot {
                    index,
                    ..Slot::default()
                });
                self.slots.len() - 1
            }
        };
        let slot = &mut self.slots[pos];
        if let Some(id) = call.id.filter(|id| !id.is_empty())
            && slot.id.is_empty()
        {
            slot.id = id.into_owned();
        }
        let (name, args) = match call.function {
            Some(f) => (f.name, f.arguments),
            None => (None, None),
        };
        if let Some(name) = name.filter(|n| !n.is_empty())
            && slot.name.is_empty()
        {
            slot.name = name.into_owned();
        }
        if !slot.started && !slot.name.is_empty() {
            if slot.id.is_empty() {
                slot.id = new_call_id();
            }
            slot.started = true;
            out.push(StreamEvent::ToolCallStart {
                id: slot.id.clone(),
                name: slot.name.clone(),
                signature: None,
            });
            if !slot.args.is_empty() {
                out.push(StreamEvent::ToolArgsDelta {
                    id: slot.id.clone(),
                    json: slot.args.clone(),
                });
            }
        }
        if let Some(args) = args.filter(|a| !a.is_empty()) {
            self.limits
                .check_tool_args(&slot.name, slot.args.len().saturating_add(args.len()))?;
            slot.args.push_str(&args);
            if slot.started {
                out.push(StreamEvent::ToolArgsDelta {
                    id: slot.id.clone(),
                    json: args.into_owned(),
                });
            }
        }
        Ok(())
    }

    fn close_calls(&mut self, out: &mut Vec<StreamEvent>) {
        for slot in &mut self.slots {
            if slot.started && !slot.ended {
                slot.ended = true;
                out.push(StreamEvent::ToolCallEnd { id: slot.id.clone() });
            }
        }
    }

    fn finalize(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        self.done = true;
        if let Some(slot) = self.slots.iter().find(|s| !s.started) {
            return Err(ProviderError::Malformed(format!(
                "tool call at index {} never named its function",
                slot.index
            )));
        }
        let reason = map_finish(
            self.finish.as_deref().unwrap_or("stop"),
            !self.slots.is_empty(),
            self.refusal,
        );
        if reason == FinishReason::Length
            && let Some(slot) = self
                .slots
                .iter()
                .find(|s| serde_json::from_str::<Value>(&s.args).is_err())
        {
            return Err(truncated_call_error(&slot.name, &slot.id));
        }
        self.close_calls(out);
        for data in self.details.drain() {
            out.push(StreamEvent::ReasoningOpaque { data });
        }
        out.push(StreamEvent::Done { finish_reason: reason });
        Ok(())
    }
}

impl WireDecoder for OpenAiDecoder {
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if self.done {
            return Ok(());
        }
        let data = event.data.trim();
        if data == "[DONE]" {
            if self.finish.is_none() {
                return Err(ProviderError::Malformed(
                    "the stream ended ([DONE]) before any finish_reason".into(),
                ));
            }
            return self.finalize(out);
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| malformed_json("a stream chunk", data, &e))?;
        if let Some(error) = chunk.error {
            return Err(ErrorInfo::from_value(&json!({ "error": error })).into_stream_error(500));
        }
        for choice in chunk.choices.into_iter().flatten() {
            if choice.index.unwrap_or(0) != 0 {
                continue;
            }
            if let Some(delta) = choice.delta.or(choice.message) {
                self.on_delta(delta, out)?;
            }
            if let Some(reason) = choice.finish_reason
                && self.finish.is_none()
            {
                self.finish = Some(reason.into_owned());
                self.close_calls(out);
            }
        }
        if let Some(usage) = chunk.usage {
            out.push(StreamEvent::Usage {
                usage: usage.to_usage(),
            });
        }
        Ok(())
    }

    fn on_end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if self.done {
            return Ok(());
        }
        if self.finish.is_none() {
            return Err(ProviderError::Malformed(
                "the stream ended before the model finished (no finish_reason, no [DONE])".into(),
            ));
        }
        self.finalize(out)
    }
}

fn map_finish(reason: &str, has_calls: bool, refusal: bool) -> FinishReason {
    match reason {
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        // Some servers (older Ollama) end tool calls with "stop".
        "stop" | "end_turn" | "eos" if has_calls => FinishReason::ToolCalls,
        "stop" | "end_turn" | "eos" if refusal => FinishReason::ContentFilter,
        "stop" | "end_turn" | "eos" => FinishReason::Stop,
        "length" | "max_tokens" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

/// Reads a non-streamed Chat Completions body into the same events a stream would give.
pub fn parse_response(body: &[u8]) -> Result<Vec<StreamEvent>, ProviderError> {
    parse_response_with(body, Limits::default())
}

/// [`parse_response`] within `limits` (tool-call count and argument size).
pub fn parse_response_with(body: &[u8], limits: Limits) -> Result<Vec<StreamEvent>, ProviderError> {
    let text = || String::from_utf8_lossy(body);
    let chunk: Chunk = serde_json::from_slice(body).map_err(|e| malformed_json("the response body", &text(), &e))?;
    if let Some(error) = chunk.error {
        return Err(ErrorInfo::from_value(&json!({ "error": error })).into_stream_error(500));
    }
    let choice = chunk.choices.and_then(|c| c.into_iter().next()).ok_or_else(|| {
        ProviderError::Malformed(format!("the response has no choices: {}", crate::sse::excerpt(&text())))
    })?;
    let mut decoder = OpenAiDecoder::with_limits(limits);
    let mut out = Vec::new();
    if let Some(message) = choice.message.or(choice.delta) {
        // Whole tool calls have no index: number them in order.
        let mut message = message;
        if let Some(calls) = message.tool_calls.as_mut() {
            for (i, c) in calls.iter_mut().enumerate() {
                c.index.get_or_insert(u32::try_from(i).unwrap_or(u32::MAX));
            }
        }
        decoder.on_delta(message, &mut out)?;
    }
    decoder.finish = Some(choice.finish_reason.map_or_else(|| "stop".into(), Text::into_owned));
    if let Some(usage) = chunk.usage {
        out.push(StreamEvent::Usage {
            usage: usage.to_usage(),
        });
    }
    decoder.finalize(&mut out)?;
    Ok(out)
}

/// The OpenAI-compatible Chat Completions adapter.
///
/// ```
/// use agent_providers::{OpenAiCompatible, ProviderConfig, ProviderKind};
/// let config = ProviderConfig::new(ProviderKind::OpenAiCompatible, "llama3.2", "unused-key")
///     .with_base_url("http://127.0.0.1:11434/v1");
/// let provider = OpenAiCompatible::new(&config).unwrap();
/// assert_eq!(provider.url(), "http://127.0.0.1:11434/v1/chat/completions");
/// ```
#[derive(Debug, Clone)]
pub struct OpenAiCompatible {
    model: String,
    url: Url,
    transport: Transport,
    streaming: bool,
    max_input_tokens: Option<u64>,
}

impl OpenAiCompatible {
    /// Builds the adapter from a configuration (its `kind` is not checked).
    pub fn new(config: &ProviderConfig) -> Result<Self, ProviderError> {
        let base = config
            .base_url
            .as_deref()
            .unwrap_or(DEFAULT_BASE_URL)
            .trim_end_matches('/');
        let url = if base.ends_with("/chat/completions") {
            base.to_owned()
        } else {
            format!("{base}/chat/completions")
        };
        let mut headers = header_map(&config.headers)?;
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let key = config.api_key.expose();
        if !key.is_empty() {
            let mut value = HeaderValue::from_str(&format!("Bearer {key}"))
                .map_err(|_| ProviderError::Config("the API key contains characters not allowed in a header".into()))?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        Ok(OpenAiCompatible {
            model: config.model.clone(),
            url: parse_url(&url)?,
            transport: Transport::new(config.http.clone(), key, headers)?,
            streaming: config.streaming,
            max_input_tokens: config.max_input_tokens,
        })
    }

    /// The endpoint this adapter posts to.
    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    /// The same adapter (sharing its connection pool) for another model.
    pub fn with_model(&self, model: impl Into<String>) -> Self {
        let mut other = self.clone();
        other.model = model.into();
        other
    }
}

#[async_trait]
impl Provider for OpenAiCompatible {
    fn id(&self) -> &str {
        "openai-compatible"
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn max_input_tokens(&self) -> Option<u64> {
        self.max_input_tokens
    }

    async fn stream(&self, request: &ModelRequest, cancel: CancellationToken) -> Result<EventStream, ProviderError> {
        let deadline = Instant::now() + self.transport.http.call_timeout;
        let body = request_bytes(&self.model, request, self.streaming)?;
        let response = self
            .transport
            .post(&self.url, Bytes::from(body), &cancel, deadline)
            .await?;
        if self.streaming {
            let decoder = OpenAiDecoder::with_limits(self.transport.http.limits());
            return Ok(self.transport.drive(response, decoder, cancel, deadline));
        }
        let body = self.transport.read_body(response, &cancel, deadline).await?;
        let events = parse_response_with(&body, self.transport.http.limits()).map_err(|e| self.transport.redact(e))?;
        Ok(futures::stream::iter(events.into_iter().map(Ok)).boxed())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Arc;

    use agent_core::{Reasoning, ToolCall, ToolSchema};
    use serde_json::json;

    use super::*;

    /// Everything the wire carries, with strings that need escapes.
    fn rich_request(temperature: Option<f32>, max_output_tokens: Option<u32>) -> ModelRequest {
        let mut thinking = Message::assistant_with_tools(
            "Let me \"check\" both.\n",
            vec![
                ToolCall {
                    id: "call_1".into(),
                    name: "get_weather".into(),
                    arguments: r#"{"city":"Paris\\n"}"#.into(),
                    signature: Some("sig".into()),
                },
                ToolCall::new("call_2", "now", &json!({})),
                ToolCall {
                    id: "call_3".into(),
                    name: "blank".into(),
                    arguments: "  ".into(),
                    signature: None,
                },
            ],
        );
        thinking.reasoning = Some(Reasoning {
            text: "thinking".into(),
            signature: None,
            opaque: vec![
                json!({"type": "reasoning.text", "text": "t\u{1}", "index": 0, "n": 1.25}),
                json!({"type": "redacted_thinking", "data": "x"}),
            ],
        });
        let mut system_message = Message::system("Be brief.");
        system_message.content.push(ContentPart::text(" Two parts."));
        ModelRequest {
            system: Some("You are a \u{7f}weather\u{2028} assistant 🌍.".into()),
            messages: vec![
                system_message,
                Message::user_parts(vec![
                    ContentPart::text("What's this?\t"),
                    ContentPart::Image {
                        media_type: "image/png".into(),
                        source: ImageSource::Base64 { data: "iVBO+/=".into() },
                    },
                    ContentPart::Image {
                        media_type: "image/jpeg".into(),
                        source: ImageSource::Url {
                            url: "https://example.invalid/a\"b.jpg".into(),
                        },
                    },
                ]),
                Message::user_parts(vec![ContentPart::text("two "), ContentPart::text("texts")]),
                thinking,
                Message::tool_result("call_1", "get_weather", r#"{"temp_c":21}"#, false),
                Message::tool_result("call_2", "now", "clock \\ unavailable", true),
                Message::assistant(""),
                Message::assistant("It is 21 °C."),
                Message::user("Thanks!"),
            ],
            tools: Arc::new(vec![
                ToolSchema {
                    name: "get_weather".into(),
                    description: "Current \"weather\".".into(),
                    parameters: json!({
                        "type": "object",
                        "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "default": 1.5}},
                        "required": ["city"],
                        "additionalProperties": false
                    }),
                },
                ToolSchema {
                    name: "now".into(),
                    description: String::new(),
                    parameters: json!({"type": "object", "properties": {}}),
                },
            ]),
            max_output_tokens,
            temperature,
        }
    }

    #[test]
    fn request_bytes_are_what_serde_writes() {
        let requests = [
            rich_request(Some(0.2), Some(1024)),
            rich_request(None, None),
            rich_request(Some(f32::NAN), Some(u32::MAX)),
            ModelRequest::default(),
            ModelRequest {
                system: Some(String::new()),
                messages: vec![Message::user("go")],
                ..ModelRequest::default()
            },
        ];
        for request in &requests {
            for stream in [true, false] {
                let ours = request_bytes("gpt-4.1", request, stream).unwrap();
                let serde = serde_json::to_vec(&WireRequest::new("gpt-4.1", request, stream)).unwrap();
                assert_eq!(String::from_utf8(ours).unwrap(), String::from_utf8(serde).unwrap());
            }
        }
    }
}
