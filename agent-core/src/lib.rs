//! # agent-core
//!
//! The core of an embeddable LLM agent runtime for web browsers: provider-neutral messages,
//! the [`Tool`], [`Provider`], [`Store`] and [`Gate`] traits, and the ReAct loop that drives
//! them with caps, timeouts, cancellation and a valid transcript however a turn ends.
//!
//! This crate names no HTTP client, database or browser. Provider adapters live in
//! `agent-providers`, the SQLite store in `agent-store`, filesystem/shell/page tools in
//! `agent-tools`.
//!
//! ```
//! use agent_core::{Agent, OutcomeStatus, ScriptedProvider, ScriptedReply, ToolContext, ToolError, tool_fn};
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct EchoArgs {
//!     /// Text to echo back.
//!     text: String,
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let echo = tool_fn("echo", "Echoes text.", |args: EchoArgs, _cx: ToolContext| async move {
//!     Ok::<_, ToolError>(args.text)
//! });
//! // ScriptedProvider replays a fixed script: it is not a model.
//! let provider = ScriptedProvider::new([
//!     ScriptedReply::tool_call("echo", serde_json::json!({"text": "hi"})).into(),
//!     ScriptedReply::text("The tool said hi.").into(),
//! ]);
//! let agent = Agent::builder().provider(provider).tool(echo).build()?;
//! let session = agent.create_session().await?;
//! let outcome = session.send("Say hi through the tool").await;
//! assert_eq!(outcome.status, OutcomeStatus::Done);
//! assert_eq!(outcome.tool_calls, 1);
//! # Ok(()) }
//! ```

#![deny(missing_docs)]

// One path per item: the everyday API is re-exported at the root and the modules that hold it
// are private; the specialised families (`tabs`, `untrusted`, `options`, `steps`) are public modules.
mod agent;
mod compaction;
mod compress;
mod event;
mod gate;
mod message;
pub mod options;
mod pricing;
mod provider;
mod session;
pub mod steps;
mod store;
pub mod tabs;
mod tool;
pub mod untrusted;

pub use agent::{
    Agent, AgentBuilder, AgentConfig, AgentError, AgentTool, AnswerError, ApprovalCall, ApprovalDecision,
    ApprovalError, ApprovalRule, CLARIFICATION_TOOL, Clarification, ClarificationError, ClarificationKind,
    DEFAULT_BUDGET_OUTPUT_TOKENS, DEFAULT_MAX_AGENT_DEPTH, DEFAULT_MAX_IMAGES, DEFAULT_MAX_TOOL_CALLS, DenialPolicy,
    DriveError, DriveOptions, ErrorKind, EventObserver, ExternalCall, ExternalTool, ExternalToolError,
    ExternalToolResult, HookError, Hooks, ObservedBatch, ObserverReceiver, ObserverSender, Outcome, OutcomeStatus,
    PendingApproval, PendingToolCalls, RememberScope, Run, RunEvents, RunState, RunStatus, Session, SubAgentStep,
    SubAgentUsage, ToolCallDecision, ToolCallInfo, TurnStart, UnknownErrorKind, Vision, agent_tool, observer_channel,
};
pub use compaction::{CompactionConfig, SUMMARY_PREFIX, TokenEstimator, TrimReport, summary_message, trim_to_fit};
pub use compress::{CompressionConfig, compress_json, compress_json_in_place, compress_text, compress_value_text};
pub use event::{AgentEvent, EventKind};
pub use gate::{AllowAll, FnGate, Gate, GateDecision, GateRequest, TurnOrigin, gate_fn};
pub use message::{ContentPart, ImageSource, Message, Reasoning, Role, ToolCall, Visibility};
pub use pricing::{ModelPrice, PriceTable};
pub use provider::{
    ANSWER_TOOL, EncodingReuse, EventStream, FinishReason, ModelRequest, ModelResponse, OutputSchema, Provider,
    ProviderError, ProviderErrorKind, ResponseAssembler, ScriptStep, ScriptStepSpec, ScriptStepSpecError,
    ScriptedCallSpec, ScriptedErrorSpec, ScriptedProvider, ScriptedReply, StreamEvent, ToolSchema, Usage,
    collect_stream, with_answer_tool,
};
pub use session::{InvalidSessionId, SessionId};
pub use store::{
    Compaction, MemoryStore, SessionInfo, Store, StoreError, StoredMessage, ToolCallRecord, ToolCallState,
    session_key_prefix,
};
pub use tool::{
    ArgumentError, BoxError, SAFE_ENV_VARS, TURN_END_TIMEOUT, Tool, ToolContext, ToolError, ToolOutput, ToolSet,
    ToolSetError, ToolSpec, TypedTool, UsageMeter, schema_for, tool_fn,
};

/// Re-exported so hosts and tool authors use the same versions as the core.
pub use {async_trait::async_trait, schemars, serde_json, tokio_util::sync::CancellationToken};
