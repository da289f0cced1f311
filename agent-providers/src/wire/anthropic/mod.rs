//! Anthropic Messages (`/v1/messages`, `x-api-key` and `anthropic-version` headers).
//!
//! The wire translation is pure: [`request_body`] builds the JSON body, [`AnthropicDecoder`]
//! turns SSE events into [`StreamEvent`]s and [`parse_response`] reads a non-streamed body.

use std::collections::HashMap;

use agent_core::{
    CancellationToken, ContentPart, EventStream, FinishReason, ImageSource, Message, ModelRequest, Provider,
    ProviderError, Role, StreamEvent, Usage, async_trait,
};
use bytes::Bytes;
use futures::StreamExt;
use reqwest::Url;
use reqwest::header::{CONTENT_TYPE, HeaderValue};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use crate::config::{ProviderConfig, header_map};
use crate::errors::{ErrorInfo, malformed_json};
use crate::limits::Limits;
use crate::sse::SseEvent;
use crate::transport::{Transport, WireDecoder, parse_url};
use crate::util::truncated_call_error;

/// The default base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The `anthropic-version` header sent.
pub const API_VERSION: &str = "2023-06-01";
/// `max_tokens` is required by the API: this is sent when the request sets no limit.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// Options of the Anthropic request that the neutral [`ModelRequest`] does not carry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnthropicOptions {
    /// Enables extended thinking with this token budget.
    pub thinking_budget: Option<u32>,
}

/// Builds the Messages request body.
pub fn request_body(model: &str, request: &ModelRequest, stream: bool, options: &AnthropicOptions) -> Value {
    let mut messages: Vec<Value> = Vec::with_capacity(request.messages.len());
    let mut system: Vec<String> = request.system.iter().filter(|s| !s.is_empty()).cloned().collect();
    for m in &request.messages {
        match m.role {
            Role::System => system.push(m.text()),
            Role::User => push_merged(&mut messages, "user", content_blocks(&m.content)),
            Role::Assistant => {
                let blocks = assistant_blocks(m);
                if !blocks.is_empty() {
                    push_merged(&mut messages, "assistant", blocks);
                }
            }
            Role::Tool => {
                let mut block = json!({
                    "type": "tool_result",
                    "tool_use_id": m.tool_call_id.as_deref().unwrap_or_default(),
                    "content": m.text(),
                });
                if m.is_error {
                    block["is_error"] = true.into();
                }
                push_merged(&mut messages, "user", vec![block]);
            }
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), model.into());
    if !system.is_empty() {
        body.insert("system".into(), system.join("\n\n").into());
    }
    body.insert("messages".into(), Value::Array(messages));
    body.insert(
        "max_tokens".into(),
        request.max_output_tokens.unwrap_or(DEFAULT_MAX_TOKENS).into(),
    );
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(budget) = options.thinking_budget {
        body.insert("thinking".into(), json!({"type": "enabled", "budget_tokens": budget}));
    } else if let Some(t) = request.temperature {
        // The API refuses a temperature together with thinking.
        body.insert("temperature".into(), crate::util::json_f32(t));
    }
    if stream {
        body.insert("stream".into(), true.into());
    }
    Value::Object(body)
}

/// Appends blocks to the last message when it has the same role (tool results that follow each
/// other become one user message), or starts a new message.
fn push_merged(messages: &mut Vec<Value>, role: &str, blocks: Vec<Value>) {
    if let Some(last) = messages.last_mut()
        && last["role"] == role
        && let Some(Value::Array(content)) = last.get_mut("content")
    {
        content.extend(blocks);
        return;
    }
    messages.push(json!({"role": role, "content": blocks}));
}

fn content_blocks(parts: &[ContentPart]) -> Vec<Value> {
    parts
        .iter()
        .filter(|p| p.as_text() != Some(""))
        .map(|p| match p {
            ContentPart::Text { text } => json!({"type": "text", "text": text}),
            ContentPart::Image { media_type, source } => match source {
                ImageSource::Base64 { data } => {
                    json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
                }
                ImageSource::Url { url } => json!({"type": "image", "source": {"type": "url", "url": url}}),
            },
        })
        .collect()
}

fn assistant_blocks(m: &Message) -> Vec<Value> {
    let mut blocks = Vec::new();
    if let Some(reasoning) = &m.reasoning {
        // Thinking goes back only with its signature (the API rejects unsigned thinking).
        if let Some(signature) = &reasoning.signature {
            blocks.push(json!({"type": "thinking", "thinking": reasoning.text, "signature": signature}));
        }
        for opaque in &reasoning.opaque {
            if opaque.get("type").and_then(Value::as_str) == Some("redacted_thinking") {
                blocks.push(opaque.clone());
            }
        }
    }
    blocks.extend(content_blocks(&m.content));
    for call in &m.tool_calls {
        let input = match call.parse_arguments() {
            Ok(v @ Value::Object(_)) => v,
            _ => json!({}),
        };
        blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
    }
    blocks
}

#[derive(Deserialize)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
}

#[derive(Debug, Default, Clone, Copy)]
struct UsageState {
    input: u64,
    cache_read: u64,
    cache_creation: u64,
    output: u64,
}

impl UsageState {
    /// Later reports are cumulative: each field present replaces the earlier value.
    fn update(&mut self, u: &WireUsage) {
        if let Some(v) = u.input_tokens {
            self.input = v;
        }
        if let Some(v) = u.cache_read_input_tokens {
            self.cache_read = v;
        }
        if let Some(v) = u.cache_creation_input_tokens {
            self.cache_creation = v;
        }
        if let Some(v) = u.output_tokens {
            self.output = v;
        }
    }

    fn to_usage(self) -> Usage {
        Usage {
            // Saturating: a hostile server's counts must not overflow.
            input_tokens: self
                .input
                .saturating_add(self.cache_read)
                .saturating_add(self.cache_creation),
            output_tokens: self.output,
            cached_input_tokens: self.cache_read,
            reasoning_tokens: 0,
        }
    }
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireEvent {
    MessageStart {
        message: StartMessage,
    },
    ContentBlockStart {
        index: u32,
        content_block: Value,
    },
    ContentBlockDelta {
        index: u32,
        delta: WireDelta,
    },
    ContentBlockStop {
        index: u32,
    },
    MessageDelta {
        delta: MessageDeltaBody,
        usage: Option<WireUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: Value,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct StartMessage {
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireDelta {
    TextDelta {
        text: String,
    },
    ThinkingDelta {
        thinking: String,
    },
    SignatureDelta {
        signature: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct MessageDeltaBody {
    stop_reason: Option<String>,
}

#[derive(Debug)]
enum Block {
    Text,
    Thinking,
    ToolUse {
        id: String,
        name: String,
        open: bool,
        /// Bytes of arguments received.
        args_len: usize,
    },
    Other,
}

/// Decoder of the Messages event stream: text, thinking (with signature), redacted thinking,
/// `tool_use` with `input_json_delta`, cumulative usage, stop reasons, and `error` events that
/// arrive after HTTP 200.
#[derive(Debug, Default)]
pub struct AnthropicDecoder {
    blocks: HashMap<u32, Block>,
    usage: UsageState,
    stop_reason: Option<String>,
    done: bool,
    /// Tool calls started.
    calls: usize,
    limits: Limits,
}

impl AnthropicDecoder {
    /// A decoder for one response, with the default [`Limits`].
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder for one response within `limits` (tool-call count and argument size).
    pub fn with_limits(limits: Limits) -> Self {
        AnthropicDecoder {
            limits,
            ..Self::default()
        }
    }

    fn start_block(&mut self, index: u32, block: &Value, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let str_of = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let kind = match block.get("type").and_then(Value::as_str).unwrap_or_default() {
            "text" => {
                let text = str_of("text");
                if !text.is_empty() {
                    out.push(StreamEvent::TextDelta { text });
                }
                Block::Text
            }
            "thinking" => {
                let text = str_of("thinking");
                if !text.is_empty() {
                    out.push(StreamEvent::ReasoningDelta { text });
                }
                let signature = str_of("signature");
                if !signature.is_empty() {
                    out.push(StreamEvent::ReasoningSignature { signature });
                }
                Block::Thinking
            }
            "redacted_thinking" => {
                out.push(StreamEvent::ReasoningOpaque { data: block.clone() });
                Block::Other
            }
            "tool_use" => {
                let (id, name) = (str_of("id"), str_of("name"));
                self.calls += 1;
                self.limits.check_tool_calls(self.calls)?;
                out.push(StreamEvent::ToolCallStart {
                    id: id.clone(),
                    name: name.clone(),
                    signature: None,
                });
                // A non-streamed body carries the whole input here.
                let mut args_len = 0;
                if let Some(input) = block
                    .get("input")
                    .filter(|i| i.as_object().is_some_and(|o| !o.is_empty()))
                {
                    let json = input.to_string();
                    args_len = json.len();
                    self.limits.check_tool_args(&name, args_len)?;
                    out.push(StreamEvent::ToolArgsDelta { id: id.clone(), json });
                }
                Block::ToolUse {
                    id,
                    name,
                    open: true,
                    args_len,
                }
            }
            _ => Block::Other,
        };
        self.blocks.insert(index, kind);
        Ok(())
    }

    fn on_wire(&mut self, event: WireEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        match event {
            WireEvent::MessageStart { message } => {
                if let Some(u) = message.usage {
                    self.usage.update(&u);
                }
            }
            WireEvent::ContentBlockStart { index, content_block } => self.start_block(index, &content_block, out)?,
            WireEvent::ContentBlockDelta { index, delta } => match (self.blocks.get_mut(&index), delta) {
                (Some(Block::Text), WireDelta::TextDelta { text }) if !text.is_empty() => {
                    out.push(StreamEvent::TextDelta { text })
                }
                (Some(Block::Thinking), WireDelta::ThinkingDelta { thinking }) if !thinking.is_empty() => {
                    out.push(StreamEvent::ReasoningDelta { text: thinking })
                }
                (Some(Block::Thinking), WireDelta::SignatureDelta { signature }) => {
                    out.push(StreamEvent::ReasoningSignature { signature })
                }
                (Some(Block::ToolUse { id, name, args_len, .. }), WireDelta::InputJsonDelta { partial_json })
                    if !partial_json.is_empty() =>
                {
                    *args_len = args_len.saturating_add(partial_json.len());
                    self.limits.check_tool_args(name, *args_len)?;
                    out.push(StreamEvent::ToolArgsDelta {
                        id: id.clone(),
                        json: partial_json,
                    })
                }
                (None, _) => {
                    return Err(ProviderError::Malformed(format!(
                        "content_block_delta for block {index}, which never started"
                    )));
                }
                _ => {}
            },
            WireEvent::ContentBlockStop { index } => {
                if let Some(Block::ToolUse { id, open, .. }) = self.blocks.get_mut(&index) {
                    *open = false;
                    out.push(StreamEvent::ToolCallEnd { id: id.clone() });
                }
            }
            WireEvent::MessageDelta { delta, usage } => {
                if delta.stop_reason.is_some() {
                    self.stop_reason = delta.stop_reason;
                }
                if let Some(u) = usage {
                    self.usage.update(&u);
                }
            }
            WireEvent::MessageStop => return self.finalize(out),
            WireEvent::Error { error } => {
                self.done = true;
                return Err(ErrorInfo::from_value(&json!({ "error": error })).into_stream_error(500));
            }
            WireEvent::Ping | WireEvent::Unknown => {}
        }
        Ok(())
    }

    fn finalize(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        self.done = true;
        let mut calls: Vec<(&u32, &Block)> = self.blocks.iter().collect();
        calls.sort_by_key(|(i, _)| **i);
        for (_, block) in calls {
            if let Block::ToolUse {
                id, name, open: true, ..
            } = block
            {
                // max_tokens while the tool_use block was still open: its input is cut short.
                return Err(truncated_call_error(name, id));
            }
        }
        let has_calls = self.blocks.values().any(|b| matches!(b, Block::ToolUse { .. }));
        let reason = match self.stop_reason.as_deref() {
            None | Some("end_turn") | Some("stop_sequence") | Some("pause_turn") if has_calls => {
                FinishReason::ToolCalls
            }
            None | Some("end_turn") | Some("stop_sequence") => FinishReason::Stop,
            Some("tool_use") => FinishReason::ToolCalls,
            Some("max_tokens") | Some("model_context_window_exceeded") => FinishReason::Length,
            Some("refusal") => FinishReason::ContentFilter,
            Some(other) => FinishReason::Other(other.to_owned()),
        };
        out.push(StreamEvent::Usage {
            usage: self.usage.to_usage(),
        });
        out.push(StreamEvent::Done { finish_reason: reason });
        Ok(())
    }
}

impl WireDecoder for AnthropicDecoder {
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if self.done {
            return Ok(());
        }
        // Real data lines are right-padded with spaces; serde_json allows trailing whitespace.
        let wire: WireEvent =
            serde_json::from_str(&event.data).map_err(|e| malformed_json("a stream event", &event.data, &e))?;
        self.on_wire(wire, out)
    }

    fn on_end(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if self.done {
            return Ok(());
        }
        Err(ProviderError::Malformed(
            "the stream ended before message_stop (truncated response)".into(),
        ))
    }
}

/// Reads a non-streamed Messages body into the same events a stream would give.
pub fn parse_response(body: &[u8]) -> Result<Vec<StreamEvent>, ProviderError> {
    parse_response_with(body, Limits::default())
}

/// [`parse_response`] within `limits` (tool-call count and argument size).
pub fn parse_response_with(body: &[u8], limits: Limits) -> Result<Vec<StreamEvent>, ProviderError> {
    let text = String::from_utf8_lossy(body);
    let value: Value = serde_json::from_slice(body).map_err(|e| malformed_json("the response body", &text, &e))?;
    if value.get("type").and_then(Value::as_str) == Some("error") {
        return Err(ErrorInfo::from_value(&value).into_stream_error(500));
    }
    let mut decoder = AnthropicDecoder::with_limits(limits);
    let mut out = Vec::new();
    if let Some(u) = value.get("usage").and_then(|u| WireUsage::deserialize(u).ok()) {
        decoder.usage.update(&u);
    }
    let content = value.get("content").and_then(Value::as_array).ok_or_else(|| {
        ProviderError::Malformed(format!("the response has no content: {}", crate::sse::excerpt(&text)))
    })?;
    for (i, block) in content.iter().enumerate() {
        let index = u32::try_from(i).unwrap_or(u32::MAX);
        decoder.start_block(index, block, &mut out)?;
        if let Some(Block::Thinking) = decoder.blocks.get(&index) {
            // start_block already emitted the whole thinking text and signature.
        }
        if let Some(Block::ToolUse { id, open, .. }) = decoder.blocks.get_mut(&index) {
            *open = false;
            out.push(StreamEvent::ToolCallEnd { id: id.clone() });
        }
    }
    decoder.stop_reason = value.get("stop_reason").and_then(Value::as_str).map(str::to_owned);
    decoder.finalize(&mut out)?;
    Ok(out)
}

/// The Anthropic Messages adapter.
#[derive(Debug, Clone)]
pub struct Anthropic {
    model: String,
    url: Url,
    transport: Transport,
    streaming: bool,
    max_input_tokens: Option<u64>,
    options: AnthropicOptions,
}

impl Anthropic {
    /// Builds the adapter from a configuration (its `kind` is not checked).
    pub fn new(config: &ProviderConfig) -> Result<Self, ProviderError> {
        let base = config
            .base_url
            .as_deref()
            .unwrap_or(DEFAULT_BASE_URL)
            .trim_end_matches('/');
        let url = if base.ends_with("/v1/messages") {
            base.to_owned()
        } else if base.ends_with("/v1") {
            format!("{base}/messages")
        } else {
            format!("{base}/v1/messages")
        };
        let mut headers = header_map(&config.headers)?;
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        let key = config.api_key.expose();
        let mut value = HeaderValue::from_str(key)
            .map_err(|_| ProviderError::Config("the API key contains characters not allowed in a header".into()))?;
        value.set_sensitive(true);
        headers.insert("x-api-key", value);
        Ok(Anthropic {
            model: config.model.clone(),
            url: parse_url(&url)?,
            transport: Transport::new(config.http.clone(), key, headers)?,
            streaming: config.streaming,
            max_input_tokens: config.max_input_tokens,
            options: AnthropicOptions::default(),
        })
    }

    /// Enables extended thinking with a token budget.
    pub fn with_thinking_budget(mut self, budget_tokens: u32) -> Self {
        self.options.thinking_budget = Some(budget_tokens);
        self
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
impl Provider for Anthropic {
    fn id(&self) -> &str {
        "anthropic"
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn max_input_tokens(&self) -> Option<u64> {
        self.max_input_tokens
    }

    async fn stream(&self, request: &ModelRequest, cancel: CancellationToken) -> Result<EventStream, ProviderError> {
        let deadline = Instant::now() + self.transport.http.call_timeout;
        let body = serde_json::to_vec(&request_body(&self.model, request, self.streaming, &self.options))
            .map_err(|e| ProviderError::BadRequest(format!("could not encode the request: {e}")))?;
        let response = self
            .transport
            .post(&self.url, Bytes::from(body), &cancel, deadline)
            .await?;
        if self.streaming {
            let decoder = AnthropicDecoder::with_limits(self.transport.http.limits());
            return Ok(self.transport.drive(response, decoder, cancel, deadline));
        }
        let body = self.transport.read_body(response, &cancel, deadline).await?;
        let events = parse_response_with(&body, self.transport.http.limits()).map_err(|e| self.transport.redact(e))?;
        Ok(futures::stream::iter(events.into_iter().map(Ok)).boxed())
    }
}
