//! Durable approvals: a gate that answers "ask" parks the turn until the person approves or
//! rejects the call (`awaiting_approval`). Answering and dismissing a session's or a tab's
//! pending approval, the remembered decisions, and the coded errors of refused answers.

use agent_core::{ApprovalDecision, Gate, GateDecision, GateRequest, async_trait};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;

use crate::agent::{NativeAgent, NativeSession};
use crate::convert::{Json, js};
use crate::error::{approval_error, coded};
use crate::run::NativeRun;
use crate::tabs::{NativeTabHub, tab_error, tab_id};

/// The person's decisions, by call id, from the JS layer's normalized object
/// (`{ [callId]: { decision: 'approve' | 'reject', arguments?, reason?, remember? } }`).
fn decisions(value: Json) -> Result<Vec<(String, ApprovalDecision)>> {
    let Value::Object(map) = value.0 else {
        return Err(coded(
            "invalid_argument",
            "decisions must be an object keyed by call id",
        ));
    };
    map.into_iter()
        .map(|(call, decision)| {
            let decision = serde_json::from_value::<ApprovalDecision>(decision)
                .map_err(|e| coded("invalid_argument", format!("the decision for call {call}: {e}")))?;
            Ok((call, decision))
        })
        .collect()
}

#[napi]
impl NativeSession {
    /// The approval a turn of this session is parked on, if any (also after a restart).
    #[napi(ts_return_type = "any")]
    pub fn pending_approval(&self) -> Option<Json> {
        self.session().pending_approval().map(|a| js(&a))
    }

    /// Answers the pending approval, one decision per call id; the parked turn goes on in a
    /// new run. Refused (the approval stays pending) when a call has no decision, a decision
    /// names another call, or edited arguments do not match the tool's schema.
    #[napi(ts_args_type = "approvalId: string, decisions: Record<string, any>")]
    pub fn resolve_approval(&self, approval_id: String, decisions: Json) -> Result<NativeRun> {
        self.check_open()?;
        let decisions = self::decisions(decisions)?;
        self.session()
            .resolve_approval(&approval_id, decisions)
            .map(NativeRun::new)
            .map_err(approval_error)
    }

    /// Dismisses the pending approval without answering it: its calls do not run, no turn
    /// starts.
    #[napi]
    pub async fn dismiss_approval(&self, approval_id: String) -> Result<()> {
        self.check_open()?;
        self.session()
            .dismiss_approval(&approval_id)
            .await
            .map_err(approval_error)
    }
}

#[napi]
impl NativeAgent {
    /// The remembered approval decisions, oldest first (in the store when the agent has one).
    #[napi(ts_return_type = "Promise<any[]>")]
    pub async fn approval_rules(&self) -> Result<Json> {
        let rules = self.agent().approval_rules().await.map_err(|e| coded("store", e))?;
        Ok(js(&rules))
    }

    /// Forgets remembered decision `id`; whether there was one.
    #[napi]
    pub async fn revoke_approval_rule(&self, id: String) -> Result<bool> {
        self.agent()
            .revoke_approval_rule(&id)
            .await
            .map_err(|e| coded("store", e))
    }
}

#[napi]
impl NativeTabHub {
    /// Answers the approval the tab's turn is parked on; the turn goes on in a new run, and
    /// queued messages follow when it ends.
    #[napi(ts_args_type = "tab: string, approvalId: string, decisions: Record<string, any>")]
    pub async fn resolve_approval(&self, tab: String, approval_id: String, decisions: Json) -> Result<NativeRun> {
        let decisions = self::decisions(decisions)?;
        let run = self
            .inner
            .resolve_approval(&tab_id(&tab)?, &approval_id, decisions)
            .await
            .map_err(tab_error)?;
        Ok(NativeRun::from_arc(run))
    }

    /// Dismisses the approval the tab's turn is parked on, without a turn.
    #[napi]
    pub async fn dismiss_approval(&self, tab: String, approval_id: String) -> Result<()> {
        self.inner
            .dismiss_approval(&tab_id(&tab)?, &approval_id)
            .await
            .map_err(tab_error)
    }
}

/// The gate of an MCP server: a call the agent's gate would ask the person about is denied,
/// since an MCP client's request cannot wait for the person's answer.
pub(crate) struct NoAsk(pub std::sync::Arc<dyn Gate>);

#[async_trait]
impl Gate for NoAsk {
    async fn check(&self, request: &GateRequest) -> GateDecision {
        match self.0.check(request).await {
            GateDecision::Ask { .. } => GateDecision::deny(
                "the gate asks the person to approve this call, and a call from an MCP client cannot wait for an answer",
            ),
            decision => decision,
        }
    }
}
