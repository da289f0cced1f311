//! Answers to a tab's parked turn: a clarification question or an approval, answered (the
//! turn goes on in a new run the hub watches) or dismissed (no turn; held messages may start
//! one).

use std::sync::Arc;

use super::TabId;
use super::hub_inner::HubInner;
use super::types::TabError;
use crate::agent::{ApprovalDecision, Run, Session};

impl HubInner {
    /// Answers the question the tab's turn is parked on. The answer comes from the person:
    /// it refills the budget.
    pub(super) async fn answer_clarification(
        self: &Arc<Self>,
        tab: &TabId,
        clarification_id: &str,
        answer: &str,
    ) -> Result<Arc<Run>, TabError> {
        self.answer_parked(tab, |session| {
            Ok(session.answer_clarification(clarification_id, answer)?)
        })
        .await
    }

    /// Answers the approval the tab's turn is parked on, from the person too.
    pub(super) async fn resolve_approval(
        self: &Arc<Self>,
        tab: &TabId,
        approval_id: &str,
        decisions: Vec<(String, ApprovalDecision)>,
    ) -> Result<Arc<Run>, TabError> {
        self.answer_parked(tab, |session| Ok(session.resolve_approval(approval_id, decisions)?))
            .await
    }

    /// Dismisses the question the tab's turn is parked on.
    pub(super) async fn dismiss_clarification(
        self: &Arc<Self>,
        tab: &TabId,
        clarification_id: &str,
    ) -> Result<(), TabError> {
        let live = self.live_session(tab).await?;
        live.dismiss_clarification(clarification_id).await?;
        self.no_longer_waiting(tab).await
    }

    /// Dismisses the approval the tab's turn is parked on.
    pub(super) async fn dismiss_approval(self: &Arc<Self>, tab: &TabId, approval_id: &str) -> Result<(), TabError> {
        let live = self.live_session(tab).await?;
        live.dismiss_approval(approval_id).await?;
        self.no_longer_waiting(tab).await
    }

    /// Starts the turn `answer` continues on the tab's live session; the hub watches it.
    async fn answer_parked(
        self: &Arc<Self>,
        tab: &TabId,
        answer: impl FnOnce(&Session) -> Result<Run, TabError>,
    ) -> Result<Arc<Run>, TabError> {
        let slot = self.slot(tab)?;
        let mut st = slot.state.lock().await;
        if !st.record.open {
            return Err(TabError::Closed(tab.clone()));
        }
        self.ensure_live(&slot, &mut st).await?;
        let turn_start_seq = self.store.last_seq(&st.record.session_id).await?;
        let Some(live) = &st.live else {
            return Err(TabError::NotFound(tab.clone()));
        };
        let run = Arc::new(answer(&live.session)?);
        st.record.auto_wake_budget = self.budget;
        self.track_run(&slot, &mut st, run.clone(), turn_start_seq);
        self.save_checked(&mut st).await?;
        self.publish(&slot, &st);
        Ok(run)
    }

    /// The tab's live session (opened when the tab was restored and not used since).
    async fn live_session(self: &Arc<Self>, tab: &TabId) -> Result<Session, TabError> {
        let slot = self.slot(tab)?;
        let mut st = slot.state.lock().await;
        if !st.record.open {
            return Err(TabError::Closed(tab.clone()));
        }
        self.ensure_live(&slot, &mut st).await?;
        st.live
            .as_ref()
            .map(|live| live.session.clone())
            .ok_or_else(|| TabError::NotFound(tab.clone()))
    }

    /// The tab no longer waits for its person: messages held only for that start their turn
    /// now (within the auto-wake budget: a dismissal is not an answer and refills nothing).
    async fn no_longer_waiting(self: &Arc<Self>, tab: &TabId) -> Result<(), TabError> {
        let slot = self.slot(tab)?;
        let mut st = slot.state.lock().await;
        st.awaiting_user = false;
        self.pump(&slot, &mut st).await;
        self.save_checked(&mut st).await?;
        self.publish(&slot, &st);
        Ok(())
    }
}
