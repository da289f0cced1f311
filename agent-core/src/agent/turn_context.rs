//! The borrowed context of one running turn, shared by the loop and the concepts it calls into
//! (clarification, tool execution, context fitting). Its own module so that those concepts
//! need not import the loop that calls them.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::emit::Emitter;
use super::{AgentInner, SessionState};
use crate::gate::TurnOrigin;
use crate::session::SessionId;

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
}
