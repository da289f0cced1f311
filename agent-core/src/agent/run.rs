use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::Stream;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::error_kind::ErrorKind;
use super::event_log::{EventCursor, EventLog};
use super::pending_approval::PendingApproval;
use super::pending_tools::PendingToolCalls;
use super::question::Clarification;
use crate::event::{AgentEvent, EventKind};
use crate::provider::Usage;
use crate::session::SessionId;
use crate::tool::BoxError;

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeStatus {
    /// The model answered without tool calls.
    Done,
    /// The gate denied a tool call.
    Denied,
    /// A cap was reached: iterations, tool calls, a repeated call, or a cost budget.
    Capped,
    /// The run was cancelled.
    Cancelled,
    /// A provider, store or fatal tool error ended the turn.
    Error,
    /// The turn is parked on a question to the person.
    AwaitingUser,
    /// The turn is parked until the person approves or rejects a gated call.
    AwaitingApproval,
    /// The turn is parked until the host runs the calls of its external tools
    /// ([`Session::send_with_tools`](crate::Session::send_with_tools)).
    AwaitingTools,
}

impl OutcomeStatus {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeStatus::Done => "done",
            OutcomeStatus::Denied => "denied",
            OutcomeStatus::Capped => "capped",
            OutcomeStatus::Cancelled => "cancelled",
            OutcomeStatus::Error => "error",
            OutcomeStatus::AwaitingUser => "awaiting_user",
            OutcomeStatus::AwaitingApproval => "awaiting_approval",
            OutcomeStatus::AwaitingTools => "awaiting_tools",
        }
    }
}

/// The result of a turn.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Outcome {
    /// How it ended.
    pub status: OutcomeStatus,
    /// The last assistant text of the turn (the answer, for `done`). For a typed turn, the
    /// answer's raw JSON text.
    pub final_text: Option<String>,
    /// The answer of a typed turn ([`Session::send_typed`](crate::Session::send_typed),
    /// [`Session::send_with_schema`](crate::Session::send_with_schema)), parsed and checked
    /// against its schema; `None` for other turns and when the turn did not end `done`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<serde_json::Value>,
    /// Model calls made.
    pub iterations: u32,
    /// Tool calls requested by the model (run or not).
    pub tool_calls: u32,
    /// Usage summed over the turn's model calls.
    pub usage: Usage,
    /// What the turn's model calls cost in US dollars, sub-agents included (see
    /// `docs/cost.md`); `None` when a call's price was unknown (a model missing from the price
    /// table, or a call that reported no usage).
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// What the session's turns cost in this process, this one included; `None` when a call's
    /// price was unknown.
    #[serde(default)]
    pub session_cost_usd: Option<f64>,
    /// The turn's spending as the budgets count it: priced calls and unpriced ones apart.
    #[serde(skip)]
    pub(crate) spend: crate::pricing::Spend,
    /// What went wrong, for `error` (and the denial, for `denied`).
    pub error: Option<String>,
    /// A stable name for the error's kind; it serializes as `provider.timeout`, `tool.fatal`,
    /// `store`, ... (see [`ErrorKind`]).
    pub error_kind: Option<ErrorKind>,
    /// The error's original cause, when there is one (a tool's fatal error source, such as a
    /// host-language exception). Not serialized.
    #[serde(skip)]
    pub error_source: Option<Arc<BoxError>>,
    /// The question the turn is parked on, for `awaiting_user`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clarification: Option<Clarification>,
    /// The approval the turn is parked on, for `awaiting_approval`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<PendingApproval>,
    /// The external tool calls the host must run, for `awaiting_tools`. Boxed: every outcome
    /// carries the field, and most never use it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_calls: Option<Box<PendingToolCalls>>,
    /// What sub-agents ([`crate::agent_tool`]) spent, by tool; already counted in `usage`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sub_agents: Vec<SubAgentUsage>,
}

/// What the sub-agent behind one tool spent in a turn (see [`Outcome::sub_agents`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SubAgentUsage {
    /// The tool's name.
    pub tool: String,
    /// Its calls in the turn.
    pub calls: u32,
    /// The sub-agent's model calls over those calls.
    pub iterations: u32,
    /// The tokens those model calls used.
    pub usage: Usage,
    /// What those calls cost in US dollars, as priced by the sub-agent; `None` when a price
    /// was unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl Outcome {
    pub(crate) fn new(status: OutcomeStatus) -> Self {
        Outcome {
            status,
            final_text: None,
            structured: None,
            iterations: 0,
            tool_calls: 0,
            usage: Usage::default(),
            // Nothing spent yet; the turn's count replaces it when it ends.
            cost_usd: Some(0.0),
            session_cost_usd: None,
            spend: crate::pricing::Spend::default(),
            error: None,
            error_kind: None,
            error_source: None,
            clarification: None,
            approval: None,
            external_calls: None,
            sub_agents: Vec::new(),
        }
    }

    /// The typed answer as a `T`: the error says when the turn gave none (it did not end
    /// `done`, or was not a typed turn) or when the answer, valid against the schema, still
    /// does not deserialize into `T`.
    pub fn structured_as<T: DeserializeOwned>(&self) -> Result<T, AnswerError> {
        let Some(value) = &self.structured else {
            return Err(AnswerError::NoAnswer {
                status: self.status,
                error: self.error.clone(),
            });
        };
        T::deserialize(value).map_err(|e| AnswerError::Mismatch(e.to_string()))
    }

    /// Whether the outcome carries any of the parts only some turns have: a typed answer, a
    /// pending question, approval or external calls, sub-agents' spending. Without them it
    /// serializes to the same nine fields every time, which the bindings build directly
    /// instead of through a JSON value; a new optional part belongs here.
    pub fn has_optional_parts(&self) -> bool {
        self.structured.is_some()
            || self.clarification.is_some()
            || self.approval.is_some()
            || self.external_calls.is_some()
            || !self.sub_agents.is_empty()
    }

    pub(crate) fn failed(kind: ErrorKind, error: impl Into<String>) -> Self {
        let mut o = Outcome::new(OutcomeStatus::Error);
        o.error_kind = Some(kind);
        o.error = Some(error.into());
        o
    }
}

/// Why [`Outcome::structured_as`](crate::Outcome::structured_as) gave no value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnswerError {
    /// The turn gave no typed answer: it did not end `done` (see its error), or it was not a
    /// typed turn.
    #[error("the turn gave no typed answer (status {}{})", .status.as_str(), .error.as_deref().map(|e| format!(": {e}")).unwrap_or_default())]
    NoAnswer {
        /// How the turn ended.
        status: OutcomeStatus,
        /// Its error, if any.
        error: Option<String>,
    },
    /// The answer matched the schema but does not deserialize into the requested type.
    #[error("the answer does not deserialize into the requested type: {0}")]
    Mismatch(String),
}

/// What the agent of a run is doing, for hosts that poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    /// Not started yet (waiting for an earlier turn of the session).
    Idle,
    /// Waiting for the model.
    Thinking,
    /// Running tools.
    ToolCall,
    /// Finished (done, denied or capped).
    Complete,
    /// Finished with an error.
    Error,
    /// Cancelled.
    Cancelled,
    /// Parked on a question to the person.
    AwaitingUser,
    /// Parked until the person approves or rejects a gated call.
    AwaitingApproval,
    /// Parked until the host runs the calls of the turn's external tools.
    AwaitingTools,
}

/// A cheap snapshot of a run's progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunStatus {
    /// What it is doing.
    pub state: RunState,
    /// The current model call, from 1 (0 before the first).
    pub iteration: u32,
    /// The tool running now, if any (the first, when several run at once).
    pub current_tool: Option<String>,
    /// The latest assistant text. While the model streams an answer, the text so far: it grows
    /// with every streamed piece, so a host that polls shows progress.
    pub last_message: Option<String>,
    /// The error, once the run failed.
    pub error: Option<String>,
}

impl Default for RunStatus {
    fn default() -> Self {
        RunStatus {
            state: RunState::Idle,
            iteration: 0,
            current_tool: None,
            last_message: None,
            error: None,
        }
    }
}

/// The shared, lock-protected status a run updates and [`Run::status`] reads.
pub(crate) type StatusCell = Arc<Mutex<RunStatus>>;

/// A stream of a run's events. Ends after the run's final event.
pub type RunEvents = Pin<Box<dyn Stream<Item = AgentEvent> + Send>>;

/// A handle to one turn, running in the background.
///
/// Read its events with [`Run::events`], poll [`Run::status`], stop it with [`Run::cancel`],
/// and `.await` it (or call [`Run::outcome`]) for the [`Outcome`]. Dropping the handle does not
/// cancel the turn. Awaiting or dropping the handle gives up the events nobody has read: the
/// run stops keeping them.
pub struct Run {
    pub(crate) id: String,
    pub(crate) session_id: SessionId,
    pub(crate) events: EventLog,
    /// Whether `events` was called: only the first call starts from the beginning.
    pub(crate) events_read: AtomicBool,
    pub(crate) status: StatusCell,
    pub(crate) cancel: CancellationToken,
    pub(crate) outcome: watch::Receiver<Option<Outcome>>,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run")
            .field("id", &self.id)
            .field("session_id", &self.session_id)
            .field("status", &self.status())
            .finish()
    }
}

impl Run {
    /// The run's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The session the run belongs to.
    pub fn session_id(&self) -> &SessionId {
        &self.session_id
    }

    /// The run's events. The first call sees every event from `run_started` on; later calls
    /// see events from the moment they are made. The stream ends after the run's final event.
    pub fn events(&self) -> RunEvents {
        let cursor = if self.events_read.swap(true, Ordering::AcqRel) {
            self.events.cursor_at_now()
        } else {
            self.events.cursor_at_start()
        };
        until_final(cursor)
    }

    /// Every event from `run_started` on, for an observer inside the library (the tab hub
    /// forwarding a tab's run), leaving the first [`Run::events`] call its full read: the host
    /// holding the run sees it whole too.
    pub(crate) fn observe_events(&self) -> RunEvents {
        until_final(self.events.cursor_at_start())
    }

    /// A snapshot of the run's progress. Cheap: meant for hosts polling every few hundred ms.
    pub fn status(&self) -> RunStatus {
        self.status.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Asks the run to stop. The turn ends `cancelled` promptly (the model stream is dropped,
    /// running tools are dropped and their results recorded as cancelled).
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// The run's cancellation token (cancel it to cancel the run, or tie it to a parent).
    pub fn cancellation_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Whether the run has finished.
    pub fn is_finished(&self) -> bool {
        self.outcome.borrow().is_some()
    }

    /// Waits for the run to end and returns its outcome. May be called many times.
    pub async fn outcome(&self) -> Outcome {
        wait_for_outcome(self.outcome.clone()).await
    }
}

/// The events a cursor reads, ending after the run's final event.
fn until_final(cursor: EventCursor) -> RunEvents {
    Box::pin(futures::stream::unfold(Some(cursor), |state| async move {
        let mut cursor = state?;
        let event = cursor.next().await?;
        let last = is_final(&event.kind);
        Some((event, if last { None } else { Some(cursor) }))
    }))
}

async fn wait_for_outcome(mut receiver: watch::Receiver<Option<Outcome>>) -> Outcome {
    match receiver.wait_for(Option::is_some).await {
        Ok(value) => value.clone().unwrap_or_else(lost_outcome),
        Err(_) => lost_outcome(),
    }
}

fn lost_outcome() -> Outcome {
    let mut lost = Outcome::failed(
        ErrorKind::Internal,
        "the run's task ended without an outcome (it panicked or its runtime shut down)",
    );
    lost.cost_usd = None;
    lost
}

pub(crate) fn is_final(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::RunCompleted { .. }
            | EventKind::RunFailed { .. }
            | EventKind::RunCancelled { .. }
            | EventKind::RunCapped { .. }
    )
}

impl IntoFuture for Run {
    type Output = Outcome;
    type IntoFuture = Pin<Box<dyn Future<Output = Outcome> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        // Only the outcome is waited for: the event log's reading side is dropped here, so the
        // run stops keeping events nobody can read any more.
        let Run { outcome, .. } = self;
        Box::pin(async move { wait_for_outcome(outcome).await })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// The bindings build an outcome without optional parts field by field (Node's
    /// `MAKE_OUTCOME`, Python's `usual_outcome_dict`): these are the fields they build.
    #[test]
    fn an_outcome_without_optional_parts_has_the_fields_the_bindings_build() {
        let mut outcome = Outcome::new(OutcomeStatus::Done);
        assert!(!outcome.has_optional_parts());
        let keys = |o: &Outcome| -> Vec<String> {
            serde_json::to_value(o)
                .unwrap()
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect()
        };
        let common = [
            "cost_usd",
            "error",
            "error_kind",
            "final_text",
            "iterations",
            "session_cost_usd",
            "status",
            "tool_calls",
            "usage",
        ];
        assert_eq!(keys(&outcome), common);
        outcome.structured = Some(serde_json::json!({"a": 1}));
        assert!(outcome.has_optional_parts());
        assert!(keys(&outcome).contains(&"structured".to_owned()));
        outcome.structured = None;
        outcome.sub_agents.push(SubAgentUsage::default());
        assert!(outcome.has_optional_parts());
        assert!(keys(&outcome).contains(&"sub_agents".to_owned()));
    }
}
