//! Sub-agents: an agent offered to another as a tool. Each call runs a turn of the sub-agent
//! in a session of its own, with its own tools, limits and system prompt; its answer is the
//! result; cancelling the calling turn cancels it; it acts for whoever started the calling
//! turn (its gate requests say so); what it spent is added to the calling turn's outcome.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Agent, OutcomeStatus};
use crate::async_trait;
use crate::message::Message;
use crate::tool::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec, schema_for};

/// Default of [`AgentTool::max_depth`]: sub-agents may call sub-agents of their own, three
/// levels below the first agent.
pub const DEFAULT_MAX_AGENT_DEPTH: u32 = 3;

/// The arguments the model gives a sub-agent.
#[derive(Debug, Deserialize, JsonSchema)]
struct AgentToolArgs {
    /// What the sub-agent should do, with everything it needs to know: it does not see this
    /// conversation.
    task: String,
}

/// An agent offered to another as a tool ([`agent_tool`]).
pub struct AgentTool {
    spec: ToolSpec,
    agent: Agent,
    max_depth: u32,
}

/// Offers `agent` to another agent as the tool `name`: each call runs one turn of `agent`, in
/// a new session, on the task the model gives, and answers with the sub-agent's final text.
///
/// ```
/// # async fn demo() -> Result<(), agent_core::AgentError> {
/// use agent_core::{Agent, ScriptedProvider, ScriptedReply, agent_tool};
/// let researcher = Agent::builder()
///     .provider(ScriptedProvider::new([ScriptedReply::text("Paris").into()]))
///     .system_prompt("You answer geography questions in one word.")
///     .build()?;
/// let lead = Agent::builder()
///     .provider(ScriptedProvider::new([]))
///     .tool(agent_tool("ask_researcher", "Ask the geography researcher.", researcher))
///     .build()?;
/// # let _ = lead; Ok(()) }
/// ```
pub fn agent_tool(name: impl Into<String>, description: impl Into<String>, agent: Agent) -> AgentTool {
    AgentTool {
        spec: ToolSpec::new(name, description, schema_for::<AgentToolArgs>()),
        agent,
        max_depth: DEFAULT_MAX_AGENT_DEPTH,
    }
}

impl AgentTool {
    /// How many levels of sub-agents may run below the first agent (default
    /// [`DEFAULT_MAX_AGENT_DEPTH`]): a call that would go deeper is refused.
    pub fn max_depth(mut self, depth: u32) -> Self {
        self.max_depth = depth;
        self
    }

    /// Runs it only with the gate's consent (like any tool).
    pub fn gated(mut self, gated: bool) -> Self {
        self.spec.gated = gated;
        self
    }
}

#[async_trait]
impl Tool for AgentTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: serde_json::Value, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let args: AgentToolArgs =
            serde_json::from_value(args).map_err(|e| ToolError::model(format!("invalid arguments: {e}")))?;
        let name = &self.spec.name;
        let depth = cx.depth.saturating_add(1);
        if depth > self.max_depth {
            return Err(ToolError::model(format!(
                "{name} was not run: sub-agents nest at most {} levels deep, and this call would be level {depth}. Do the task yourself or answer with what you have.",
                self.max_depth
            )));
        }
        let session = self
            .agent
            .create_session()
            .await
            .map_err(|e| ToolError::model(format!("{name} could not start: {e}")))?;
        // It acts for whoever started the calling turn, and stops when that turn is cancelled.
        let origin = cx.origin.clone();
        let outcome = session
            .send_nested(Message::user(args.task), origin, cx.cancel.child_token(), depth)
            .await;
        cx.spent
            .report(name, &outcome.usage, outcome.iterations, outcome.cost_usd);
        let answer = outcome.final_text.clone().unwrap_or_default();
        match outcome.status {
            OutcomeStatus::Done if !answer.trim().is_empty() => Ok(ToolOutput::text(answer)),
            OutcomeStatus::Done => Ok(ToolOutput::text(format!("{name} finished without an answer"))),
            OutcomeStatus::Capped => Ok(ToolOutput::text(format!(
                "{name} stopped at a limit ({}); what it had: {answer}",
                outcome.error.as_deref().unwrap_or("a cap")
            ))),
            OutcomeStatus::Cancelled => Err(ToolError::model(format!("{name} was cancelled"))),
            OutcomeStatus::Denied => Err(ToolError::model(format!(
                "{name} stopped: {}",
                outcome.error.as_deref().unwrap_or("a call was denied")
            ))),
            OutcomeStatus::AwaitingUser => Err(ToolError::model(format!(
                "{name} stopped to ask the person a question, which a sub-agent cannot: give it everything it needs in the task"
            ))),
            OutcomeStatus::AwaitingApproval => Err(ToolError::model(format!(
                "{name} stopped to wait for the person's approval of a call, which a sub-agent cannot: do that step yourself"
            ))),
            // A sub-agent's turns offer no external tools.
            OutcomeStatus::AwaitingTools => Err(ToolError::model(format!(
                "{name} stopped to wait for tool results from the host, which a sub-agent cannot: do that step yourself"
            ))),
            OutcomeStatus::Error => Err(ToolError::model(format!(
                "{name} failed: {}",
                outcome.error.as_deref().unwrap_or("unknown error")
            ))),
        }
    }
}
