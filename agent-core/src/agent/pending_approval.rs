//! What a turn parked for approval holds, and how the person answers it (the lifecycle is
//! in `approval`; these types stand alone so that outcomes can carry them).

use serde::{Deserialize, Serialize};

use crate::gate::TurnOrigin;
use crate::message::ToolCall;
use crate::store::StoreError;

/// One gated call waiting for the person's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalCall {
    /// The call's id (answer with it).
    pub call_id: String,
    /// The tool's name.
    pub tool: String,
    /// The validated arguments the call would run with.
    pub arguments: serde_json::Value,
    /// What the gate asked the person, when it said ([`GateDecision::Ask`](crate::GateDecision::Ask)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// The host of the page the call acts on, for a tool that says ([`Tool::target_host`](crate::Tool::target_host)):
    /// an approval runs the call only while its page is still on this host, and a decision can
    /// be remembered for hosts matching a pattern ([`RememberScope::Host`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The sub-agents the call waits in, outermost first, when a sub-agent's turn asked for
    /// it ([`agent_tool`](crate::agent_tool)); empty for the session's own calls. The call's id
    /// is then the calling tool call's id and the sub-agent's own, joined by `/`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub via: Vec<SubAgentStep>,
}

/// One sub-agent between a session and a call waiting for approval in a sub-agent's turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubAgentStep {
    /// The name of the tool the sub-agent is offered as.
    pub tool: String,
    /// The id of the call of that tool that started the sub-agent's turn.
    pub call_id: String,
    /// The sub-agent's session, parked on the approval.
    pub session_id: crate::SessionId,
    /// The sub-agent's own pending approval.
    pub approval_id: String,
}

/// A turn parked until the person approves or rejects a gated call: the outcome of a turn
/// whose gate answered [`GateDecision::Ask`](crate::GateDecision::Ask), persisted through the
/// store so that it can be answered after a restart
/// ([`Session::resolve_approval`](crate::Session::resolve_approval)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingApproval {
    /// The approval's id (answer with it).
    pub id: String,
    /// The calls waiting for an answer.
    pub calls: Vec<ApprovalCall>,
    /// The model's text in the message that made the calls, if it wrote any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Who started the turn: the person, or another tab's agent.
    #[serde(default)]
    pub origin: TurnOrigin,
    /// When the turn parked (ms since the epoch).
    pub asked_at_ms: i64,
    /// When the approval expires unanswered (ms since the epoch).
    pub expires_at_ms: i64,
}

/// What the store keeps of a parked approval: the approval, and the calls the resumed turn
/// runs (the asked one and those after it in the same assistant message, in order: a call the
/// model made after it waits with it, so calls never run out of order).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ParkedApproval {
    /// Always `"approval"`: what tells this parked state from a clarification question.
    pub kind: String,
    pub approval: PendingApproval,
    pub waiting: Vec<ToolCall>,
    /// What the gate decided for the waiting calls it did not ask the person about.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gated: Vec<Gated>,
}

pub(crate) const PARKED_KIND: &str = "approval";

/// The gate's decision for a later gated call of a parked message, applied when the turn
/// resumes: the gate allowed it (on the page host it was on), denied it, or a remembered
/// decision answered for it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Gated {
    pub call_id: String,
    pub verdict: Verdict,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verdict {
    /// The gate allowed it, or a remembered approval did.
    Allow,
    /// The gate denied it (the agent's denial policy applies).
    Deny { reason: Option<String> },
    /// A remembered rejection answered for it.
    Rejected { reason: Option<String> },
}

/// How far a remembered decision holds. Serialized as `"session"`, `"always"` or
/// `{"host": "*.example.com"}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RememberScope {
    /// Calls of this tool in this session.
    Session,
    /// Calls of this tool in every session of the store (of the agent, without a store).
    Always,
    /// Calls of this tool, in every session, on pages whose host matches the pattern:
    /// `example.com` (that host only) or `*.example.com` (its subdomains, not `example.com`
    /// itself). Compared in ASCII lowercase (an internationalised name in its punycode form,
    /// `xn--…`). Only for a call whose tool names its host ([`Tool::target_host`](crate::Tool::target_host),
    /// the page tools) and whose host the pattern matches; a call without a host never
    /// matches such a rule.
    Host(String),
}

impl RememberScope {
    /// Calls of this tool on pages whose host matches `pattern` (see [`RememberScope::Host`]).
    pub fn host(pattern: impl Into<String>) -> Self {
        RememberScope::Host(pattern.into())
    }
}

/// The person's answer to one call of a [`PendingApproval`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run the call, with the arguments the person edited when given (they are checked
    /// against the tool's schema again).
    Approve {
        /// Edited arguments, or `None` to run the call as the model made it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<serde_json::Value>,
        /// Remember the approval for later calls of this tool.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        remember: Option<RememberScope>,
    },
    /// Do not run the call; the model is told, with the reason when given, and the turn goes on.
    Reject {
        /// Why, for the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// Remember the rejection for later calls of this tool.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        remember: Option<RememberScope>,
    },
}

impl ApprovalDecision {
    /// Run the call as the model made it.
    pub fn approve() -> Self {
        ApprovalDecision::Approve {
            arguments: None,
            remember: None,
        }
    }

    /// Run the call with these arguments instead.
    pub fn approve_with(arguments: serde_json::Value) -> Self {
        ApprovalDecision::Approve {
            arguments: Some(arguments),
            remember: None,
        }
    }

    /// Do not run the call; the model reads `reason`.
    pub fn reject(reason: impl Into<String>) -> Self {
        ApprovalDecision::Reject {
            reason: Some(reason.into()),
            remember: None,
        }
    }

    /// The same decision, remembered for later calls of the tool within `scope`.
    pub fn remember(self, scope: RememberScope) -> Self {
        match self {
            ApprovalDecision::Approve { arguments, .. } => ApprovalDecision::Approve {
                arguments,
                remember: Some(scope),
            },
            ApprovalDecision::Reject { reason, .. } => ApprovalDecision::Reject {
                reason,
                remember: Some(scope),
            },
        }
    }

    pub(crate) fn remembered(&self) -> Option<RememberScope> {
        match self {
            ApprovalDecision::Approve { remember, .. } | ApprovalDecision::Reject { remember, .. } => remember.clone(),
        }
    }

    pub(crate) fn approves(&self) -> bool {
        matches!(self, ApprovalDecision::Approve { .. })
    }
}

/// Why an answer to a pending approval was refused. The approval stays pending unless it
/// is gone already.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    /// No approval with this id is pending in the session.
    #[error("no pending approval {0} in this session (it was answered, dismissed or expired)")]
    NotPending(String),
    /// The approval expired before the answer came.
    #[error("the approval expired before it was answered")]
    Expired,
    /// A call of the approval got no decision.
    #[error("no decision for call {0}; answer every call of the approval")]
    MissingDecision(String),
    /// A decision names a call the approval does not hold.
    #[error("call {0} is not part of this approval")]
    UnknownCall(String),
    /// The edited arguments do not match the tool's schema.
    #[error(
        "the edited arguments of call {call_id} do not match the tool's schema: {message}; the approval is still pending"
    )]
    InvalidArguments {
        /// The call.
        call_id: String,
        /// What is wrong.
        message: String,
    },
    /// A decision asks to be remembered for a host pattern that is not valid, or that does not
    /// fit the call (it has no host, or the pattern does not match it).
    #[error("the decision for call {call_id} cannot be remembered that way: {message}; the approval is still pending")]
    InvalidRemember {
        /// The call.
        call_id: String,
        /// What is wrong.
        message: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}
