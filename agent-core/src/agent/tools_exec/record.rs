//! Results and records of calls that did not run to completion: refused, denied, cancelled,
//! or never started.

use super::{ExecCtx, Stop};
use crate::event::EventKind;
use crate::message::{Message, ToolCall};
use crate::store::{ToolCallRecord, ToolCallState, now_millis};

impl ExecCtx<'_> {
    /// A call that did not pass validation: the model sees why.
    pub(super) async fn refuse(&self, call: &ToolCall, message: String) -> Message {
        self.emitter.emit(EventKind::ToolCallFailed {
            call_id: call.id.clone(),
            name: call.name.clone(),
            error: message.clone(),
            fatal: false,
        });
        self.end_without_running(call, ToolCallState::Failed, message).await
    }

    pub(super) async fn deny(&self, call: &ToolCall, reason: &str) -> Message {
        self.emitter.emit(EventKind::ToolCallDenied {
            call_id: call.id.clone(),
            name: call.name.clone(),
            reason: reason.to_owned(),
        });
        let text = format!(
            "denied: {} was not run because the user did not allow it ({reason})",
            call.name
        );
        self.end_without_running(call, ToolCallState::Denied, text).await
    }

    /// The result of a call that never finished: cancelled while running, or never started.
    pub(super) async fn unfinished(&self, call: &ToolCall, started: bool, stop: Option<&Stop>) -> Message {
        let text = match (stop, started) {
            (Some(Stop::Cancelled), true) => "cancelled: the run was cancelled while this tool was running".to_owned(),
            (Some(Stop::Cancelled), false) => "not run: the run was cancelled".to_owned(),
            (Some(Stop::Denied(_)), _) => "not run: an earlier call was denied, which ended the turn".to_owned(),
            (Some(Stop::Fatal { .. }), true) => {
                "cancelled: another tool failed fatally, which ended the turn".to_owned()
            }
            (Some(Stop::Fatal { .. }), false) => {
                "not run: another tool failed fatally, which ended the turn".to_owned()
            }
            (Some(Stop::Store(_)), true) => {
                "cancelled: the conversation could not be saved, which ended the turn".to_owned()
            }
            (Some(Stop::Store(_)), false) => {
                "not run: the conversation could not be saved, which ended the turn".to_owned()
            }
            (Some(Stop::Hook(_)), true) => "cancelled: a host hook failed, which ended the turn".to_owned(),
            (Some(Stop::Hook(_)), false) => "not run: a host hook failed, which ended the turn".to_owned(),
            // Not written: an attempt the engine stopped writes no result (see `execute`).
            (Some(Stop::Engine(_)), _) => "not run: the attempt was stopped to be retried".to_owned(),
            (None, _) => "not run".to_owned(),
        };
        self.end_without_running(call, ToolCallState::Cancelled, text).await
    }

    /// Records the final state of a call that produced no result of its own and returns the
    /// error result the model sees instead.
    pub(super) async fn end_without_running(&self, call: &ToolCall, state: ToolCallState, text: String) -> Message {
        let mut record = self.record(call, state);
        record.error = Some(text.clone());
        record.finished_at_ms = Some(now_millis());
        self.save(call, record).await;
        Message::tool_result(&call.id, &call.name, text, true)
    }

    pub(super) fn record(&self, call: &ToolCall, state: ToolCallState) -> ToolCallRecord {
        let mut record = ToolCallRecord::pending(self.session.clone(), &call.id, &call.name, &call.arguments);
        record.state = state;
        record
    }

    /// Writes a record of `call` through to the store (if any).
    pub(super) async fn save(&self, call: &ToolCall, record: ToolCallRecord) {
        if let Some(store) = &self.agent.store
            && let Err(e) = store.upsert_tool_call_owned(record).await
        {
            // Messages are the source of truth for the transcript; a lost record is logged.
            tracing::warn!(call_id = %call.id, error = %e, "could not record tool call state");
        }
    }
}

/// Results for calls that will not run (caps), one per call, recorded as cancelled.
pub(crate) async fn not_run(cx: &ExecCtx<'_>, calls: &[ToolCall], why: &str) -> Vec<Message> {
    let mut out = Vec::with_capacity(calls.len());
    for call in calls {
        out.push(
            cx.end_without_running(call, ToolCallState::Cancelled, format!("not run: {why}"))
                .await,
        );
    }
    out
}
