//! Events a run emits, serde-tagged so hosts can forward them as JSON.

use serde::{Deserialize, Serialize};

use crate::agent::Outcome;
use crate::gate::TurnOrigin;
use crate::provider::Usage;
use crate::session::SessionId;

/// One event of a run, tagged with the session it belongs to.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AgentEvent {
    /// The session.
    pub session_id: SessionId,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What happened. Serialized with a `type` field holding the snake_case name.
///
/// The final events hold their outcome boxed: every event is as large as the largest variant,
/// and events are moved through the loop and kept in each run's log, which a binding keeps as
/// long as the host holds the run. An outcome held inline made every event 576 bytes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    /// The turn started.
    RunStarted {
        /// The run's id.
        run_id: String,
        /// Who started the turn: the person, or another tab's agent.
        #[serde(default)]
        origin: TurnOrigin,
    },
    /// A model call is being made (one per iteration).
    ModelCallStarted {
        /// The iteration, from 1.
        iteration: u32,
    },
    /// A model call was served by this route (reported by routers).
    ModelRouted {
        /// The provider's id.
        provider: String,
        /// The model.
        model: String,
    },
    /// A piece of answer text.
    ContentToken {
        /// The text.
        text: String,
    },
    /// A piece of reasoning text.
    ReasoningToken {
        /// The text.
        text: String,
    },
    /// A model call finished.
    ModelCallCompleted {
        /// The iteration.
        iteration: u32,
        /// Reported usage, when there was one.
        usage: Option<Usage>,
        /// What the call cost in US dollars; `None` when the model's price is unknown or the
        /// call reported no usage (see `docs/cost.md`).
        #[serde(default)]
        cost_usd: Option<f64>,
    },
    /// A piece of a tool call's arguments as the model writes them (JSON text, in order; only
    /// with [`AgentConfig::stream_tool_arguments`](crate::AgentConfig::stream_tool_arguments)),
    /// so a UI can show the call forming. The arguments are checked only once complete.
    ToolCallArgumentsDelta {
        /// The call id.
        call_id: String,
        /// The tool the model is calling.
        name: String,
        /// The next piece of the arguments' JSON text.
        delta: String,
    },
    /// A tool started running.
    ToolCallStarted {
        /// The call id.
        call_id: String,
        /// The tool.
        name: String,
        /// The arguments.
        arguments: serde_json::Value,
    },
    /// A tool finished with a result.
    ToolCallSucceeded {
        /// The call id.
        call_id: String,
        /// The tool.
        name: String,
        /// The result as the model sees it (after the cap).
        output: String,
        /// Whether the result was cut.
        truncated: bool,
        /// How long it ran.
        duration_ms: u64,
    },
    /// A tool call failed, or never ran (invalid arguments, unknown tool, timeout, panic).
    ToolCallFailed {
        /// The call id.
        call_id: String,
        /// The tool (as the model named it).
        name: String,
        /// The error the model sees.
        error: String,
        /// Whether the failure ends the turn.
        fatal: bool,
    },
    /// The gate denied a call (or no gate was configured).
    ToolCallDenied {
        /// The call id.
        call_id: String,
        /// The tool.
        name: String,
        /// The reason.
        reason: String,
    },
    /// Compaction of older turns started.
    CompactionRunning {
        /// Estimated input tokens before compaction.
        estimated_tokens: u64,
        /// The budget that was exceeded.
        budget_tokens: u64,
    },
    /// Compaction finished.
    CompactionCompleted {
        /// Estimated input tokens after compaction.
        estimated_tokens: u64,
        /// How it was done: `summary` or `trim`.
        method: String,
    },
    /// The model asked the person a question; the turn is parked until it is answered.
    ClarificationPending {
        /// The question's id (answer with it).
        clarification_id: String,
        /// The question.
        question: serde_json::Value,
    },
    /// The person answered.
    ClarificationResponded {
        /// The question's id.
        clarification_id: String,
        /// The answer.
        answer: String,
    },
    /// The question expired unanswered.
    ClarificationExpired {
        /// The question's id.
        clarification_id: String,
    },
    /// The question was dismissed (run cancelled, a new message arrived, or the host
    /// dismissed it).
    ClarificationDismissed {
        /// The question's id.
        clarification_id: String,
        /// Why.
        reason: String,
    },
    /// A gated call waits for the person's approval; the turn is parked until it is answered.
    ApprovalPending {
        /// The approval's id (answer with it).
        approval_id: String,
        /// The approval ([`PendingApproval`](crate::PendingApproval) as data).
        approval: serde_json::Value,
    },
    /// The approval was answered (`resolution: "answered"`, with the decisions by call id) or
    /// dismissed (`"dismissed"`, with the reason: a new message, the run cancelled, the host).
    ApprovalResolved {
        /// The approval's id.
        approval_id: String,
        /// `answered` or `dismissed`.
        resolution: String,
        /// The decisions by call id, or `{"reason": ...}` for a dismissal.
        decisions: serde_json::Value,
    },
    /// The approval expired unanswered; its calls did not run.
    ApprovalExpired {
        /// The approval's id.
        approval_id: String,
    },
    /// A message for a busy tab was queued.
    MessageQueued {
        /// Messages waiting, including this one.
        queue_len: usize,
        /// `human` or `agent`.
        origin: String,
    },
    /// The turn ended normally (`done`, `denied` or `awaiting_user`).
    RunCompleted {
        /// The outcome.
        outcome: Box<Outcome>,
    },
    /// The turn ended with an error.
    RunFailed {
        /// The outcome (its `error` says why).
        outcome: Box<Outcome>,
    },
    /// The turn was cancelled.
    RunCancelled {
        /// The outcome.
        outcome: Box<Outcome>,
    },
    /// The turn hit a cap: iterations, tool calls, a repeated call, or a cost budget.
    RunCapped {
        /// The outcome.
        outcome: Box<Outcome>,
    },
}

#[cfg(test)]
impl AgentEvent {
    /// `kind` in a session of its own (for tests that need events but no run).
    pub(crate) fn in_new_session(kind: EventKind) -> AgentEvent {
        AgentEvent {
            session_id: SessionId::new_random(),
            kind,
        }
    }
}

impl EventKind {
    /// A piece of streamed text (answer, reasoning, a tool call's arguments), which the model
    /// call's message holds again in full once it ends: a reader that must skip something
    /// loses least by skipping these.
    pub fn is_token(&self) -> bool {
        matches!(
            self,
            EventKind::ContentToken { .. }
                | EventKind::ReasoningToken { .. }
                | EventKind::ToolCallArgumentsDelta { .. }
        )
    }

    /// The event's snake_case name (the `type` field of its JSON).
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::RunStarted { .. } => "run_started",
            EventKind::ModelCallStarted { .. } => "model_call_started",
            EventKind::ModelRouted { .. } => "model_routed",
            EventKind::ContentToken { .. } => "content_token",
            EventKind::ReasoningToken { .. } => "reasoning_token",
            EventKind::ModelCallCompleted { .. } => "model_call_completed",
            EventKind::ToolCallArgumentsDelta { .. } => "tool_call_arguments_delta",
            EventKind::ToolCallStarted { .. } => "tool_call_started",
            EventKind::ToolCallSucceeded { .. } => "tool_call_succeeded",
            EventKind::ToolCallFailed { .. } => "tool_call_failed",
            EventKind::ToolCallDenied { .. } => "tool_call_denied",
            EventKind::CompactionRunning { .. } => "compaction_running",
            EventKind::CompactionCompleted { .. } => "compaction_completed",
            EventKind::ClarificationPending { .. } => "clarification_pending",
            EventKind::ClarificationResponded { .. } => "clarification_responded",
            EventKind::ClarificationExpired { .. } => "clarification_expired",
            EventKind::ClarificationDismissed { .. } => "clarification_dismissed",
            EventKind::ApprovalPending { .. } => "approval_pending",
            EventKind::ApprovalResolved { .. } => "approval_resolved",
            EventKind::ApprovalExpired { .. } => "approval_expired",
            EventKind::MessageQueued { .. } => "message_queued",
            EventKind::RunCompleted { .. } => "run_completed",
            EventKind::RunFailed { .. } => "run_failed",
            EventKind::RunCancelled { .. } => "run_cancelled",
            EventKind::RunCapped { .. } => "run_capped",
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::agent::OutcomeStatus;

    #[test]
    fn an_event_stays_small_whatever_its_kind() {
        // Every event takes the room of the largest kind, and runs keep theirs in a log: a
        // kind holding something large inline (an outcome is over 500 bytes) makes every
        // token event that large. Box it instead.
        assert!(
            std::mem::size_of::<AgentEvent>() <= 128,
            "AgentEvent is {} bytes",
            std::mem::size_of::<AgentEvent>()
        );
    }

    #[test]
    fn a_final_event_carries_its_outcome_inline_in_json_and_back() {
        let mut outcome = Outcome::new(OutcomeStatus::Done);
        outcome.final_text = Some("the answer".to_owned());
        let event = AgentEvent::in_new_session(EventKind::RunCompleted {
            outcome: Box::new(outcome),
        });
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!(json["type"], "run_completed");
        assert_eq!(json["outcome"]["status"], "done");
        assert_eq!(json["outcome"]["final_text"], "the answer");
        let back: AgentEvent = serde_json::from_value(json).unwrap();
        match back.kind {
            EventKind::RunCompleted { outcome } => assert_eq!(outcome.final_text.as_deref(), Some("the answer")),
            other => panic!("read back as {}", other.name()),
        }
    }
}
