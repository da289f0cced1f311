//! Consent: the host's [`Gate`] decides whether each call of a gated tool may run.

use std::future::Future;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::session::SessionId;

/// A gated tool call waiting for consent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateRequest {
    /// The session asking.
    pub session_id: SessionId,
    /// The call's id.
    pub call_id: String,
    /// The tool's name.
    pub tool: String,
    /// The validated arguments.
    pub arguments: serde_json::Value,
    /// Who started the turn that asks: the person, or another tab's agent. A call caused by a
    /// message from another tab does not carry the person's authority; a gate should say so
    /// when it asks the person, or refuse.
    #[serde(default)]
    pub origin: TurnOrigin,
    /// The host of the web page the call would act on, for a tool that names one
    /// ([`Tool::target_host`](crate::Tool::target_host): the page tools), lowercased ASCII
    /// (punycode for an internationalised name). Read from the browser just before the gate is
    /// asked; a call allowed for it does not run if its page has moved to another host since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// Who started a turn.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TurnOrigin {
    /// The person (or the host acting for them). The default.
    #[default]
    Person,
    /// A message from another tab's agent (`send_to_tab`).
    Tab {
        /// The sending tab's id, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tab_id: Option<String>,
        /// The sending tab's handle at the time it sent, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        handle: Option<String>,
    },
}

impl TurnOrigin {
    /// Whether the person started the turn.
    pub fn is_person(&self) -> bool {
        matches!(self, TurnOrigin::Person)
    }

    /// `the person` or `tab <handle>`, for messages.
    pub fn describe(&self) -> String {
        match self {
            TurnOrigin::Person => "the person".to_owned(),
            TurnOrigin::Tab { handle: Some(h), .. } => format!("tab {h}"),
            TurnOrigin::Tab { tab_id: Some(id), .. } => format!("tab {id}"),
            TurnOrigin::Tab { .. } => "another tab".to_owned(),
        }
    }
}

/// The host's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum GateDecision {
    /// Run the call.
    Allow,
    /// Do not run it.
    Deny {
        /// Why, when the host says (shown to the model when the agent is configured to tell it).
        reason: Option<String>,
    },
    /// Ask the person, who may not be there now: unless a remembered decision answers
    /// ([`RememberScope`](crate::RememberScope)), the turn parks with the call pending (outcome
    /// `awaiting_approval`, persisted through the store) until
    /// [`Session::resolve_approval`](crate::Session::resolve_approval) answers it, in this
    /// process or after a restart. Calls the model made after it in the same message wait too.
    Ask {
        /// What to ask the person, when the gate has something to say.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prompt: Option<String>,
    },
}

impl GateDecision {
    /// A denial with a reason.
    pub fn deny(reason: impl Into<String>) -> Self {
        GateDecision::Deny {
            reason: Some(reason.into()),
        }
    }

    /// Park the turn until the person answers, with what to ask them.
    pub fn ask(prompt: impl Into<String>) -> Self {
        GateDecision::Ask {
            prompt: Some(prompt.into()),
        }
    }
}

/// Asked before every call of a gated tool. With no gate configured, gated calls are denied and
/// never run.
#[async_trait]
pub trait Gate: Send + Sync {
    /// Decides one call. The loop races this against cancellation.
    async fn check(&self, request: &GateRequest) -> GateDecision;
}

/// A [`Gate`] made from an async closure.
pub struct FnGate<F>(F);

/// Wraps an async closure as a [`Gate`].
///
/// ```
/// use agent_core::{gate_fn, GateDecision};
/// let gate = gate_fn(|req| {
///     let allowed = req.tool != "fs_delete";
///     async move { if allowed { GateDecision::Allow } else { GateDecision::deny("no deletes") } }
/// });
/// # let _ = gate;
/// ```
pub fn gate_fn<F, Fut>(f: F) -> FnGate<F>
where
    F: Fn(&GateRequest) -> Fut + Send + Sync,
    Fut: Future<Output = GateDecision> + Send,
{
    FnGate(f)
}

#[async_trait]
impl<F, Fut> Gate for FnGate<F>
where
    F: Fn(&GateRequest) -> Fut + Send + Sync,
    Fut: Future<Output = GateDecision> + Send,
{
    async fn check(&self, request: &GateRequest) -> GateDecision {
        (self.0)(request).await
    }
}

/// A gate that allows every call. For trusted, non-interactive hosts and tests.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

#[async_trait]
impl Gate for AllowAll {
    async fn check(&self, _request: &GateRequest) -> GateDecision {
        GateDecision::Allow
    }
}
