//! The host's side of external tools: a turn that offers them, and the results of their calls.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::external_tools;
use super::offered_tools::ExternalSet;
use super::pending_tools::{ExternalTool, ExternalToolError, ExternalToolResult, PendingToolCalls};
use crate::agent::turn::TurnInput;
use crate::agent::{Run, Session};
use crate::gate::TurnOrigin;
use crate::message::Message;

impl Session {
    /// Starts a turn with a user message that also offers the model `tools`, which the host
    /// runs itself (an AG-UI client's frontend tools, say). When the model calls one, the agent
    /// does not run it: the other calls of the same message run, then the turn ends
    /// `awaiting_tools` with the calls the host must run ([`crate::Outcome::external_calls`],
    /// also [`Session::pending_tool_calls`], persisted through the store), and
    /// [`Session::submit_tool_results`] continues it. Refused when a tool has the name of one
    /// of the agent's own tools, or parameters that are not a valid JSON Schema.
    pub fn send_with_tools(&self, message: Message, tools: Vec<ExternalTool>) -> Result<Run, ExternalToolError> {
        let tools = if tools.is_empty() {
            None
        } else {
            Some(Arc::new(ExternalSet::new(tools, &self.agent.inner.tool_snapshot())?))
        };
        let input = TurnInput::User {
            message,
            origin: TurnOrigin::Person,
            output: None,
            tools,
        };
        Ok(self.start(input, CancellationToken::new(), 0))
    }

    /// The external tool calls a turn of this session is parked on, if any (also after a
    /// restart: they are persisted, and [`crate::Agent::open_session`] picks them up).
    pub fn pending_tool_calls(&self) -> Option<PendingToolCalls> {
        self.state.external.get()
    }

    /// Continues the turn parked on external tool calls `pending_id` in a new [`Run`], with the
    /// host's results: one per pending call, by call id (the model reads them in its own
    /// order). The continued turn offers the same external tools. Refused, with the calls still
    /// pending, when a call has no result, a result names a call that is not pending, or a
    /// call has two.
    pub fn submit_tool_results(
        &self,
        pending_id: &str,
        results: impl IntoIterator<Item = ExternalToolResult>,
    ) -> Result<Run, ExternalToolError> {
        let input = self.tool_results_input(pending_id, results)?;
        Ok(self.start(input, CancellationToken::new(), 0))
    }

    /// The turn the results of the pending external calls start, when they fit.
    pub(super) fn tool_results_input(
        &self,
        pending_id: &str,
        results: impl IntoIterator<Item = ExternalToolResult>,
    ) -> Result<TurnInput, ExternalToolError> {
        let results: Vec<ExternalToolResult> = results.into_iter().collect();
        external_tools::check(&self.state, pending_id, &results)?;
        Ok(TurnInput::ToolResults {
            pending_id: pending_id.to_owned(),
            results,
        })
    }
}
