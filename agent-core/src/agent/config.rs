use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::compress::CompressionConfig;

/// Default of [`AgentConfig::max_tool_calls`]: 12 tool calls per turn, as browser agents
/// commonly cap a turn, so a model stuck retrying a page stops within a few steps.
pub const DEFAULT_MAX_TOOL_CALLS: u32 = 12;

/// Output tokens a budget check assumes the next model call may generate when
/// [`AgentConfig::max_output_tokens`] is not set (see `docs/cost.md`).
pub const DEFAULT_BUDGET_OUTPUT_TOKENS: u32 = 4096;

/// Default of [`AgentConfig::max_images`].
pub const DEFAULT_MAX_IMAGES: u32 = 3;

/// What happens when the gate denies a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DenialPolicy {
    /// End the turn with status `denied` (the default: the person said no, so stop).
    #[default]
    EndTurn,
    /// Tell the model the call was denied and let it continue.
    TellModel,
}

/// Whether the model is sent images (screenshots, images in tool results and messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Vision {
    /// As the provider says its model does ([`crate::Provider::accepts_images`]); a model it
    /// does not know is sent none (the default: an image sent to a text-only model fails the
    /// call).
    #[default]
    Auto,
    /// The model takes images.
    On,
    /// The model takes no images: tools that return only images are not offered, and every
    /// image is replaced by a short note before a request leaves.
    Off,
}

/// The loop's limits and defaults. Every field has a default; `docs/defaults.md` lists them.
///
/// As data (the bindings, a config file) it takes the [options format](crate::options):
/// durations in milliseconds under keys ending `_ms`.
///
/// ```
/// use std::time::Duration;
/// let config: agent_core::AgentConfig =
///     serde_json::from_value(serde_json::json!({"max_iterations": 20, "tool_timeout_ms": 5000})).unwrap();
/// assert_eq!(config.tool_timeout, Duration::from_secs(5));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    /// Model calls per turn before the turn ends `capped` (default 100).
    pub max_iterations: u32,
    /// Tool calls per turn before the turn ends `capped` with its own message (default 12;
    /// `None`, or `null` as data, for unlimited).
    pub max_tool_calls: Option<u32>,
    /// The same tool called with the same arguments and getting the same result (or failing)
    /// this many times in a row gets a note telling the model it is stuck; one more such call
    /// ends the turn `capped` with its own message (default 3; 0 turns the guard off).
    pub max_repeated_calls: u32,
    /// The whole model call, stream included (default 180 s).
    #[serde(rename = "model_timeout_ms", with = "crate::options::duration_ms")]
    #[schemars(schema_with = "crate::options::millis_schema")]
    pub model_timeout: Duration,
    /// A tool call, unless its spec sets its own (default 60 s).
    #[serde(rename = "tool_timeout_ms", with = "crate::options::duration_ms")]
    #[schemars(schema_with = "crate::options::millis_schema")]
    pub tool_timeout: Duration,
    /// Parallel-safe tools running at once (default 3).
    pub max_parallel_tools: usize,
    /// Characters of a tool result sent to the model (default 20 000); longer results are cut
    /// and flagged as truncated.
    pub result_cap_chars: usize,
    /// Limits of the write-time JSON compression of tool results.
    pub compression: CompressionConfig,
    /// What a gate denial does.
    pub on_denial: DenialPolicy,
    /// Events buffered per run for slow subscribers (default 1024); a subscriber that falls
    /// further behind skips events (and a warning is logged). Rust event callbacks are called
    /// inline and never lose any; the Python and Node `on_event` callbacks, which run on their
    /// own event loop, have this many waiting per agent at most, and one that falls behind
    /// loses streamed tokens first (a warning says how many).
    pub event_buffer: usize,
    /// Upper bound on generated tokens per model call, passed to the provider.
    pub max_output_tokens: Option<u32>,
    /// Sampling temperature passed to the provider.
    pub temperature: Option<f32>,
    /// How long a clarification question waits for an answer (default 30 min).
    #[serde(rename = "clarification_ttl_ms", with = "crate::options::duration_ms")]
    #[schemars(schema_with = "crate::options::millis_schema")]
    pub clarification_ttl: Duration,
    /// How long a turn parked for approval waits for the person (default 30 min); then its
    /// calls do not run and the model is told.
    #[serde(rename = "approval_ttl_ms", with = "crate::options::duration_ms")]
    #[schemars(schema_with = "crate::options::millis_schema")]
    pub approval_ttl: Duration,
    /// When and how older turns are compacted to fit the model's context window.
    pub compaction: crate::compaction::CompactionConfig,
    /// Whether the model is sent images (default `auto`: as the provider knows its model).
    pub vision: Vision,
    /// Images sent per model call, the newest ones (default 3): older screenshots rarely
    /// matter and each costs about a thousand input tokens; the rest are replaced by a note.
    pub max_images: u32,
    /// Whether the pieces of a tool call's arguments are events as the model streams them
    /// (`tool_call_arguments_delta`; default `false`: most hosts only need the finished call).
    pub stream_tool_arguments: bool,
    /// The agent's name in traces: `invoke_agent {name}` spans and `gen_ai.agent.name`
    /// (default none: the span is named `invoke_agent`). See `docs/observability.md`.
    pub agent_name: Option<String>,
    /// Whether traces carry what was said: the messages and system prompt on `chat` spans,
    /// tool arguments and results on `execute_tool` spans (default `false`: conversations often
    /// hold personal data, and a trace backend is rarely the place for it).
    pub trace_content: bool,
    /// US dollars a turn may spend (its model calls and its sub-agents'); before a model call
    /// that could pass it, the turn ends `capped` with its own message (default none). See
    /// `docs/cost.md` for the estimate.
    pub max_run_cost_usd: Option<f64>,
    /// US dollars a session may spend over its turns in this process, checked the same way
    /// (default none).
    pub max_session_cost_usd: Option<f64>,
    /// Prices by model name that replace or add to the built-in table (`PriceTable::builtin`,
    /// listed in `docs/cost.md`), as `{"model": {"input": .., "cached_input": ..,
    /// "cache_write": .., "output": .., "reasoning": ..}}` in US dollars per million tokens
    /// (default none: the built-in table alone).
    pub prices: crate::pricing::PriceTable,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            max_iterations: 100,
            max_tool_calls: Some(DEFAULT_MAX_TOOL_CALLS),
            max_repeated_calls: 3,
            model_timeout: Duration::from_secs(180),
            tool_timeout: Duration::from_secs(60),
            max_parallel_tools: 3,
            result_cap_chars: 20_000,
            compression: CompressionConfig::default(),
            on_denial: DenialPolicy::EndTurn,
            event_buffer: 1024,
            max_output_tokens: None,
            temperature: None,
            clarification_ttl: Duration::from_secs(30 * 60),
            approval_ttl: Duration::from_secs(30 * 60),
            compaction: crate::compaction::CompactionConfig::default(),
            vision: Vision::Auto,
            max_images: DEFAULT_MAX_IMAGES,
            stream_tool_arguments: false,
            agent_name: None,
            trace_content: false,
            max_run_cost_usd: None,
            max_session_cost_usd: None,
            prices: crate::pricing::PriceTable::default(),
        }
    }
}
