//! The JSON bodies of the object's handlers.

use agent_core::ApprovalDecision;
use serde::{Deserialize, Serialize};

/// The body of `turn`: a message for the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnRequest {
    /// The message text.
    pub text: String,
    /// The run's id, which `cancel` names; give it, and send with the same `idempotency-key`
    /// header so that a retried submit is the same run. Without it: the invocation's
    /// idempotency key when the handler sees one, else the invocation id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The session that sent it, for a message from another tab (see `relay`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_session: Option<String>,
}

/// The body of `answer`: the person's answer to the question the session is parked on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerRequest {
    /// The pending question's id (the `clarification.id` of the turn that asked it).
    pub clarification_id: String,
    /// The answer.
    pub answer: String,
    /// The run's id, as for [`TurnRequest::run_id`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

/// The body of `approve`: the person's decisions on the calls the session is parked on for
/// approval. In JSON, `decisions` is a list of `[call id, decision]` pairs, a decision being
/// `{"decision": "approve"}` or `{"decision": "reject", "reason": "..."}` (agent-core's
/// `ApprovalDecision`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApproveRequest {
    /// The pending approval's id (the `approval.id` of the turn that parked).
    pub approval_id: String,
    /// A decision per call id.
    pub decisions: Vec<(String, ApprovalDecision)>,
    /// The run's id, as for [`TurnRequest::run_id`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

/// The body of `cancel`: which run of the session to stop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CancelRequest {
    /// The run's id.
    pub run_id: String,
}

/// What `cancel` did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CancelReply {
    /// The run's invocation, when the run had started (it was asked to cancel).
    pub invocation_id: Option<String>,
}

/// The body of `relay`: a message this session sends to another session's turn queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelayRequest {
    /// The receiving session's id.
    pub to: String,
    /// The message text.
    pub text: String,
    /// The receiving turn's run id (also the idempotency key of the delivery).
    pub run_id: String,
}

/// What a turn answers: its run id and its outcome (agent-core's `Outcome` as JSON: `status`,
/// `final_text`, `clarification`, `error`, usage and counts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnReply {
    /// The run's id.
    pub run_id: String,
    /// The outcome.
    pub outcome: serde_json::Value,
}
