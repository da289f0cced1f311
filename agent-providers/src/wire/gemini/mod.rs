//! Google Gemini `generateContent` / `streamGenerateContent?alt=sse` (`x-goog-api-key`).
//!
//! The system prompt goes to `systemInstruction`, tools to `functionDeclarations` with their
//! JSON Schemas translated to Gemini's OpenAPI subset, tool results to `functionResponse`
//! parts that carry the function name, and every function call gets a unique id (synthesized
//! when the wire has none). Thought signatures are kept and sent back on the same part.
//! Any configured base URL is ignored.

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
pub use crate::gemini_schema::{MAX_SCHEMA_BYTES, MAX_SCHEMA_NODES, schema};
use crate::limits::Limits;
use crate::sse::SseEvent;
use crate::transport::{Transport, WireDecoder, parse_url};
use crate::util::new_call_id;

/// The Gemini API host. Configuration never changes it.
pub const API_ROOT: &str = "https://generativelanguage.googleapis.com";

/// Options of the Gemini request that the neutral [`ModelRequest`] does not carry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GeminiOptions {
    /// Ask for thought summaries (`thinkingConfig.includeThoughts`).
    pub include_thoughts: bool,
}

/// Builds the generateContent request body.
pub fn request_body(request: &ModelRequest, options: &GeminiOptions) -> Value {
    let mut contents: Vec<Value> = Vec::with_capacity(request.messages.len());
    let mut system: Vec<String> = request.system.iter().filter(|s| !s.is_empty()).cloned().collect();
    // Tool results need the function name: remember it per call id.
    let mut names: HashMap<&str, &str> = HashMap::new();
    for m in &request.messages {
        match m.role {
            Role::System => system.push(m.text()),
            Role::User => push_merged(&mut contents, "user", user_parts(&m.content)),
            Role::Assistant => {
                for c in &m.tool_calls {
                    names.insert(&c.id, &c.name);
                }
                let parts = model_parts(m);
                if !parts.is_empty() {
                    push_merged(&mut contents, "model", parts);
                }
            }
            Role::Tool => {
                let id = m.tool_call_id.as_deref().unwrap_or_default();
                let name = m
                    .tool_name
                    .as_deref()
                    .or_else(|| names.get(id).copied())
                    .unwrap_or_default();
                let key = if m.is_error { "error" } else { "result" };
                let mut response = json!({"name": name, "response": {key: m.text()}});
                if !id.is_empty() {
                    response["id"] = id.into();
                }
                push_merged(&mut contents, "user", vec![json!({"functionResponse": response})]);
            }
        }
    }
    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(contents));
    if !system.is_empty() {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": system.join("\n\n")}]}),
        );
    }
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                let mut d = json!({"name": t.name, "description": t.description});
                let params = schema(&t.parameters, &t.parameters, 0);
                if params
                    .get("properties")
                    .and_then(Value::as_object)
                    .is_some_and(|p| !p.is_empty())
                {
                    d["parameters"] = params;
                }
                d
            })
            .collect();
        body.insert("tools".into(), json!([{"functionDeclarations": declarations}]));
    }
    let mut generation = Map::new();
    if let Some(max) = request.max_output_tokens {
        generation.insert("maxOutputTokens".into(), max.into());
    }
    if let Some(t) = request.temperature {
        generation.insert("temperature".into(), crate::util::json_f32(t));
    }
    if options.include_thoughts {
        generation.insert("thinkingConfig".into(), json!({"includeThoughts": true}));
    }
    if !generation.is_empty() {
        body.insert("generationConfig".into(), Value::Object(generation));
    }
    Value::Object(body)
}

fn push_merged(contents: &mut Vec<Value>, role: &str, parts: Vec<Value>) {
    if let Some(last) = contents.last_mut()
        && last["role"] == role
        && let Some(Value::Array(existing)) = last.get_mut("parts")
    {
        existing.extend(parts);
        return;
    }
    contents.push(json!({"role": role, "parts": parts}));
}

fn user_parts(parts: &[ContentPart]) -> Vec<Value> {
    parts
        .iter()
        .map(|p| match p {
            ContentPart::Text { text } => json!({"text": text}),
            ContentPart::Image { media_type, source } => match source {
                ImageSource::Base64 { data } => json!({"inlineData": {"mimeType": media_type, "data": data}}),
                ImageSource::Url { url } => json!({"fileData": {"mimeType": media_type, "fileUri": url}}),
            },
        })
        .collect()
}

fn model_parts(m: &Message) -> Vec<Value> {
    let mut parts = Vec::new();
    let signature = m.reasoning.as_ref().and_then(|r| r.signature.as_deref());
    let text = m.text();
    if !text.is_empty() {
        let mut part = json!({"text": text});
        if let Some(sig) = signature {
            part["thoughtSignature"] = sig.into();
        }
        parts.push(part);
    }
    for call in &m.tool_calls {
        let args = match call.parse_arguments() {
            Ok(v @ Value::Object(_)) => v,
            _ => json!({}),
        };
        let mut part = json!({"functionCall": {"name": call.name, "args": args, "id": call.id}});
        if let Some(sig) = &call.signature {
            part["thoughtSignature"] = sig.as_str().into();
        }
        parts.push(part);
    }
    parts
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireResponse {
    candidates: Option<Vec<Candidate>>,
    usage_metadata: Option<WireUsage>,
    prompt_feedback: Option<PromptFeedback>,
    error: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    content: Option<Content>,
    finish_reason: Option<String>,
    index: Option<u32>,
}

#[derive(Deserialize)]
struct Content {
    parts: Option<Vec<Part>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Part {
    text: Option<String>,
    thought: Option<bool>,
    thought_signature: Option<String>,
    function_call: Option<FunctionCall>,
}

#[derive(Deserialize)]
struct FunctionCall {
    name: String,
    args: Option<Value>,
    id: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback {
    block_reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireUsage {
    prompt_token_count: Option<u64>,
    candidates_token_count: Option<u64>,
    thoughts_token_count: Option<u64>,
    cached_content_token_count: Option<u64>,
}

/// Decoder of the `alt=sse` stream (each event is a whole `GenerateContentResponse`; there is
/// no `[DONE]`: the end of the body ends the answer).
#[derive(Debug, Default)]
pub struct GeminiDecoder {
    finish: Option<FinishReason>,
    calls: usize,
    usage: Option<Usage>,
    limits: Limits,
}

impl GeminiDecoder {
    /// A decoder for one response, with the default [`Limits`].
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder for one response within `limits` (tool-call count and argument size).
    pub fn with_limits(limits: Limits) -> Self {
        GeminiDecoder {
            limits,
            ..Self::default()
        }
    }

    fn on_response(&mut self, r: WireResponse, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if let Some(error) = r.error {
            return Err(ErrorInfo::from_value(&json!({ "error": error })).into_stream_error(500));
        }
        if let Some(u) = r.usage_metadata {
            let thoughts = u.thoughts_token_count.unwrap_or(0);
            // Cumulative: the last report wins.
            self.usage = Some(Usage {
                input_tokens: u.prompt_token_count.unwrap_or(0),
                // Saturating: a hostile server's counts must not overflow.
                output_tokens: u.candidates_token_count.unwrap_or(0).saturating_add(thoughts),
                cached_input_tokens: u.cached_content_token_count.unwrap_or(0),
                reasoning_tokens: thoughts,
            });
        }
        let candidate = r
            .candidates
            .and_then(|c| c.into_iter().find(|c| c.index.unwrap_or(0) == 0));
        let Some(candidate) = candidate else {
            if let Some(reason) = r.prompt_feedback.and_then(|f| f.block_reason) {
                tracing::warn!(block_reason = %reason, "Gemini blocked the prompt");
                self.finish = Some(FinishReason::ContentFilter);
            }
            return Ok(());
        };
        for part in candidate.content.and_then(|c| c.parts).into_iter().flatten() {
            if let Some(call) = part.function_call {
                self.calls += 1;
                self.limits.check_tool_calls(self.calls)?;
                let json = call.args.map_or_else(|| "{}".to_owned(), |args| args.to_string());
                self.limits.check_tool_args(&call.name, json.len())?;
                let id = call.id.filter(|id| !id.is_empty()).unwrap_or_else(new_call_id);
                out.push(StreamEvent::ToolCallStart {
                    id: id.clone(),
                    name: call.name,
                    signature: part.thought_signature,
                });
                out.push(StreamEvent::ToolArgsDelta { id: id.clone(), json });
                out.push(StreamEvent::ToolCallEnd { id });
                continue;
            }
            let text = part.text.unwrap_or_default();
            if part.thought == Some(true) {
                if !text.is_empty() {
                    out.push(StreamEvent::ReasoningDelta { text });
                }
            } else if !text.is_empty() {
                out.push(StreamEvent::TextDelta { text });
            }
            if let Some(signature) = part.thought_signature {
                out.push(StreamEvent::ReasoningSignature { signature });
            }
        }
        if let Some(reason) = candidate.finish_reason {
            self.finish = Some(match reason.as_str() {
                "STOP" => FinishReason::Stop,
                "MAX_TOKENS" => FinishReason::Length,
                "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY" => {
                    FinishReason::ContentFilter
                }
                other => FinishReason::Other(other.to_owned()),
            });
        }
        Ok(())
    }

    fn finalize(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let Some(mut reason) = self.finish.take() else {
            return Err(ProviderError::Malformed(
                "the stream ended before a finishReason (truncated response)".into(),
            ));
        };
        // Gemini says STOP even when the turn ends in function calls.
        if reason == FinishReason::Stop && self.calls > 0 {
            reason = FinishReason::ToolCalls;
        }
        if let Some(usage) = self.usage.take() {
            out.push(StreamEvent::Usage { usage });
        }
        out.push(StreamEvent::Done { finish_reason: reason });
        Ok(())
    }
}

impl WireDecoder for GeminiDecoder {
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let data = event.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(());
        }
        let response: WireResponse =
            serde_json::from_str(data).map_err(|e| malformed_json("a stream chunk", data, &e))?;
        self.on_response(response, out)
    }

    fn on_end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        self.finalize(out)
    }
}

/// Reads a non-streamed generateContent body into the same events a stream would give.
pub fn parse_response(body: &[u8]) -> Result<Vec<StreamEvent>, ProviderError> {
    parse_response_with(body, Limits::default())
}

/// [`parse_response`] within `limits` (tool-call count and argument size).
pub fn parse_response_with(body: &[u8], limits: Limits) -> Result<Vec<StreamEvent>, ProviderError> {
    let text = String::from_utf8_lossy(body);
    let response: WireResponse =
        serde_json::from_slice(body).map_err(|e| malformed_json("the response body", &text, &e))?;
    let mut decoder = GeminiDecoder::with_limits(limits);
    let mut out = Vec::new();
    decoder.on_response(response, &mut out)?;
    decoder.finalize(&mut out)?;
    Ok(out)
}

/// The Gemini adapter.
///
/// ```
/// use agent_providers::{Gemini, ProviderConfig, ProviderKind};
/// let config = ProviderConfig::new(ProviderKind::Gemini, "gemini-2.5-flash", "key")
///     .with_base_url("http://127.0.0.1:9/ignored");
/// let gemini = Gemini::new(&config).unwrap();
/// assert_eq!(
///     gemini.url(),
///     "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
/// );
/// ```
#[derive(Debug, Clone)]
pub struct Gemini {
    model: String,
    api_root: String,
    url: Url,
    transport: Transport,
    streaming: bool,
    max_input_tokens: Option<u64>,
    options: GeminiOptions,
}

impl Gemini {
    /// Builds the adapter from a configuration (its `kind` is not checked; its `base_url` is
    /// ignored).
    pub fn new(config: &ProviderConfig) -> Result<Self, ProviderError> {
        if config.base_url.is_some() {
            tracing::debug!("the Gemini adapter ignores the configured base URL");
        }
        let mut headers = header_map(&config.headers)?;
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let key = config.api_key.expose();
        let mut value = HeaderValue::from_str(key)
            .map_err(|_| ProviderError::Config("the API key contains characters not allowed in a header".into()))?;
        value.set_sensitive(true);
        headers.insert("x-goog-api-key", value);
        let mut gemini = Gemini {
            model: config.model.trim_start_matches("models/").to_owned(),
            api_root: API_ROOT.to_owned(),
            url: parse_url(API_ROOT)?,
            transport: Transport::new(config.http.clone(), key, headers)?,
            streaming: config.streaming,
            max_input_tokens: config.max_input_tokens,
            options: GeminiOptions::default(),
        };
        gemini.url = gemini.endpoint()?;
        Ok(gemini)
    }

    fn endpoint(&self) -> Result<Url, ProviderError> {
        let method = if self.streaming {
            "streamGenerateContent?alt=sse"
        } else {
            "generateContent"
        };
        parse_url(&format!("{}/v1beta/models/{}:{method}", self.api_root, self.model))
    }

    /// Points the adapter at another host that serves the Gemini API (a loopback test server
    /// or a recording proxy). Configuration (`base_url`, `LLM_BASE_URL`) never sets this.
    pub fn with_api_root(mut self, root: impl Into<String>) -> Result<Self, ProviderError> {
        self.api_root = root.into().trim_end_matches('/').to_owned();
        self.url = self.endpoint()?;
        Ok(self)
    }

    /// Asks for thought summaries, which arrive as reasoning.
    pub fn with_thoughts(mut self, include: bool) -> Self {
        self.options.include_thoughts = include;
        self
    }

    /// The endpoint this adapter posts to.
    pub fn url(&self) -> String {
        if self.streaming {
            format!(
                "{}/v1beta/models/{}:streamGenerateContent?alt=sse",
                self.api_root, self.model
            )
        } else {
            format!("{}/v1beta/models/{}:generateContent", self.api_root, self.model)
        }
    }

    /// The same adapter (sharing its connection pool) for another model.
    pub fn with_model(&self, model: impl Into<String>) -> Result<Self, ProviderError> {
        let mut other = self.clone();
        other.model = model.into().trim_start_matches("models/").to_owned();
        other.url = other.endpoint()?;
        Ok(other)
    }
}

#[async_trait]
impl Provider for Gemini {
    fn id(&self) -> &str {
        "gemini"
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn max_input_tokens(&self) -> Option<u64> {
        self.max_input_tokens
    }

    async fn stream(&self, request: &ModelRequest, cancel: CancellationToken) -> Result<EventStream, ProviderError> {
        let deadline = Instant::now() + self.transport.http.call_timeout;
        let body = serde_json::to_vec(&request_body(request, &self.options))
            .map_err(|e| ProviderError::BadRequest(format!("could not encode the request: {e}")))?;
        let response = self
            .transport
            .post(&self.url, Bytes::from(body), &cancel, deadline)
            .await?;
        if self.streaming {
            let decoder = GeminiDecoder::with_limits(self.transport.http.limits());
            return Ok(self.transport.drive(response, decoder, cancel, deadline));
        }
        let body = self.transport.read_body(response, &cancel, deadline).await?;
        let events = parse_response_with(&body, self.transport.http.limits()).map_err(|e| self.transport.redact(e))?;
        Ok(futures::stream::iter(events.into_iter().map(Ok)).boxed())
    }
}
