//! The borrowed context of one running turn, shared by the loop and the concepts it calls into
//! (clarification, tool execution, context fitting). Its own module so that those concepts
//! need not import the loop that calls them.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use tokio_util::sync::CancellationToken;

use super::emit::Emitter;
use super::offered_tools::ExternalSet;
use super::{AgentInner, SessionState};
use crate::gate::TurnOrigin;
use crate::session::SessionId;
use crate::steps::Steps;

/// A running turn: what it acts on and for whom. The concepts it calls into (clarification,
/// tool execution, context fitting) take it whole.
pub(crate) struct Turn<'a> {
    pub agent: &'a Arc<AgentInner>,
    pub state: &'a Arc<SessionState>,
    pub session: &'a SessionId,
    pub cancel: &'a CancellationToken,
    pub emitter: &'a Emitter,
    /// Who started the turn; every gate request says so.
    pub origin: &'a TurnOrigin,
    /// How many agents run above this one (0 but in a sub-agent's turn).
    pub depth: u32,
    /// How the turn's effects run: in place, or journaled by a durable executor.
    pub steps: Steps<'a>,
    /// Model calls made so far, which name the next one's step (`model:{n}`).
    pub model_steps: AtomicU32,
    /// Set when an executor interrupted a step to have the engine retry the attempt.
    pub engine_stop: std::sync::Mutex<Option<String>>,
    /// The tools the host runs itself that this turn offers, if any (set once, as it starts).
    pub external: std::sync::OnceLock<Arc<ExternalSet>>,
}

impl Turn<'_> {
    /// The tools offered to the model now: the agent's (a snapshot), and the turn's external
    /// tools when it has any.
    #[inline]
    pub fn offered_tools(&self) -> Arc<crate::tool::ToolSet> {
        let tools = self.agent.tool_snapshot();
        match self.external.get() {
            None => tools,
            Some(external) => external.offered(tools),
        }
    }

    /// The name of the next model call's step, stable across replays of the turn.
    pub fn next_model_step(&self) -> String {
        format!("model:{}", self.model_steps.fetch_add(1, Ordering::Relaxed) + 1)
    }
}
