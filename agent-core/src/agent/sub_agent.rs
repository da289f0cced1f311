//! Sub-agents: an agent offered to another as a tool. Each call runs a turn of the sub-agent
//! in a session of its own, with its own tools, limits and system prompt; its answer is the
//! result; cancelling the calling turn cancels it; it acts for whoever started the calling
//! turn (its gate requests say so); what it spent is added to the calling turn's outcome.
//!
//! A sub-agent's turn that parks for the person's approval parks the calling turn too: the
//! calling session's approval holds the sub-agent's calls, and answering it resumes the
//! sub-agent's turn, whose answer is then the result (see `approval::nested`).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::approval::{ApprovalCall, NestedDecisions, lift_nested};
use super::{Agent, Outcome, OutcomeStatus, Run, Session};
use crate::async_trait;
use crate::message::Message;
use crate::provider::OutputSchema;
use crate::session::SessionId;
use crate::tool::{Tool, ToolContext, ToolError, ToolOutput, ToolSet, ToolSpec, schema_for};

/// How many sub-agent sessions parked for approval one [`AgentTool`] keeps open at most; past
/// it the oldest is let go (a sub-agent with a store reopens it from there when answered).
const PARKED_SESSIONS: usize = 256;

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
    /// The schema of the sub-agent's answer, for a typed sub-agent.
    output: Option<OutputSchema>,
    /// The sub-agent's sessions parked for approval, kept open until their turn resumes (a
    /// sub-agent without a store has them nowhere else).
    parked: Mutex<VecDeque<Session>>,
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
        output: None,
        parked: Mutex::new(VecDeque::new()),
    }
}

impl AgentTool {
    /// How many levels of sub-agents may run below the first agent (default
    /// [`DEFAULT_MAX_AGENT_DEPTH`]): a call that would go deeper is refused.
    pub fn max_depth(mut self, depth: u32) -> Self {
        self.max_depth = depth;
        self
    }

    /// Makes the sub-agent's final answer a `T`: its turns are typed turns
    /// ([`Session::send_typed`]: the answer checked against `T`'s JSON Schema, with one
    /// corrective retry), and the call's result is the answer as JSON.
    pub fn typed<T: JsonSchema>(self) -> Self {
        let schema = OutputSchema::new(T::schema_name(), schema_for::<T>());
        self.output_schema(schema)
    }

    /// [`Self::typed`] with the schema given as JSON (what the bindings pass).
    pub fn output_schema(mut self, schema: OutputSchema) -> Self {
        self.output = Some(schema);
        self
    }

    /// Runs it only with the gate's consent (like any tool).
    pub fn gated(mut self, gated: bool) -> Self {
        self.spec.gated = gated;
        self
    }

    /// The tools the sub-agent offers now, to check the person's edits of its calls.
    pub(crate) fn tool_snapshot(&self) -> Arc<ToolSet> {
        self.agent.inner.tool_snapshot()
    }

    /// Continues the sub-agent's turn parked for approval with the person's decisions (the
    /// calling turn resumed from its own approval, which held the sub-agent's calls).
    pub(crate) async fn resume(&self, nested: &NestedDecisions, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let stuck = |e: &dyn std::fmt::Display| {
            ToolError::model(format!(
                "{} could not continue its task after the person's answer ({e}): start it again if it is still needed",
                self.spec.name
            ))
        };
        let session = self
            .agent
            .open_session(&nested.session_id)
            .await
            .map_err(|e| stuck(&e))?;
        self.release(&nested.session_id);
        let decisions = nested.decisions.clone();
        let depth = cx.depth.saturating_add(1);
        let run = session
            .resolve_nested(&nested.approval_id, decisions, cx.cancel.child_token(), depth)
            .map_err(|e| stuck(&e))?;
        self.finish(session, run, &cx).await
    }

    /// Waits for the sub-agent's turn and makes its outcome the call's result; a turn parked
    /// for approval parks the calling turn (the session is kept open until then).
    async fn finish(&self, session: Session, run: Run, cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let name = &self.spec.name;
        let outcome = run.await;
        cx.spent
            .report(name, &outcome.usage, outcome.iterations, outcome.cost_usd);
        if outcome.status == OutcomeStatus::AwaitingApproval
            && let Some(pending) = outcome.approval.clone()
        {
            let calls = lift_nested(pending, name, &cx.call_id, session.id());
            self.keep(session);
            return Err(ToolError::Fatal {
                message: format!(
                    "{name} stopped to wait for the person's approval, which a turn run by a durable engine cannot wait for in a sub-agent"
                ),
                source: Some(Box::new(SubAgentParked { calls })),
            });
        }
        answer(name, outcome)
    }

    fn keep(&self, session: Session) {
        let mut parked = self.parked.lock().unwrap_or_else(|p| p.into_inner());
        if parked.len() >= PARKED_SESSIONS {
            parked.pop_front();
        }
        parked.push_back(session);
    }

    fn release(&self, id: &SessionId) {
        let mut parked = self.parked.lock().unwrap_or_else(|p| p.into_inner());
        parked.retain(|s| s.id() != id);
    }
}

/// What a sub-agent's call ends with when the sub-agent's turn parked for approval: the
/// loop parks the calling turn on these calls instead of recording an error.
#[derive(Debug)]
pub(crate) struct SubAgentParked {
    pub calls: Vec<ApprovalCall>,
}

impl std::fmt::Display for SubAgentParked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a sub-agent waits for the person's approval of {} call(s)",
            self.calls.len()
        )
    }
}

impl std::error::Error for SubAgentParked {}

impl Session {
    /// [`Session::resolve_approval`] for a sub-agent's turn: cancelled with the calling turn,
    /// at the sub-agent's depth.
    pub(crate) fn resolve_nested(
        &self,
        approval_id: &str,
        decisions: Vec<(String, super::ApprovalDecision)>,
        cancel: CancellationToken,
        depth: u32,
    ) -> Result<Run, super::ApprovalError> {
        let input = self.approval_input(approval_id, decisions)?;
        Ok(self.start(input, cancel, depth))
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
        let output = self.output.clone();
        let run = session.send_nested(Message::user(args.task), origin, output, cx.cancel.child_token(), depth);
        self.finish(session, run, &cx).await
    }

    fn as_sub_agent(&self) -> Option<&AgentTool> {
        Some(self)
    }
}

/// The call's result for a sub-agent's turn that ended (did not park for approval).
fn answer(name: &str, outcome: Outcome) -> Result<ToolOutput, ToolError> {
    if outcome.status == OutcomeStatus::Done
        && let Some(checked) = outcome.structured
    {
        // A typed sub-agent's checked answer.
        return Ok(ToolOutput::json(checked));
    }
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
        // Only without the pending approval, which a parked outcome always has.
        OutcomeStatus::AwaitingApproval => Err(ToolError::model(format!(
            "{name} stopped to wait for the person's approval of a call, which could not be passed on: do that step yourself"
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
