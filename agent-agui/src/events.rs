//! The AG-UI events this crate sends, as the protocol spells them on the wire: a `type` field
//! in SCREAMING_SNAKE_CASE and camelCase fields. Absent optional fields are left out (the
//! protocol forbids `null` for them).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One AG-UI event (the subset this adapter produces).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE", rename_all_fields = "camelCase")]
pub enum AguiEvent {
    /// The run started.
    RunStarted {
        /// The thread (conversation).
        thread_id: String,
        /// The run, as the client named it.
        run_id: String,
        /// The protocol version the events follow.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        protocol_version: Option<String>,
    },
    /// The run ended without an error (completed, interrupted or cancelled: see `outcome`).
    RunFinished {
        /// The thread.
        thread_id: String,
        /// The run.
        run_id: String,
        /// What the run produced.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        /// How it ended.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<RunOutcome>,
        /// Tokens the run used.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Vec<TokenUsage>>,
    },
    /// The run failed.
    RunError {
        /// What went wrong.
        message: String,
        /// A stable name for the error's kind.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
    /// A step (here: one model call) started.
    StepStarted {
        /// The step's name.
        step_name: String,
    },
    /// A step finished.
    StepFinished {
        /// The step's name.
        step_name: String,
    },
    /// An assistant text message opens.
    TextMessageStart {
        /// The message.
        message_id: String,
        /// Its role (`assistant`).
        role: String,
    },
    /// A piece of a text message.
    TextMessageContent {
        /// The message.
        message_id: String,
        /// The text (never empty).
        delta: String,
    },
    /// A text message closes.
    TextMessageEnd {
        /// The message.
        message_id: String,
    },
    /// A tool call opens.
    ToolCallStart {
        /// The call.
        tool_call_id: String,
        /// The tool.
        tool_call_name: String,
        /// The assistant message the call belongs to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_message_id: Option<String>,
    },
    /// A piece of a tool call's arguments (JSON text).
    ToolCallArgs {
        /// The call.
        tool_call_id: String,
        /// The text.
        delta: String,
    },
    /// A tool call's arguments are complete.
    ToolCallEnd {
        /// The call.
        tool_call_id: String,
    },
    /// A tool call's result (a tool message).
    ToolCallResult {
        /// The tool message's id.
        message_id: String,
        /// The call.
        tool_call_id: String,
        /// The result as the model sees it.
        content: String,
        /// Always `tool`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<String>,
    },
    /// A reasoning span opens.
    ReasoningStart {
        /// The span (the same id as its message).
        message_id: String,
    },
    /// A reasoning message opens.
    ReasoningMessageStart {
        /// The message.
        message_id: String,
        /// Always `reasoning`.
        role: String,
    },
    /// A piece of reasoning text.
    ReasoningMessageContent {
        /// The message.
        message_id: String,
        /// The text (never empty).
        delta: String,
    },
    /// A reasoning message closes.
    ReasoningMessageEnd {
        /// The message.
        message_id: String,
    },
    /// A reasoning span closes.
    ReasoningEnd {
        /// The span.
        message_id: String,
    },
    /// Anything the protocol has no event for: the agent-core event, by name.
    Custom {
        /// The agent-core event's name (`model_routed`, `compaction_running`, ...).
        name: String,
        /// The agent-core event as JSON.
        value: Value,
    },
}

/// How a run ended, on `RUN_FINISHED`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum RunOutcome {
    /// The run completed.
    Success {},
    /// The run is paused until a new run's `resume` entries answer these.
    Interrupt {
        /// What the run waits for.
        interrupts: Vec<Interrupt>,
    },
    /// The run was stopped before it completed.
    Cancelled {},
}

/// Something a run needs from a person before it can go on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Interrupt {
    /// The id a resume entry answers.
    pub id: String,
    /// Why the run stopped (`clarification`).
    pub reason: String,
    /// The prompt for the person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The tool call the interrupt concerns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// A JSON Schema of the expected resume payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<Value>,
    /// When it stops being answerable (ISO 8601, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Extra information (the question's kind, title and options).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// Tokens used, on `RUN_FINISHED`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input plus output.
    pub total_tokens: u64,
    /// Reasoning tokens, when reported.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
    /// Input tokens read from the provider's cache, when reported.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_input_tokens: u64,
    /// Input tokens written to the provider's cache, when reported.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_input_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
