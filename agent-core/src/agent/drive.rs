//! Turns driven by the host, in the host's own task: how a durable-execution engine runs a
//! turn (see [`crate::steps`]).

use std::sync::{Arc, Mutex};

use super::emit::Emitter;
use super::error_kind::ErrorKind;
use super::history::History;
use super::run::{Outcome, RunStatus};
use super::turn::{self, TurnInput, TurnParts, TurnSlot};
use super::{Agent, AgentError, DriveError, DriveOptions, Restore, Session, TurnStart};
use crate::session::SessionId;

impl Agent {
    /// A handle on stored session `id` as of sequence number `through_seq` (all of it for
    /// `None`), never shared with other handles: messages stored after `through_seq`, and a
    /// question or approval parked on calls it does not hold, are left out.
    ///
    /// For durable-execution engines, which replay a turn from the history it started from: the
    /// executor records the session's last sequence number as the turn's first step and loads a
    /// session with this for **every** attempt, the first included, so that each attempt
    /// decides the same steps (a handle kept from an earlier turn may have calibrated its
    /// token estimate differently). Without a store the session is not found.
    pub async fn session_at(&self, id: &SessionId, through_seq: Option<u64>) -> Result<Session, AgentError> {
        let store = self.stored_session(id).await?;
        let history = History::load_through(store.as_ref(), id, through_seq).await?;
        self.restore(store, id, history, Restore::Detached).await
    }
}

impl Session {
    /// Runs one turn in the caller's task and returns its outcome; with
    /// [`Steps::Durable`](crate::steps::Steps::Durable), every model call, tool call and
    /// summary is a step of the executor (tools then run one at a time). Events go to the
    /// agent's observers ([`AgentBuilder::on_event`](crate::AgentBuilder::on_event)); there is
    /// no [`Run`](crate::Run) handle: cancel with `options.cancel`.
    ///
    /// Fails with [`DriveError::Clarification`] or [`DriveError::Approval`] when an answer or
    /// decisions do not fit what is pending (which stays pending), and with [`DriveError::Engine`] when the executor
    /// stopped the attempt; the turn then wrote nothing after that step.
    pub async fn drive(&self, start: TurnStart, options: DriveOptions<'_>) -> Result<Outcome, DriveError> {
        let input = match start {
            TurnStart::Message { message, origin } => TurnInput::User {
                message,
                origin,
                output: None,
                tools: None,
            },
            TurnStart::Answer {
                clarification_id,
                answer,
            } => self.answer_input(&clarification_id, &answer)?,
            TurnStart::Approval { approval_id, decisions } => self.approval_input(&approval_id, decisions)?,
            TurnStart::ToolResults { pending_id, results } => match self.tool_results_input(&pending_id, results) {
                Ok(input) => input,
                // Refused before any turn runs: the calls stay pending.
                Err(e) => return Ok(Outcome::failed(ErrorKind::ToolResults, e.to_string())),
            },
        };
        let inner = &self.agent.inner;
        let emitter = Emitter {
            session_id: self.state.id.clone(),
            log: None,
            observers: inner.observers.clone(),
            status: Arc::new(Mutex::new(RunStatus::default())),
        };
        let slot = TurnSlot::queue(&self.state.history);
        let parts = TurnParts {
            agent: inner,
            state: &self.state,
            run_id: options.run_id,
            cancel: &options.cancel,
            emitter: &emitter,
            steps: options.steps,
        };
        turn::run_turn_with(parts, slot, input)
            .await
            .map_err(DriveError::Engine)
    }
}
