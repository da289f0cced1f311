//! What [`Session::drive`](crate::Session::drive) takes and how it fails.

use tokio_util::sync::CancellationToken;

use super::{ApprovalDecision, ApprovalError, ClarificationError};
use crate::gate::TurnOrigin;
use crate::message::Message;
use crate::steps::Steps;

/// What starts a turn driven by the host.
#[derive(Debug, Clone)]
pub enum TurnStart {
    /// A new message, from the person or from another tab ([`TurnOrigin::Tab`]).
    Message {
        /// The message.
        message: Message,
        /// Who sent it.
        origin: TurnOrigin,
    },
    /// The answer to the question the session is parked on (checked as
    /// [`Session::answer_clarification`](crate::Session::answer_clarification) checks it).
    Answer {
        /// The pending question's id.
        clarification_id: String,
        /// The person's answer.
        answer: String,
    },
    /// The person's decisions on the approval the session is parked on, one per call (checked
    /// as [`Session::resolve_approval`](crate::Session::resolve_approval) checks them).
    Approval {
        /// The pending approval's id.
        approval_id: String,
        /// A decision per call id.
        decisions: Vec<(String, ApprovalDecision)>,
    },
    /// The host's results of the external tool calls the session is parked on, one per call
    /// (checked as [`Session::submit_tool_results`](crate::Session::submit_tool_results) checks
    /// them; results that do not fit end the drive with an `error` outcome of kind
    /// `tool_results`, no turn runs, and the calls stay pending).
    ToolResults {
        /// The pending calls' id ([`PendingToolCalls::id`](crate::PendingToolCalls::id)).
        pending_id: String,
        /// A result per pending call.
        results: Vec<crate::ExternalToolResult>,
    },
}

/// How a driven turn runs.
#[derive(Debug, Clone)]
pub struct DriveOptions<'a> {
    /// The run's id, named by its `run_started` event (a durable executor passes one that is
    /// the same on every attempt).
    pub run_id: String,
    /// Cancels the turn.
    pub cancel: CancellationToken,
    /// How effects run.
    pub steps: Steps<'a>,
}

impl Default for DriveOptions<'_> {
    fn default() -> Self {
        DriveOptions {
            run_id: uuid::Uuid::new_v4().to_string(),
            cancel: CancellationToken::new(),
            steps: Steps::InProcess,
        }
    }
}

/// Why a driven turn produced no outcome.
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    /// The answer did not fit the pending question, or nothing is pending; the question stays.
    #[error(transparent)]
    Clarification(#[from] ClarificationError),
    /// The decisions do not fit the pending approval, or nothing is pending; it stays.
    #[error(transparent)]
    Approval(#[from] ApprovalError),
    /// The executor stopped the attempt ([`Interrupted::Engine`](crate::steps::Interrupted::Engine)):
    /// the turn wrote nothing after the step that stopped; the engine should retry it.
    #[error("the turn stopped at a step so that the engine can retry it: {0}")]
    Engine(String),
}
