//! Tools: the [`Tool`] trait, typed tools whose schema comes from the argument type, and
//! [`ToolSet`], which registers tools and validates arguments before any tool runs.

mod plain_schema;
mod schema_check;
mod set;
mod typed;

use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::message::ContentPart;
use crate::session::SessionId;
use crate::untrusted::Provenance;

pub(crate) use schema_check::SchemaCheck;
pub use set::{ArgumentError, ToolSet, ToolSetError};
pub use typed::{TypedTool, schema_for, tool_fn};

/// The environment variables a process started for a tool (a shell command, a stdio MCP
/// server) inherits from the host by default: what programs need to run, nothing secret. API
/// keys and tokens in the host's environment stay there unless the host passes them on by name.
pub const SAFE_ENV_VARS: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
];

/// The boxed error type carried by fatal tool errors (for example a host-language exception).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What the loop and the model know about a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Unique name within a tool set (`^[a-zA-Z0-9_-]{1,64}$` keeps every provider happy).
    pub name: String,
    /// What the tool does, written for the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
    /// Whether the host's gate must allow each call first.
    #[serde(default)]
    pub gated: bool,
    /// Whether the tool may run at the same time as other parallel-safe tools.
    #[serde(default)]
    pub parallel_safe: bool,
    /// The tool's own timeout; `None` uses the agent's default tool timeout.
    #[serde(default, with = "opt_millis")]
    pub timeout: Option<Duration>,
    /// Whether the tool's results are images (a screenshot tool): an agent whose model is not
    /// sent images does not offer it (see [`crate::AgentConfig::vision`]).
    #[serde(default)]
    pub returns_images: bool,
}

impl ToolSpec {
    /// A free, sequential tool with the agent's default timeout.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: serde_json::Value) -> Self {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters,
            gated: false,
            parallel_safe: false,
            timeout: None,
            returns_images: false,
        }
    }

    /// Sets whether calls need the gate's consent.
    pub fn gated(mut self, gated: bool) -> Self {
        self.gated = gated;
        self
    }

    /// Sets whether the tool may run alongside other parallel-safe tools.
    pub fn parallel_safe(mut self, parallel_safe: bool) -> Self {
        self.parallel_safe = parallel_safe;
        self
    }

    /// Sets the tool's own timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets whether the tool's results are images, offered only to a model sent images.
    pub fn returns_images(mut self, returns_images: bool) -> Self {
        self.returns_images = returns_images;
        self
    }
}

mod opt_millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(d) => s.serialize_some(&(d.as_millis() as u64)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration::from_millis))
    }
}

/// What a tool returns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// What the model sees: text and images.
    pub content: Vec<ContentPart>,
    /// The result as JSON, when the tool produced structured data. JSON results are stored raw
    /// and compressed (see [`crate::CompressionConfig`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<serde_json::Value>,
    /// Whether the content was cut to fit a cap.
    #[serde(default)]
    pub truncated: bool,
    /// Where the content came from when it is untrusted (a page, a file, a command, an MCP
    /// server, another tab). The loop then wraps the text the model sees, now and when replayed
    /// compressed in later turns, in nonce markers naming this source (see [`crate::untrusted`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
}

impl ToolOutput {
    /// A text result.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![ContentPart::text(text)],
            structured: None,
            truncated: false,
            provenance: None,
        }
    }

    /// A JSON result; the model sees it serialized.
    pub fn json(value: serde_json::Value) -> Self {
        ToolOutput {
            content: vec![ContentPart::text(value.to_string())],
            structured: Some(value),
            truncated: false,
            provenance: None,
        }
    }

    /// Marks the content as untrusted, from `source`: the loop wraps what the model sees of it.
    pub fn with_provenance(mut self, source: impl Into<Provenance>) -> Self {
        self.provenance = Some(source.into());
        self
    }

    /// Marks the output as truncated.
    pub fn with_truncated(mut self, truncated: bool) -> Self {
        self.truncated = truncated;
        self
    }

    /// All text parts joined.
    pub fn text_content(&self) -> String {
        let mut out = String::new();
        for part in &self.content {
            if let Some(t) = part.as_text() {
                out.push_str(t);
            }
        }
        out
    }
}

impl From<String> for ToolOutput {
    fn from(text: String) -> Self {
        ToolOutput::text(text)
    }
}

impl From<&str> for ToolOutput {
    fn from(text: &str) -> Self {
        ToolOutput::text(text)
    }
}

impl From<serde_json::Value> for ToolOutput {
    fn from(value: serde_json::Value) -> Self {
        ToolOutput::json(value)
    }
}

impl From<()> for ToolOutput {
    fn from(_: ()) -> Self {
        ToolOutput::text("ok")
    }
}

/// A tool failure, in two tiers.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The model sees the message as the tool's result and the loop goes on, so the model can
    /// recover (fix its arguments, try another approach).
    #[error("{message}")]
    ForModel {
        /// What went wrong, written for the model.
        message: String,
        /// Whether trying the same call again may succeed.
        retryable: bool,
    },
    /// Ends the turn with status `error`. Use for failures the model cannot fix (the host is
    /// gone, an invariant broke).
    #[error("{message}")]
    Fatal {
        /// What went wrong.
        message: String,
        /// The underlying error, kept so bindings can hand the original exception back.
        #[source]
        source: Option<BoxError>,
    },
}

impl ToolError {
    /// An error the model sees; the loop goes on.
    pub fn model(message: impl Into<String>) -> Self {
        ToolError::ForModel {
            message: message.into(),
            retryable: false,
        }
    }

    /// An error the model sees, marked retryable.
    pub fn retryable(message: impl Into<String>) -> Self {
        ToolError::ForModel {
            message: message.into(),
            retryable: true,
        }
    }

    /// An error that ends the turn.
    pub fn fatal(message: impl Into<String>) -> Self {
        ToolError::Fatal {
            message: message.into(),
            source: None,
        }
    }

    /// An error that ends the turn, keeping its cause.
    pub fn fatal_from(source: impl Into<BoxError>) -> Self {
        let source = source.into();
        ToolError::Fatal {
            message: source.to_string(),
            source: Some(source),
        }
    }

    /// Whether this error ends the turn.
    pub fn is_fatal(&self) -> bool {
        matches!(self, ToolError::Fatal { .. })
    }
}

/// What a tool call knows about where it runs.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The session the call belongs to.
    pub session_id: SessionId,
    /// The call's id (as the model gave it).
    pub call_id: String,
    /// Cancelled when the turn is cancelled or the call times out; long tools should watch it
    /// (the loop also drops the call's future).
    pub cancel: CancellationToken,
    /// Whether the model is sent images ([`crate::Agent::takes_images`]): a tool that can add
    /// an image to a result leaves it out when not.
    pub model_takes_images: bool,
    /// How many agents run above the one calling: 0, but 1 in a sub-agent's turn, and so on
    /// ([`crate::agent_tool`] caps it).
    pub depth: u32,
    /// Who started the turn (the person, or another tab's agent).
    pub origin: crate::TurnOrigin,
    /// Where a tool reports what its own model calls spent (a sub-agent's usage): the turn
    /// adds it to its outcome.
    pub spent: UsageMeter,
}

/// Collects the usage tools spend on model calls of their own, by tool name, for the turn's
/// [`Outcome`](crate::Outcome). Cheap to clone; every clone reports to the same place.
#[derive(Debug, Clone, Default)]
pub struct UsageMeter(std::sync::Arc<std::sync::Mutex<Vec<crate::SubAgentUsage>>>);

impl UsageMeter {
    /// Reports one call of `tool` that spent `usage` over `iterations` model calls, costing
    /// `cost_usd` (`None` when a price was unknown).
    pub fn report(&self, tool: &str, usage: &crate::Usage, iterations: u32, cost_usd: Option<f64>) {
        let mut all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let one = crate::SubAgentUsage {
            tool: tool.to_owned(),
            calls: 1,
            iterations,
            usage: *usage,
            cost_usd,
        };
        merge_by_tool(&mut all, one);
    }

    /// What was reported so far.
    pub fn reported(&self) -> Vec<crate::SubAgentUsage> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Adds what was reported to a turn's outcome: its usage, and the breakdown per tool.
    pub(crate) fn add_to(&self, outcome: &mut crate::Outcome) {
        for spent in self.reported() {
            outcome.usage.add(&spent.usage);
            outcome.spend.add_call(spent.cost_usd);
            merge_by_tool(&mut outcome.sub_agents, spent);
        }
    }
}

/// Adds `spent` to the entry of its tool in `all`, or adds it as the tool's entry. A cost
/// stays known only while every part of it is.
fn merge_by_tool(all: &mut Vec<crate::SubAgentUsage>, spent: crate::SubAgentUsage) {
    match all.iter_mut().find(|s| s.tool == spent.tool) {
        Some(entry) => {
            entry.calls += spent.calls;
            entry.iterations = entry.iterations.saturating_add(spent.iterations);
            entry.usage.add(&spent.usage);
            entry.cost_usd = entry.cost_usd.zip(spent.cost_usd).map(|(a, b)| a + b);
        }
        None => all.push(spent),
    }
}

impl ToolContext {
    /// A context for calling a tool outside the loop (tests, MCP servers, host code); images
    /// are taken.
    pub fn detached(session_id: SessionId, call_id: impl Into<String>) -> Self {
        ToolContext {
            session_id,
            call_id: call_id.into(),
            cancel: CancellationToken::new(),
            model_takes_images: true,
            depth: 0,
            origin: crate::TurnOrigin::Person,
            spent: UsageMeter::default(),
        }
    }
}

/// A capability the model can call.
///
/// Implement it directly for full control, or write an async function over a typed argument
/// struct and wrap it with [`tool_fn`], which derives the JSON Schema from the type.
#[async_trait]
pub trait Tool: Send + Sync {
    /// Name, description, schema and policy.
    fn spec(&self) -> &ToolSpec;

    /// Runs the tool. The arguments have already been validated against the schema.
    async fn call(&self, args: serde_json::Value, cx: ToolContext) -> Result<ToolOutput, ToolError>;

    /// Called once when a turn of `session_id` that offered this tool ends, whatever its
    /// outcome (cancelled and failed turns too), before the turn's outcome is returned: for a
    /// tool that can leave something waiting on the person's side (a page dialog the model did
    /// not answer). The loop waits for it at most [`TURN_END_TIMEOUT`]. Default: nothing.
    async fn turn_ended(&self, _session_id: &SessionId) {}

    /// The host (`www.example.com`, no scheme or port) of the web page a call with `args`
    /// would act on, for a tool that acts on one (the page tools: their tab's address as the
    /// browser reports it). Asked just before the gate of a gated call: the gate sees it
    /// ([`GateRequest::host`](crate::GateRequest::host)), a decision can be remembered for hosts
    /// matching a pattern ([`RememberScope::Host`](crate::RememberScope::Host)), and a call the
    /// gate or the person allowed on one host does not run if, by the time it would, the page
    /// is on another. Answer from a source the page cannot forge (the browser's address for
    /// the tab, not text or script values of the page). Default: `None` (no host; host rules
    /// never match).
    async fn target_host(&self, _args: &serde_json::Value) -> Option<String> {
        None
    }

    /// The sub-agent this tool runs, for [`agent_tool`](crate::agent_tool)'s tool: the loop
    /// resumes a sub-agent's turn parked for approval through it. Not for other tools.
    #[doc(hidden)]
    fn as_sub_agent(&self) -> Option<&crate::AgentTool> {
        None
    }
}

/// How long a turn's end waits for the tools' [`Tool::turn_ended`] hooks.
pub const TURN_END_TIMEOUT: Duration = Duration::from_secs(2);
