//! The host's side of approvals: answering, dismissing, and the remembered decisions.

use tokio_util::sync::CancellationToken;

use super::approval::{ApprovalDecision, ApprovalError, ApprovalRule, Decisions, PendingApproval, check, dismiss};
use crate::agent::turn::TurnInput;
use crate::agent::{Agent, Run, Session};
use crate::store::StoreError;

impl Session {
    /// The approval a turn of this session is parked on, if any (also after a restart: it is
    /// persisted, and [`Agent::open_session`] picks it up).
    pub fn pending_approval(&self) -> Option<PendingApproval> {
        self.state.approval.get()
    }

    /// Answers the pending approval, one decision per call (by call id), and continues the
    /// parked turn in a new [`Run`]: approved calls run (with the edited arguments, when
    /// given), rejected ones do not and the model reads why, then the turn goes on. Decisions
    /// marked [`remember`](ApprovalDecision::remember) answer later calls of the tool without
    /// asking. Refused, with the approval still pending, when a call has no decision, a
    /// decision names a call the approval does not hold, or edited arguments do not match the
    /// tool's schema.
    pub fn resolve_approval(
        &self,
        approval_id: &str,
        decisions: impl IntoIterator<Item = (String, ApprovalDecision)>,
    ) -> Result<Run, ApprovalError> {
        let input = self.approval_input(approval_id, decisions)?;
        Ok(self.start(input, CancellationToken::new(), 0))
    }

    /// The turn the decisions on the pending approval start, when they fit it.
    pub(super) fn approval_input(
        &self,
        approval_id: &str,
        decisions: impl IntoIterator<Item = (String, ApprovalDecision)>,
    ) -> Result<TurnInput, ApprovalError> {
        let mut decisions: Decisions = decisions.into_iter().collect();
        check(&self.agent.inner, &self.state, approval_id, &mut decisions)?;
        Ok(TurnInput::Approval {
            approval_id: approval_id.to_owned(),
            decisions,
        })
    }

    /// Dismisses the pending approval without answering it: its calls do not run and get
    /// results saying so, the approval is no longer pending (in the store too), and
    /// `approval_resolved` (`dismissed`) goes to the agent's observers. No turn starts.
    pub async fn dismiss_approval(&self, approval_id: &str) -> Result<(), ApprovalError> {
        dismiss(&self.agent.inner, &self.state, approval_id).await
    }
}

impl Agent {
    /// The remembered approval decisions, oldest first: in the store when the agent has one
    /// (shared by every agent on it, kept across restarts), in memory otherwise.
    pub async fn approval_rules(&self) -> Result<Vec<ApprovalRule>, StoreError> {
        self.inner.approval_rules.list(self.inner.store.as_ref()).await
    }

    /// Forgets remembered decision `id`: the gate's questions about that tool go to the
    /// person again. Whether there was such a rule.
    pub async fn revoke_approval_rule(&self, id: &str) -> Result<bool, StoreError> {
        self.inner.approval_rules.revoke(self.inner.store.as_ref(), id).await
    }
}
