//! Consent for one gated call: the person's decision when the turn resumes from an approval;
//! otherwise the gate's, with a remembered decision answering when the gate says "ask". A
//! call on a web page is decided for the host its page is on, and runs only while it still is.

use std::sync::Arc;

use super::ExecCtx;
use crate::agent::approval::{ApprovalCall, ApprovalDecision, Gated, Verdict, asked, normalize_host};
use crate::agent::config::DenialPolicy;
use crate::event::EventKind;
use crate::gate::{GateDecision, GateRequest};
use crate::message::{Message, ToolCall};
use crate::store::{StoreError, ToolCallState};
use crate::tool::Tool;

/// What the call does next.
pub(super) enum Consent {
    /// It runs.
    Run,
    /// It does not run; the model reads the result and the turn goes on.
    Refused(Message),
    /// It does not run and the denial ends the turn (the result, and why).
    EndTurn(Message, String),
    /// The turn parks until the person answers (what the gate asks them, and the host of the
    /// call's page).
    Park(Option<String>, Option<String>),
    /// The run was cancelled while the gate was deciding.
    Cancelled,
    /// The conversation could not be made durable before the call.
    StoreFailed(StoreError),
}

/// What the gate, or a remembered decision, said of a call.
enum Answer {
    /// Decided (the host of the call's page when it was asked, for an allowed call to be
    /// checked against).
    Decided(Verdict, Option<String>),
    /// The person must answer (what to ask them, the host).
    Person(Option<String>, Option<String>),
    /// The run was cancelled while the gate decided.
    Cancelled,
    StoreFailed(StoreError),
}

/// What the gate says of a gated call that waits behind one the person is asked about.
pub(super) enum Later {
    /// The person is asked about it too.
    Ask(ApprovalCall),
    /// Decided now, applied when the turn resumes.
    Decided(Gated),
    Cancelled,
    StoreFailed(StoreError),
}

impl ExecCtx<'_> {
    pub(super) async fn consent(&self, call: &ToolCall, tool: &Arc<dyn Tool>, args: &serde_json::Value) -> Consent {
        if let Some(decision) = self.decided.and_then(|d| d.get(&call.id)) {
            return match decision {
                ApprovalDecision::Approve { arguments, .. } => {
                    let approved = self.decided.and_then(|d| d.host(&call.id));
                    // The host was read from the call as the model made it; an edit (a new
                    // address for a navigation) is what the person chose, not a page that moved.
                    let original = arguments.as_ref().and_then(|_| call.parse_arguments().ok());
                    match self
                        .moved(call, tool, original.as_ref().unwrap_or(args), approved)
                        .await
                    {
                        Some(refused) => refused,
                        None => self.durable_before_running().await,
                    }
                }
                ApprovalDecision::Reject { reason, .. } => {
                    Consent::Refused(self.rejected(call, reason.as_deref()).await)
                }
            };
        }
        // Decided by the gate when the turn parked: not asked again.
        if let Some(gated) = self.decided.and_then(|d| d.gated(&call.id)) {
            return self
                .apply(call, tool, args, &gated.verdict, gated.host.as_deref())
                .await;
        }
        match self.answer(call, tool, args).await {
            Answer::Cancelled => Consent::Cancelled,
            Answer::StoreFailed(e) => Consent::StoreFailed(e),
            Answer::Decided(verdict, host) => self.apply(call, tool, args, &verdict, host.as_deref()).await,
            Answer::Person(prompt, host) => Consent::Park(prompt, host),
        }
    }

    /// Asks the gate about a gated call that waits behind one the person is asked about, so
    /// that the person is asked about every call of the message at once. Nothing runs.
    pub(super) async fn consent_later(&self, call: &ToolCall, tool: &Arc<dyn Tool>, args: &serde_json::Value) -> Later {
        match self.answer(call, tool, args).await {
            Answer::Cancelled => Later::Cancelled,
            Answer::StoreFailed(e) => Later::StoreFailed(e),
            Answer::Decided(verdict, host) => Later::Decided(Gated {
                call_id: call.id.clone(),
                verdict,
                host,
            }),
            Answer::Person(prompt, host) => Later::Ask(asked(call, args.clone(), prompt, host)),
        }
    }

    /// What the gate (or, when it asks, a remembered decision) says of a call, with the host
    /// of the page it acts on.
    async fn answer(&self, call: &ToolCall, tool: &Arc<dyn Tool>, args: &serde_json::Value) -> Answer {
        let Some(host) = self.host_of(tool, args).await else {
            return Answer::Cancelled;
        };
        let prompt = match self.ask_gate(call, args, host.clone()).await {
            None => return Answer::Cancelled,
            Some(GateDecision::Allow) => return Answer::Decided(Verdict::Allow, host),
            Some(GateDecision::Deny { reason }) => return Answer::Decided(Verdict::Deny { reason }, host),
            Some(GateDecision::Ask { prompt }) => prompt,
        };
        let store = self.agent.store.as_ref();
        let rule = self
            .agent
            .approval_rules
            .find(store, &call.name, self.session, host.as_deref())
            .await;
        match rule {
            // A remembered decision holds wherever the page is when the call runs.
            Ok(Some(rule)) if rule.allow => Answer::Decided(Verdict::Allow, None),
            Ok(Some(rule)) => {
                let reason = rule
                    .reason
                    .unwrap_or_else(|| "a decision the person asked to remember".to_owned());
                Answer::Decided(Verdict::Rejected { reason: Some(reason) }, None)
            }
            Ok(None) => Answer::Person(prompt, host),
            Err(e) => Answer::StoreFailed(e),
        }
    }

    /// What a decided call does next: an allowed one runs while its page is on `host` (any
    /// page when `None`), a denied one ends the turn or tells the model as the agent's policy
    /// says, a rejected one tells the model.
    async fn apply(
        &self,
        call: &ToolCall,
        tool: &Arc<dyn Tool>,
        args: &serde_json::Value,
        verdict: &Verdict,
        host: Option<&str>,
    ) -> Consent {
        match verdict {
            Verdict::Allow => match self.moved(call, tool, args, host).await {
                Some(refused) => refused,
                None => self.durable_before_running().await,
            },
            Verdict::Deny { reason } => self.denied(call, reason.clone()).await,
            Verdict::Rejected { reason } => Consent::Refused(self.rejected(call, reason.as_deref()).await),
        }
    }

    /// The normalised host of the page the call acts on (`Some(None)`: none); `None` when the
    /// run was cancelled while the tool looked.
    async fn host_of(&self, tool: &Arc<dyn Tool>, args: &serde_json::Value) -> Option<Option<String>> {
        tokio::select! {
            biased;
            _ = self.cancel.cancelled() => None,
            host = tool.target_host(args) => Some(host.as_deref().and_then(normalize_host)),
        }
    }

    /// Refuses a call allowed for a page on `allowed` whose page is on another host now (it
    /// navigated while the gate or the person decided): the decision was about that host.
    async fn moved(
        &self,
        call: &ToolCall,
        tool: &Arc<dyn Tool>,
        args: &serde_json::Value,
        allowed: Option<&str>,
    ) -> Option<Consent> {
        let allowed = allowed?;
        let now = match self.host_of(tool, args).await {
            None => return Some(Consent::Cancelled),
            Some(now) => now,
        };
        if now.as_deref() == Some(allowed) {
            return None;
        }
        let now = now.unwrap_or_else(|| "no page host".to_owned());
        let reason = format!("allowed for a page on {allowed}, but the page is on {now} now");
        self.emitter.emit(EventKind::ToolCallDenied {
            call_id: call.id.clone(),
            name: call.name.clone(),
            reason: reason.clone(),
        });
        let text = format!(
            "not run: {} was {reason} (it navigated). Look at the page again; a call there needs its own consent.",
            call.name
        );
        Some(Consent::Refused(
            self.end_without_running(call, ToolCallState::Denied, text).await,
        ))
    }

    /// Asks the gate; `None` means the run was cancelled while waiting.
    async fn ask_gate(&self, call: &ToolCall, args: &serde_json::Value, host: Option<String>) -> Option<GateDecision> {
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
            host,
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
