//! One turn of the ReAct loop: call the model, run the tools it asks for, repeat until it
//! answers without tool calls or the turn stops. However the turn ends, every tool call in the
//! stored history has exactly one result.

mod model_call;
mod repeat_guard;
mod tools_step;

use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::task::{Context, Poll, Waker};

use tokio::sync::OwnedMutexGuard;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::approval::{self, ApprovalError};
use super::clarification::{self, ClarificationError};
use super::context;
use super::cost;
use super::emit::Emitter;
use super::error_kind::ErrorKind;
use super::external_tools;
use super::genai_spans;
use super::history::History;
use super::offered_tools::ExternalSet;
use super::pending_tools::{ExternalToolError, ExternalToolResult};
use super::run::{Outcome, OutcomeStatus, RunState};
use super::session_spend;
use super::turn_context::Turn;
use super::typed_answer::{AnswerCheck, Verdict};
use super::{AgentInner, SessionState};
use crate::event::EventKind;
use crate::gate::TurnOrigin;
use crate::message::Message;
use crate::provider::OutputSchema;
use crate::steps::{Interrupted, Steps};
use crate::store::StoreError;
use crate::tool::TURN_END_TIMEOUT;
use model_call::CallFailed;

/// The calls a turn resumed from an approval runs first, and the person's decisions on them.
type Resumed = (Vec<crate::message::ToolCall>, approval::Decisions);

/// What starts a turn.
pub(crate) enum TurnInput {
    /// A new user message, from the person or another tab; `output` is the schema the
    /// answer must match, for a typed turn.
    User {
        message: Message,
        origin: TurnOrigin,
        output: Option<Box<OutputSchema>>,
        /// The tools the host runs itself that the turn offers (checked).
        tools: Option<Arc<ExternalSet>>,
    },
    /// The answer to the pending clarification question (already checked). The turn keeps
    /// the origin of the turn that asked.
    Answer { clarification_id: String, answer: String },
    /// The person's decisions on the pending approval (already checked). The turn keeps the
    /// origin of the turn that parked.
    Approval {
        approval_id: String,
        decisions: approval::Decisions,
    },
    /// The host's results of the external tool calls the turn is parked on (already checked).
    /// The turn keeps the origin of the turn that parked.
    ToolResults {
        pending_id: String,
        results: Vec<ExternalToolResult>,
    },
}

impl TurnInput {
    /// Who the turn acts for: for an answer, whoever started the parked turn.
    fn origin(&self, state: &SessionState) -> TurnOrigin {
        match self {
            TurnInput::User { origin, .. } => origin.clone(),
            TurnInput::Answer { clarification_id, .. } => {
                state.clarification.origin_of(clarification_id).unwrap_or_default()
            }
            TurnInput::Approval { approval_id, .. } => state.approval.origin_of(approval_id).unwrap_or_default(),
            TurnInput::ToolResults { pending_id, .. } => state.external.origin_of(pending_id).unwrap_or_default(),
        }
    }
}

/// A turn's place in its session's queue, taken when the turn is requested, so turns of one
/// session run in the order they were sent (the session lock is FIFO once a waiter is queued).
pub(crate) struct TurnSlot(Pin<Box<dyn Future<Output = OwnedMutexGuard<History>> + Send>>);

impl TurnSlot {
    /// Queues for the session's history lock now, without waiting.
    pub fn queue(history: &Arc<tokio::sync::Mutex<History>>) -> Self {
        let mut waiting = Box::pin(history.clone().lock_owned());
        // One poll registers this waiter in the lock's FIFO queue (or takes the lock at once);
        // the task that runs the turn polls it again with its own waker.
        match waiting.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(guard) => TurnSlot(Box::pin(std::future::ready(guard))),
            Poll::Pending => TurnSlot(waiting),
        }
    }
}

/// Runs one turn; `depth` counts the agents above this one (0 unless a sub-agent's turn, see
/// [`crate::agent_tool`]).
#[allow(clippy::too_many_arguments)] // the parts of one turn, handed over once by `Session::start`
pub(crate) async fn run_turn(
    agent: Arc<AgentInner>,
    state: Arc<SessionState>,
    slot: TurnSlot,
    input: TurnInput,
    run_id: String,
    cancel: CancellationToken,
    depth: u32,
    emitter: Emitter,
) -> Outcome {
    let origin = input.origin(&state);
    let turn = Turn::started(
        &agent,
        &state,
        &cancel,
        &emitter,
        &origin,
        depth,
        Steps::InProcess,
        run_id,
    );
    let span = genai_spans::invoke_agent(&agent, &state.id);
    // Entered only when collected: wrapping the turn's future costs a copy of it otherwise.
    let outcome = if span.is_disabled() {
        turn.drive(slot, input).await
    } else {
        turn.drive(slot, input).instrument(span.clone()).await
    };
    genai_spans::record_outcome(&span, &outcome);
    finish(&emitter, outcome)
}

/// What a turn driven by the host runs with.
pub(crate) struct TurnParts<'a> {
    pub agent: &'a Arc<AgentInner>,
    pub state: &'a Arc<SessionState>,
    pub run_id: String,
    pub cancel: &'a CancellationToken,
    pub emitter: &'a Emitter,
    pub steps: Steps<'a>,
}

/// [`run_turn`] for a turn the host drives, its effects run as `parts.steps` says. `Err` with
/// the executor's message when it stopped the attempt ([`Interrupted::Engine`]): the turn then
/// wrote nothing after the step that stopped, and emitted no final event.
pub(crate) async fn run_turn_with(parts: TurnParts<'_>, slot: TurnSlot, input: TurnInput) -> Result<Outcome, String> {
    let TurnParts {
        agent,
        state,
        run_id,
        cancel,
        emitter,
        steps,
    } = parts;
    let origin = input.origin(state);
    let turn = Turn::started(agent, state, cancel, emitter, &origin, 0, steps, run_id);
    let span = genai_spans::invoke_agent(agent, &state.id);
    let outcome = turn.drive(slot, input).instrument(span.clone()).await;
    if let Some(message) = turn.take_engine_stop() {
        return Err(message);
    }
    genai_spans::record_outcome(&span, &outcome);
    Ok(finish(emitter, outcome))
}

/// Updates the status and emits the run's final event.
fn finish(emitter: &Emitter, outcome: Outcome) -> Outcome {
    let state = match outcome.status {
        OutcomeStatus::Done | OutcomeStatus::Denied | OutcomeStatus::Capped => RunState::Complete,
        OutcomeStatus::Error => RunState::Error,
        OutcomeStatus::Cancelled => RunState::Cancelled,
        OutcomeStatus::AwaitingUser => RunState::AwaitingUser,
        OutcomeStatus::AwaitingApproval => RunState::AwaitingApproval,
        OutcomeStatus::AwaitingTools => RunState::AwaitingTools,
    };
    emitter.update(|s| {
        s.state = state;
        s.current_tool = None;
        s.error = outcome.error.clone();
    });
    let copy = Box::new(outcome.clone());
    let kind = match outcome.status {
        OutcomeStatus::Done
        | OutcomeStatus::Denied
        | OutcomeStatus::AwaitingUser
        | OutcomeStatus::AwaitingApproval
        | OutcomeStatus::AwaitingTools => EventKind::RunCompleted { outcome: copy },
        OutcomeStatus::Error => EventKind::RunFailed { outcome: copy },
        OutcomeStatus::Cancelled => EventKind::RunCancelled { outcome: copy },
        OutcomeStatus::Capped => EventKind::RunCapped { outcome: copy },
    };
    emitter.emit(kind);
    outcome
}

impl Turn<'_> {
    async fn drive(&self, slot: TurnSlot, input: TurnInput) -> Outcome {
        let mut history = tokio::select! {
            biased;
            _ = self.cancel.cancelled() => return Outcome::new(OutcomeStatus::Cancelled),
            h = slot.0 => h,
        };
        // A typed turn's schema: its own, or, for a turn continuing a parked one, the parked
        // turn's (taken either way, so that it never outlives the turn it belongs to).
        let parked = self.state.parked_output.lock().ok().and_then(|mut p| p.take());
        let output = match &input {
            TurnInput::User { output, .. } => output.as_deref().cloned(),
            TurnInput::Answer { .. } | TurnInput::Approval { .. } | TurnInput::ToolResults { .. } => parked,
        };
        // Kept while the turn runs, so that parking it stores the schema with it.
        if output.is_some()
            && let Ok(mut p) = self.state.parked_output.lock()
        {
            p.clone_from(&output);
        }
        self.take_external_tools(&input);
        let mut outcome = self.drive_locked(&mut history, input, output).await;
        if self.engine_stopped() {
            // The engine retries the attempt from what it recorded: nothing more is written,
            // and the next turn in this process reloads the history from the store.
            history.stale = true;
            history.forget_model_view();
            return outcome;
        }
        self.count_spend(&mut outcome).await;
        if !matches!(
            outcome.status,
            OutcomeStatus::AwaitingUser | OutcomeStatus::AwaitingApproval | OutcomeStatus::AwaitingTools
        ) {
            if let Ok(mut p) = self.state.parked_output.lock() {
                *p = None;
            }
            if self.external.get().is_some()
                && let Ok(mut p) = self.state.parked_tools.lock()
            {
                *p = None;
            }
        }
        self.tools_turn_ended().await;
        if !self.agent.hooks.is_empty()
            && let Err(message) = super::hook_points::turn_ended(&self.agent.hooks, self.session, &outcome).await
            && outcome.status != OutcomeStatus::Error
        {
            outcome = failed_with(outcome, ErrorKind::Hook, message);
        }
        // The kept request serves the next model call of this turn only: an idle session
        // would hold a second copy of its conversation.
        history.forget_model_view();
        // Still holding the session: the next turn starts from a durable history.
        self.settle_store(&mut history, outcome).await
    }

    /// The turn's external tools: a new message's own, or, for a turn continuing a parked one,
    /// the parked turn's; kept in the session while the turn runs, so that parking it stores
    /// them with it. Nothing to do for a turn without any.
    fn take_external_tools(&self, input: &TurnInput) {
        let tools = match input {
            TurnInput::User { tools: None, .. } => {
                // A parked turn's tools end with it: the new message dismisses it.
                if let Ok(mut p) = self.state.parked_tools.lock() {
                    *p = None;
                }
                return;
            }
            TurnInput::User { tools: Some(tools), .. } => {
                if let Ok(mut p) = self.state.parked_tools.lock() {
                    *p = Some(tools.tools().clone());
                }
                tools.clone()
            }
            TurnInput::Answer { .. } | TurnInput::Approval { .. } | TurnInput::ToolResults { .. } => {
                match self.state.parked_tools() {
                    Some(tools) => Arc::new(ExternalSet::parked(tools)),
                    None => return,
                }
            }
        };
        let _ = self.external.set(tools);
    }

    /// Adds what the turn spent to the session's count, and puts both in the outcome; records
    /// the session's count in the store when it changed (see `session_spend`).
    async fn count_spend(&self, outcome: &mut Outcome) {
        outcome.cost_usd = outcome.spend.total_usd();
        let Some((before, after)) = self.state.spend.lock().ok().map(|mut session| {
            let before = *session;
            session.add(&outcome.spend);
            (before, *session)
        }) else {
            return;
        };
        outcome.session_cost_usd = after.total_usd();
        if let Some(store) = &self.agent.store
            && session_spend::worth_saving(&before, &outcome.spend)
            && let Err(e) = session_spend::save(store.as_ref(), self.session, &after).await
        {
            // The turn's own figures stand; a restart would count the session from less.
            tracing::warn!(session = %self.session, error = %e, "could not record what the session spent");
        }
    }

    /// What the session's earlier turns spent, priced calls only (what a budget counts).
    fn session_spent_usd(&self) -> f64 {
        self.state.spend.lock().map_or(0.0, |spend| spend.priced_usd)
    }

    /// Tells every tool the turn ended ([`Tool::turn_ended`](crate::Tool::turn_ended)), all at once, waiting at most
    /// [`TURN_END_TIMEOUT`]: a host that hangs cannot hold the outcome back.
    async fn tools_turn_ended(&self) {
        let tools = self.agent.tool_snapshot();
        let mut hooks = futures::future::join_all(tools.iter().map(|tool| tool.turn_ended(self.session)));
        // Most tools have nothing to do: no timer for hooks that are done at once.
        if futures::FutureExt::now_or_never(&mut hooks).is_some() {
            return;
        }
        if tokio::time::timeout(TURN_END_TIMEOUT, hooks).await.is_err() {
            tracing::warn!(session = %self.session, "a tool's turn-end hook took longer than {TURN_END_TIMEOUT:?}; the turn ended without it");
        }
    }

    /// Waits for the store to make the turn durable. After a store failure the history in
    /// memory may hold messages the store lost, so the next turn reloads it from the store.
    async fn settle_store(&self, history: &mut History, outcome: Outcome) -> Outcome {
        let Some(store) = self.agent.store.as_ref() else {
            return outcome;
        };
        let outcome = match store.flush(self.session).await {
            Ok(()) => outcome,
            Err(e) if outcome.status == OutcomeStatus::Error => {
                tracing::warn!(session = %self.session, error = %e, "the failed turn could not be saved either");
                outcome
            }
            Err(e) => store_failed(outcome, e),
        };
        if outcome.error_kind == Some(ErrorKind::Store) {
            history.stale = true;
        }
        outcome
    }

    /// The loop: model call, tool calls, until the model answers or the turn stops.
    async fn drive_locked(&self, history: &mut History, input: TurnInput, output: Option<OutputSchema>) -> Outcome {
        // A typed turn checks its answer against the schema (a schema that does not compile
        // fails the turn before anything is added to the history).
        let mut answer = match output.map(AnswerCheck::new).transpose() {
            Ok(check) => check,
            Err(message) => return Outcome::failed(ErrorKind::OutputSchema, message),
        };
        let resumed = match self.begin(history, input).await {
            Ok(resumed) => resumed,
            Err(failed) => return *failed,
        };
        let mut outcome = Outcome::new(OutcomeStatus::Done);
        let session_before_usd = self.session_spent_usd();
        let mut repeats = repeat_guard::RepeatGuard::new(self.agent.config.max_repeated_calls);
        // A turn resumed from an approval first runs the calls that waited, as decided.
        if let Some((calls, decisions)) = resumed {
            let tools = self.offered_tools();
            outcome = match self
                .run_tools(history, outcome, &tools, &calls, &mut repeats, Some(&decisions))
                .await
            {
                ControlFlow::Continue(outcome) => outcome,
                ControlFlow::Break(ended) => return ended,
            };
        }
        loop {
            if self.cancel.is_cancelled() {
                return with_status(outcome, OutcomeStatus::Cancelled);
            }
            outcome.iterations += 1;
            let iteration = outcome.iterations;
            self.emitter.update(|s| {
                s.state = RunState::Thinking;
                s.iteration = iteration;
                s.current_tool = None;
            });
            self.emitter.emit(EventKind::ModelCallStarted { iteration });

            // One snapshot per iteration: the schemas offered and the dispatch agree.
            let tools = self.offered_tools();
            let output = answer.as_ref().map(AnswerCheck::schema);
            let mut meter = cost::Meter {
                usage: &mut outcome.usage,
                spend: &mut outcome.spend,
                session_before_usd,
            };
            let response = match self.call_model(history, &tools, output, &mut meter).await {
                Ok(r) => r,
                Err(CallFailed::Cancelled) => return with_status(outcome, OutcomeStatus::Cancelled),
                Err(CallFailed::OverBudget(message)) => {
                    // No call was made: the turn ends on the budget's message, after a user
                    // message or tool results (no call is left without its result).
                    outcome.iterations -= 1;
                    return self.capped(history, outcome, Vec::new(), message).await;
                }
                Err(CallFailed::Provider(e)) => {
                    return failed_with(outcome, ErrorKind::Provider(e.error_kind()), e.to_string());
                }
                Err(CallFailed::Hook(message)) => return failed_with(outcome, ErrorKind::Hook, message),
                Err(CallFailed::Engine(message)) => return self.stop_for_engine(outcome, message),
            };
            let served = response.served_by.as_ref().map(|(_, model)| model.as_str());
            let cost_usd = cost::Meter {
                usage: &mut outcome.usage,
                spend: &mut outcome.spend,
                session_before_usd,
            }
            .count(&self.agent.pricing, served, response.usage.as_ref());
            // Calibrates the token estimate against what the provider counted.
            context::observe_usage(history, response.usage.as_ref());
            self.emitter.emit(EventKind::ModelCallCompleted {
                iteration,
                usage: response.usage,
                cost_usd,
            });

            let mut message = response.message;
            if let Some(check) = &answer {
                check.take_answer_call(&tools, &mut message);
            }
            let text = message.text();
            let verdict = match answer.as_mut() {
                Some(check) if message.tool_calls.is_empty() => {
                    Some(check.judge(&text, outcome.iterations < self.agent.config.max_iterations))
                }
                _ => None,
            };
            if !text.is_empty() {
                self.emitter.update(|s| s.last_message = Some(text.clone()));
                outcome.final_text = Some(text);
            }
            let calls = message.tool_calls.clone();
            if let Err(e) = history
                .push(self.agent.store.as_ref(), self.session, vec![message])
                .await
            {
                return store_failed(outcome, e);
            }
            match verdict {
                Some(Verdict::Accepted(value)) => {
                    outcome.structured = Some(value);
                    return outcome;
                }
                Some(Verdict::Retry(note)) => {
                    if let Err(e) = history.push(self.agent.store.as_ref(), self.session, vec![note]).await {
                        return store_failed(outcome, e);
                    }
                    continue;
                }
                Some(Verdict::Failed(problem)) => return failed_with(outcome, ErrorKind::OutputInvalid, problem),
                None if calls.is_empty() => return outcome,
                None => {}
            }
            outcome = match self
                .run_tools(history, outcome, &tools, &calls, &mut repeats, None)
                .await
            {
                ControlFlow::Continue(outcome) => outcome,
                ControlFlow::Break(ended) => return ended,
            };
        }
    }

    /// Makes the history ready (reloaded after a store failure, repaired after a crash) and
    /// adds what starts the turn: a user message, or the answer to the parked question; or,
    /// for an approval, hands back the calls that waited for it with the decisions.
    async fn begin(&self, history: &mut History, input: TurnInput) -> Result<Option<Resumed>, Box<Outcome>> {
        let store = self.agent.store.as_ref();
        // Nothing of the turn has happened yet: a store failure is the whole outcome.
        let failed = |e: StoreError| Box::new(store_failed(Outcome::new(OutcomeStatus::Error), e));
        if history.stale
            && let Some(store) = store
        {
            *history = History::load(store.as_ref(), self.session).await.map_err(failed)?;
        }
        let mut waiting: Vec<String> = self.state.clarification.parked_call().into_iter().collect();
        waiting.extend(self.state.approval.waiting_calls());
        waiting.extend(self.state.external.waiting_calls());
        history
            .repair_interrupted(store, self.session, &waiting)
            .await
            .map_err(failed)?;
        match input {
            TurnInput::User { message, .. } => {
                clarification::dismiss_for_new_message(self, history)
                    .await
                    .map_err(failed)?;
                approval::dismiss_for_new_message(self, history).await.map_err(failed)?;
                external_tools::dismiss_for_new_message(self, history)
                    .await
                    .map_err(failed)?;
                history.turn_start = history.messages.len();
                history.push(store, self.session, vec![message]).await.map_err(failed)?;
                Ok(None)
            }
            TurnInput::Answer {
                clarification_id,
                answer,
            } => match clarification::resume(self, history, &clarification_id, &answer).await {
                Ok(()) => Ok(None),
                Err(ClarificationError::Store(e)) => Err(failed(e)),
                Err(e) => Err(Box::new(Outcome::failed(ErrorKind::Clarification, e.to_string()))),
            },
            TurnInput::Approval {
                approval_id,
                mut decisions,
            } => match approval::resume(self, history, &approval_id, &mut decisions).await {
                Ok(calls) => Ok(Some((calls, decisions))),
                Err(ApprovalError::Store(e)) => Err(failed(e)),
                Err(e) => Err(Box::new(Outcome::failed(ErrorKind::Approval, e.to_string()))),
            },
            TurnInput::ToolResults { pending_id, results } => {
                match external_tools::resume(self, history, &pending_id, &results).await {
                    Ok(()) => Ok(None),
                    Err(ExternalToolError::Store(e)) => Err(failed(e)),
                    Err(e) => Err(Box::new(Outcome::failed(ErrorKind::ToolResults, e.to_string()))),
                }
            }
        }
    }
}

impl<'a> Turn<'a> {
    /// A turn about to run: its `run_started` event is out.
    #[allow(clippy::too_many_arguments)] // the parts of one turn, handed over once
    fn started(
        agent: &'a Arc<AgentInner>,
        state: &'a Arc<SessionState>,
        cancel: &'a CancellationToken,
        emitter: &'a Emitter,
        origin: &'a TurnOrigin,
        depth: u32,
        steps: Steps<'a>,
        run_id: String,
    ) -> Self {
        emitter.emit(EventKind::RunStarted {
            run_id,
            origin: origin.clone(),
        });
        Turn {
            agent,
            state,
            session: &state.id,
            cancel,
            emitter,
            origin,
            depth,
            steps,
            model_steps: AtomicU32::new(0),
            engine_stop: std::sync::Mutex::new(None),
            external: std::sync::OnceLock::new(),
        }
    }
}

impl Turn<'_> {
    /// Ends the attempt where an executor interrupted it (see [`run_turn_with`]).
    pub(super) fn stop_for_engine(&self, outcome: Outcome, message: String) -> Outcome {
        if let Ok(mut stop) = self.engine_stop.lock() {
            stop.get_or_insert_with(|| message.clone());
        }
        failed_with(outcome, ErrorKind::Store, message)
    }

    fn engine_stopped(&self) -> bool {
        self.engine_stop.lock().is_ok_and(|stop| stop.is_some())
    }

    fn take_engine_stop(&self) -> Option<String> {
        self.engine_stop.lock().ok().and_then(|mut stop| stop.take())
    }
}

/// How a step the executor interrupted ends what called it.
fn interrupted(i: Interrupted) -> CallFailed {
    match i {
        Interrupted::Cancelled => CallFailed::Cancelled,
        Interrupted::Engine(message) => CallFailed::Engine(message),
    }
}

fn with_status(mut outcome: Outcome, status: OutcomeStatus) -> Outcome {
    outcome.status = status;
    outcome
}

/// The turn so far, ended by an error: it keeps its counts, usage and last text.
fn failed_with(mut outcome: Outcome, kind: ErrorKind, error: impl Into<String>) -> Outcome {
    outcome.status = OutcomeStatus::Error;
    outcome.error_kind = Some(kind);
    outcome.error = Some(error.into());
    outcome.error_source = None;
    outcome.clarification = None;
    outcome.approval = None;
    outcome.external_calls = None;
    outcome
}

fn store_failed(outcome: Outcome, error: StoreError) -> Outcome {
    failed_with(
        outcome,
        ErrorKind::Store,
        format!("could not save the conversation: {error}"),
    )
}
