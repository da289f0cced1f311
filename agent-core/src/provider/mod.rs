//! The [`Provider`] trait: how the loop talks to a model.
//!
//! A provider turns a [`ModelRequest`] into a stream of [`StreamEvent`]s. Adapters for real
//! services live in the `agent-providers` crate; [`ScriptedProvider`] replays a script for tests,
//! benchmarks and the offline demo.

mod assemble;
mod error;
mod output_schema;
mod reuse;
mod script_spec;
mod scripted;

use std::sync::Arc;

use async_trait::async_trait;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::message::Message;

pub use assemble::{ResponseAssembler, collect_stream};
pub use error::{ProviderError, ProviderErrorKind};
pub use output_schema::{ANSWER_TOOL, OutputSchema, with_answer_tool};
pub use reuse::EncodingReuse;
pub use script_spec::{ScriptStepSpec, ScriptStepSpecError, ScriptedCallSpec, ScriptedErrorSpec};
pub use scripted::{ScriptStep, ScriptedProvider, ScriptedReply};

/// A tool as the model sees it: name, description and JSON Schema of the arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSchema {
    /// The tool's name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema (an object schema) of the arguments.
    pub parameters: serde_json::Value,
}

/// One model call's input, in provider-neutral form.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// The system prompt, sent the way each provider expects it.
    pub system: Option<String>,
    /// The conversation so far, oldest first, already filtered to what the model may see.
    pub messages: Vec<Message>,
    /// The tools the model may call.
    pub tools: Arc<Vec<ToolSchema>>,
    /// An upper bound on generated tokens, when the caller wants one.
    pub max_output_tokens: Option<u32>,
    /// Sampling temperature, when the caller wants one.
    pub temperature: Option<f32>,
    /// The JSON Schema the final answer must match, for a typed turn. Adapters use the
    /// provider's structured-output mode, or offer the [`ANSWER_TOOL`] where that mode cannot
    /// be combined with tools ([`with_answer_tool`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<OutputSchema>,
    /// What the previous request of the conversation left for encoding this one: the loop
    /// fills it so that a provider encodes only the messages added since. The default reuses
    /// nothing.
    #[serde(skip)]
    pub reuse: EncodingReuse,
}

/// Token counts reported by a provider.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Usage {
    /// Tokens of input (prompt), including the ones read from and written to the cache.
    pub input_tokens: u64,
    /// Tokens generated.
    pub output_tokens: u64,
    /// Input tokens served from the provider's cache (cache reads), when reported.
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Input tokens written to the provider's cache (Anthropic's cache creation), when
    /// reported.
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// Reasoning tokens, when reported (included in `output_tokens` by most providers).
    #[serde(default)]
    pub reasoning_tokens: u64,
}

impl Usage {
    /// Adds another usage report to this one.
    ///
    /// Saturating: the counts come from the model server, which may send any number.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cached_input_tokens = self.cached_input_tokens.saturating_add(other.cached_input_tokens);
        self.cache_write_tokens = self.cache_write_tokens.saturating_add(other.cache_write_tokens);
        self.reasoning_tokens = self.reasoning_tokens.saturating_add(other.reasoning_tokens);
    }
}

/// Why the model stopped generating.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A natural end of the answer.
    Stop,
    /// The model asked for tool calls.
    ToolCalls,
    /// The output-token limit was reached; the answer may be cut short.
    Length,
    /// The provider withheld content (safety filter, refusal, blocked prompt).
    ContentFilter,
    /// Anything else, with the provider's own word for it.
    Other(String),
}

/// One incremental piece of a streamed model response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// Which provider route serves this call (emitted by routers, optional otherwise).
    Served {
        /// The provider's id.
        provider: String,
        /// The model's name.
        model: String,
    },
    /// A piece of answer text.
    TextDelta {
        /// The text.
        text: String,
    },
    /// A piece of reasoning text.
    ReasoningDelta {
        /// The text.
        text: String,
    },
    /// An opaque reasoning signature to echo back (replaces any earlier one).
    ReasoningSignature {
        /// The signature.
        signature: String,
    },
    /// An opaque reasoning payload to echo back unchanged.
    ReasoningOpaque {
        /// The payload.
        data: serde_json::Value,
    },
    /// A tool call begins.
    ToolCallStart {
        /// The call id (synthesized by the adapter when the wire has none).
        id: String,
        /// The tool's name.
        name: String,
        /// Opaque provider data to echo with this call.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// A piece of a tool call's JSON arguments.
    ToolArgsDelta {
        /// The call id given in `ToolCallStart`.
        id: String,
        /// The next piece of JSON text.
        json: String,
    },
    /// A tool call's arguments are complete.
    ToolCallEnd {
        /// The call id.
        id: String,
    },
    /// Token usage (may come more than once; later reports replace earlier ones field-wise).
    Usage {
        /// The counts.
        usage: Usage,
    },
    /// The response is complete.
    Done {
        /// Why generation stopped.
        finish_reason: FinishReason,
    },
}

/// A boxed stream of stream events, as returned by [`Provider::stream`].
pub type EventStream = BoxStream<'static, Result<StreamEvent, ProviderError>>;

/// A complete, non-streamed model response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelResponse {
    /// The assistant message (text, tool calls, reasoning).
    pub message: Message,
    /// Token usage, when reported.
    pub usage: Option<Usage>,
    /// Why generation stopped.
    pub finish_reason: FinishReason,
    /// The route that served the call, when a router reported it.
    pub served_by: Option<(String, String)>,
}

/// A language model the loop can call.
///
/// Implementations translate the neutral [`ModelRequest`] into their wire format and the wire's
/// response back into [`StreamEvent`]s. Cancelling `cancel` must drop any in-flight request.
#[async_trait]
pub trait Provider: Send + Sync {
    /// A short identifier such as `openai-compatible`, used in events and logs.
    fn id(&self) -> &str;

    /// The model's name, when the provider knows it.
    fn model(&self) -> &str {
        ""
    }

    /// The model's maximum input tokens, when known (used by compaction).
    fn max_input_tokens(&self) -> Option<u64> {
        None
    }

    /// Whether the model takes images: `Some` when the provider knows its model, `None` when
    /// not (an agent with `vision: auto` then sends none).
    fn accepts_images(&self) -> Option<bool> {
        None
    }

    /// Starts a streamed model call. The request is borrowed: build the wire body before
    /// returning, so the stream owns everything it needs.
    async fn stream(&self, request: &ModelRequest, cancel: CancellationToken) -> Result<EventStream, ProviderError>;

    /// Makes a model call and returns the whole response. The default collects [`Self::stream`].
    async fn complete(
        &self,
        request: &ModelRequest,
        cancel: CancellationToken,
    ) -> Result<ModelResponse, ProviderError> {
        let stream = self.stream(request, cancel).await?;
        collect_stream(stream).await
    }
}

#[async_trait]
impl<P: Provider + ?Sized> Provider for Arc<P> {
    fn id(&self) -> &str {
        (**self).id()
    }
    fn model(&self) -> &str {
        (**self).model()
    }
    fn max_input_tokens(&self) -> Option<u64> {
        (**self).max_input_tokens()
    }
    fn accepts_images(&self) -> Option<bool> {
        (**self).accepts_images()
    }
    async fn stream(&self, request: &ModelRequest, cancel: CancellationToken) -> Result<EventStream, ProviderError> {
        (**self).stream(request, cancel).await
    }
    async fn complete(
        &self,
        request: &ModelRequest,
        cancel: CancellationToken,
    ) -> Result<ModelResponse, ProviderError> {
        (**self).complete(request, cancel).await
    }
}
