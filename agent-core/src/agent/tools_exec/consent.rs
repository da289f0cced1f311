//! Consent for one gated call: the person's decision when the turn resumes from an approval;
//! otherwise the gate's, with a remembered decision answering when the gate says "ask".

use super::ExecCtx;
use crate::agent::approval::ApprovalDecision;
use crate::agent::config::DenialPolicy;
use crate::gate::{GateDecision, GateRequest};
use crate::message::{Message, ToolCall};
use crate::store::StoreError;

/// What the call does next.
pub(super) enum Consent {
    /// It runs.
    Run,
    /// It does not run; the model reads the result and the turn goes on.
    Refused(Message),
    /// It does not run and the denial ends the turn (the result, and why).
    EndTurn(Message, String),
    /// The turn parks until the person answers (what the gate asks them).
    Park(Option<String>),
    /// The run was cancelled while the gate was deciding.
    Cancelled,
    /// The conversation could not be made durable before the call.
    StoreFailed(StoreError),
}

impl ExecCtx<'_> {
    pub(super) async fn consent(&self, call: &ToolCall, args: &serde_json::Value) -> Consent {
        if let Some(decision) = self.decided.and_then(|d| d.get(&call.id)) {
            return match decision {
                ApprovalDecision::Approve { .. } => self.durable_before_running().await,
                ApprovalDecision::Reject { reason, .. } => {
                    Consent::Refused(self.rejected(call, reason.as_deref()).await)
                }
            };
        }
        match self.ask_gate(call, args).await {
            None => Consent::Cancelled,
            Some(GateDecision::Allow) => self.durable_before_running().await,
            Some(GateDecision::Deny { reason }) => self.denied(call, reason).await,
            Some(GateDecision::Ask { prompt }) => {
                let store = self.agent.store.as_ref();
                match self.agent.approval_rules.find(store, &call.name, self.session).await {
                    Ok(Some(rule)) if rule.allow => self.durable_before_running().await,
                    Ok(Some(rule)) => {
                        let reason = rule
                            .reason
                            .as_deref()
                            .unwrap_or("a decision the person asked to remember");
                        Consent::Refused(self.rejected(call, Some(reason)).await)
                    }
                    Ok(None) => Consent::Park(prompt),
                    Err(e) => Consent::StoreFailed(e),
                }
            }
        }
    }

    /// Asks the gate; `None` means the run was cancelled while waiting.
    async fn ask_gate(&self, call: &ToolCall, args: &serde_json::Value) -> Option<GateDecision> {
        let Some(gate) = &self.agent.gate else {
            return Some(GateDecision::deny(
                "no consent gate is configured, so gated tools never run",
            ));
        };
        let request = GateRequest {
            session_id: self.session.clone(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: args.clone(),
            origin: self.origin.clone(),
        };
        tokio::select! {
            biased;
            _ = self.cancel.cancelled() => None,
            decision = gate.check(&request) => Some(decision),
        }
    }

    /// A call about to act for the person: the message that asked for it is durable first,
    /// so a crash cannot hide that it ran.
    async fn durable_before_running(&self) -> Consent {
        if let Some(store) = &self.agent.store
            && let Err(e) = store.flush(self.session).await
        {
            return Consent::StoreFailed(e);
        }
        Consent::Run
    }

    async fn denied(&self, call: &ToolCall, reason: Option<String>) -> Consent {
        let reason = reason.unwrap_or_else(|| "the user did not allow it".to_owned());
        let result = self.deny(call, &reason).await;
        if self.agent.config.on_denial == DenialPolicy::EndTurn {
            Consent::EndTurn(result, format!("{} was denied: {reason}", call.name))
        } else {
            Consent::Refused(result)
        }
    }

    /// The person said no (now or in a remembered decision): the model reads why, and the
    /// turn goes on.
    async fn rejected(&self, call: &ToolCall, reason: Option<&str>) -> Message {
        let reason = match reason {
            Some(r) if !r.trim().is_empty() => format!("the person rejected it: {r}"),
            _ => "the person rejected it".to_owned(),
        };
        self.deny(call, &reason).await
    }
}
