//! The turn's spans, through `tracing`, named and attributed per the OpenTelemetry GenAI
//! semantic conventions: `invoke_agent {name}` per turn, `chat {model}` per model call,
//! `execute_tool {name}` per tool call that runs (`docs/observability.md` lists the attributes).
//!
//! Tracing spans have static names, so the convention's name goes in `otel.name`, which
//! `tracing-opentelemetry` uses as the exported span's name.
//!
//! Free without a subscriber: the span macros evaluate their field values only for a span that
//! is enabled, and every `record_*` here returns at once for a disabled span, so a host that
//! does not collect traces pays no formatting, JSON or allocation for them.

use std::fmt;

use serde_json::{Value, json};
use tracing::field::Empty;
use tracing::{Span, info_span};

use super::AgentInner;
use super::run::Outcome;
use crate::message::{ContentPart, Message, Role, ToolCall};
use crate::provider::{FinishReason, ModelRequest, ModelResponse};
use crate::session::SessionId;
use crate::tool::ToolSpec;

/// The target of every span here, so a subscriber can select them (`agent_core=info` does).
const TARGET: &str = "agent_core::genai";

/// `{operation} {subject}`, or the operation alone when the subject is unknown.
struct SpanName<'a>(&'static str, Option<&'a str>);

impl fmt::Display for SpanName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(subject) => write!(f, "{} {subject}", self.0),
            None => f.write_str(self.0),
        }
    }
}

/// The convention's name for a provider id, where it has one; the id otherwise.
fn provider_name(id: &str) -> &str {
    match id {
        "openai-compatible" | "openai-responses" => "openai",
        "gemini" => "gcp.gemini",
        other => other,
    }
}

fn non_empty(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

/// The span of one turn. Its parent is the caller's current span: for a sub-agent, the
/// parent turn's `execute_tool` span.
pub(crate) fn invoke_agent(agent: &AgentInner, session: &SessionId) -> Span {
    let name = agent.config.agent_name.as_deref().and_then(non_empty);
    info_span!(
        target: TARGET,
        "invoke_agent",
        otel.name = %SpanName("invoke_agent", name),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "invoke_agent",
        gen_ai.provider.name = provider_name(agent.provider.id()),
        gen_ai.agent.name = name,
        gen_ai.conversation.id = session.as_str(),
        gen_ai.request.model = non_empty(agent.provider.model()),
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        agent_core.outcome.status = Empty,
        error.type = Empty,
    )
}

/// What the turn ended with: its status, the tokens it spent, and its error kind.
pub(crate) fn record_outcome(span: &Span, outcome: &Outcome) {
    if span.is_disabled() {
        return;
    }
    span.record("agent_core.outcome.status", outcome.status.as_str());
    span.record("gen_ai.usage.input_tokens", outcome.usage.input_tokens);
    span.record("gen_ai.usage.output_tokens", outcome.usage.output_tokens);
    if let Some(kind) = outcome.error_kind {
        record_error(span, kind.as_str());
    }
}

/// The span of one model call; with `trace_content`, it carries the request's messages.
pub(crate) fn chat(agent: &AgentInner, session: &SessionId, request: &ModelRequest) -> Span {
    let model = non_empty(agent.provider.model());
    let config = &agent.config;
    let span = info_span!(
        target: TARGET,
        "chat",
        otel.name = %SpanName("chat", model),
        otel.kind = "client",
        otel.status_code = Empty,
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = provider_name(agent.provider.id()),
        gen_ai.conversation.id = session.as_str(),
        gen_ai.request.model = model,
        gen_ai.request.max_tokens = request.max_output_tokens,
        gen_ai.request.temperature = config.temperature.map(f64::from),
        gen_ai.response.model = Empty,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.cache_creation.input_tokens = Empty,
        gen_ai.usage.reasoning.output_tokens = Empty,
        gen_ai.system_instructions = Empty,
        gen_ai.input.messages = Empty,
        gen_ai.output.messages = Empty,
        error.type = Empty,
    );
    if config.trace_content && !span.is_disabled() {
        if let Some(system) = &request.system {
            let instructions = json!([{"type": "text", "content": system}]);
            span.record("gen_ai.system_instructions", instructions.to_string());
        }
        let messages: Vec<Value> = request.messages.iter().map(message_json).collect();
        span.record("gen_ai.input.messages", Value::Array(messages).to_string());
    }
    span
}

/// What the model answered: the model that served it, why it stopped, the tokens, and with
/// `trace_content` the message.
pub(crate) fn record_response(span: &Span, agent: &AgentInner, response: &ModelResponse) {
    if span.is_disabled() {
        return;
    }
    let (provider, model) = match &response.served_by {
        Some((provider, model)) => (provider.as_str(), model.as_str()),
        None => (agent.provider.id(), agent.provider.model()),
    };
    span.record("gen_ai.provider.name", provider_name(provider));
    if let Some(model) = non_empty(model) {
        span.record("gen_ai.response.model", model);
    }
    let reason = finish_reason(&response.finish_reason);
    // A string array in the convention; tracing fields have no arrays, so its JSON text.
    span.record("gen_ai.response.finish_reasons", json!([reason]).to_string());
    if let Some(usage) = &response.usage {
        span.record("gen_ai.usage.input_tokens", usage.input_tokens);
        span.record("gen_ai.usage.output_tokens", usage.output_tokens);
        span.record("gen_ai.usage.cache_read.input_tokens", usage.cached_input_tokens);
        span.record("gen_ai.usage.cache_creation.input_tokens", usage.cache_write_tokens);
        span.record("gen_ai.usage.reasoning.output_tokens", usage.reasoning_tokens);
    }
    if agent.config.trace_content {
        let mut message = message_json(&response.message);
        message["finish_reason"] = json!(reason);
        span.record("gen_ai.output.messages", json!([message]).to_string());
    }
}

/// The span of one tool call that runs; with `trace_content`, it carries the arguments.
pub(crate) fn execute_tool(
    agent: &AgentInner,
    session: &SessionId,
    call: &ToolCall,
    spec: &ToolSpec,
    arguments: &Value,
) -> Span {
    let span = info_span!(
        target: TARGET,
        "execute_tool",
        otel.name = %SpanName("execute_tool", Some(&call.name)),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.conversation.id = session.as_str(),
        gen_ai.tool.name = call.name.as_str(),
        gen_ai.tool.call.id = call.id.as_str(),
        gen_ai.tool.type = "function",
        gen_ai.tool.description = spec.description.as_str(),
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
        error.type = Empty,
    );
    if agent.config.trace_content && !span.is_disabled() {
        span.record("gen_ai.tool.call.arguments", arguments.to_string());
    }
    span
}

/// The result the model reads of a tool call, with `trace_content`.
pub(crate) fn record_tool_result(span: &Span, agent: &AgentInner, text: &str) {
    if agent.config.trace_content && !span.is_disabled() {
        span.record("gen_ai.tool.call.result", text);
    }
}

/// Marks the span failed with `kind`, a stable low-cardinality name (`provider.timeout`,
/// `tool.fatal`, ...).
pub(crate) fn record_error(span: &Span, kind: &str) {
    if span.is_disabled() {
        return;
    }
    span.record("error.type", kind);
    span.record("otel.status_code", "ERROR");
}

fn finish_reason(reason: &FinishReason) -> &str {
    match reason {
        FinishReason::Stop => "stop",
        FinishReason::ToolCalls => "tool_calls",
        FinishReason::Length => "length",
        FinishReason::ContentFilter => "content_filter",
        FinishReason::Other(other) => other,
    }
}

/// A message in the convention's shape: `{role, parts: [{type, ...}]}`. Images are named by
/// their media type only: their bytes do not belong in a trace.
fn message_json(message: &Message) -> Value {
    let mut parts = Vec::new();
    for part in &message.content {
        match part {
            ContentPart::Text { text } if message.role == Role::Tool => parts.push(json!({
                "type": "tool_call_response",
                "id": message.tool_call_id,
                "result": text,
            })),
            ContentPart::Text { text } => parts.push(json!({"type": "text", "content": text})),
            ContentPart::Image { media_type, .. } => parts.push(json!({"type": "blob", "mime_type": media_type})),
        }
    }
    for call in &message.tool_calls {
        let arguments = serde_json::from_str::<Value>(&call.arguments).unwrap_or_else(|_| json!(call.arguments));
        parts.push(json!({"type": "tool_call", "id": call.id, "name": call.name, "arguments": arguments}));
    }
    json!({"role": message.role.as_str(), "parts": parts})
}
