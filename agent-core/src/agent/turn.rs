//! One turn of the ReAct loop: call the model, run the tools it asks for, repeat until it
//! answers without tool calls or the turn stops. However the turn ends, every tool call in the
//! stored history has exactly one result.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use tokio::sync::OwnedMutexGuard;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::clarify::{CLARIFICATION_TOOL, Clarification, ClarificationError};
use super::context;
use super::emit::Emitter;
use super::history::History;
use super::run::{Outcome, OutcomeStatus, RunState};
use super::tools_exec::{ExecCtx, Stop, not_run};
use super::{AgentInner, SessionState};
use crate::event::EventKind;
use crate::gate::TurnOrigin;
use crate::message::{Message, ToolCall};
use crate::provider::{ModelRequest, ModelResponse, ProviderError, ResponseAssembler, StreamEvent};
use crate::session::SessionId;
use crate::store::{Store, StoreError, ToolCallRecord, ToolCallState, now_millis};
use crate::tool::ToolSet;

/// The assistant message appended when a cap ends the turn.
pub(crate) const CAP_MESSAGE: &str = "Reached maximum iteration limit";

/// Text of the result given to a call whose turn died before it finished (crash, panic).
const INTERRUPTED: &str = "interrupted: the turn ended before this call finished; it may or may not have run";

/// What starts a turn.
pub(crate) enum TurnInput {
    /// A new user message, from the person or another tab.
    User { message: Message, origin: TurnOrigin },
    /// The answer to the pending clarification question (already checked). The turn keeps
    /// the origin of the turn that asked.
    Answer { clarification_id: String, answer: String },
}

impl TurnInput {
    /// Who the turn acts for: for an answer, whoever started the parked turn.
    fn origin(&self, state: &SessionState) -> TurnOrigin {
        match self {
            TurnInput::User { origin, .. } => origin.clone(),
            TurnInput::Answer { clarification_id, .. } => state
                .pending_clarification()
                .filter(|q| &q.id == clarification_id)
                .map(|q| q.origin)
                .unwrap_or_default(),
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

pub(crate) async fn run_turn(
    agent: Arc<AgentInner>,
    state: Arc<SessionState>,
    slot: TurnSlot,
    input: TurnInput,
    run_id: String,
    cancel: CancellationToken,
    emitter: Emitter,
) -> Outcome {
    let origin = input.origin(&state);
    emitter.emit(EventKind::RunStarted {
        run_id,
        origin: origin.clone(),
    });
    let turn = Turn {
        agent: &agent,
        state: &state,
        session: &state.id,
        cancel: &cancel,
        emitter: &emitter,
        origin: &origin,
    };
    let outcome = turn.drive(slot, input).await;
    finish(&emitter, outcome)
}

/// Updates the status and emits the run's final event.
fn finish(emitter: &Emitter, outcome: Outcome) -> Outcome {
    let state = match outcome.status {
        OutcomeStatus::Done | OutcomeStatus::Denied | OutcomeStatus::Capped => RunState::Complete,
        OutcomeStatus::Error => RunState::Error,
        OutcomeStatus::Cancelled => RunState::Cancelled,
        OutcomeStatus::AwaitingUser => RunState::AwaitingUser,
    };
    emitter.update(|s| {
        s.state = state;
        s.current_tool = None;
        s.error = outcome.error.clone();
    });
    let kind = match outcome.status {
        OutcomeStatus::Done | OutcomeStatus::Denied | OutcomeStatus::AwaitingUser => EventKind::RunCompleted {
            outcome: outcome.clone(),
        },
        OutcomeStatus::Error => EventKind::RunFailed {
            outcome: outcome.clone(),
        },
        OutcomeStatus::Cancelled => EventKind::RunCancelled {
            outcome: outcome.clone(),
        },
        OutcomeStatus::Capped => EventKind::RunCapped {
            outcome: outcome.clone(),
        },
    };
    emitter.emit(kind);
    outcome
}

struct Turn<'a> {
    agent: &'a Arc<AgentInner>,
    state: &'a Arc<SessionState>,
    session: &'a SessionId,
    cancel: &'a CancellationToken,
    emitter: &'a Emitter,
    /// Who started the turn; every gate request says so.
    origin: &'a TurnOrigin,
}

/// Why a model call did not produce a response.
enum CallFailed {
    Cancelled,
    Provider(ProviderError),
}

impl Turn<'_> {
    async fn drive(&self, slot: TurnSlot, input: TurnInput) -> Outcome {
        let mut history = tokio::select! {
            biased;
            _ = self.cancel.cancelled() => return Outcome::new(OutcomeStatus::Cancelled),
            h = slot.0 => h,
        };
        let outcome = self.drive_locked(&mut history, input).await;
        // Still holding the session: the next turn starts from a durable history.
        self.settle_store(&mut history, outcome).await
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
        if outcome.error_kind.as_deref() == Some(STORE_ERROR_KIND) {
            history.stale = true;
        }
        outcome
    }

    async fn drive_locked(&self, history: &mut History, input: TurnInput) -> Outcome {
        let mut outcome = Outcome::new(OutcomeStatus::Done);
        let store = self.agent.store.as_ref();
        if history.stale
            && let Some(store) = store
        {
            match History::load(store.as_ref(), self.session).await {
                Ok(reloaded) => *history = reloaded,
                Err(e) => return store_failed(outcome, e),
            }
        }
        let parked_call = self.state.pending_clarification().map(|q| q.call_id);
        if let Err(e) = repair_interrupted(history, store, self.session, parked_call.as_deref()).await {
            return store_failed(outcome, e);
        }
        let started = match input {
            TurnInput::User { message, .. } => self.start_with_message(history, message).await,
            TurnInput::Answer {
                clarification_id,
                answer,
            } => self.start_with_answer(history, &clarification_id, &answer).await,
        };
        if let Err(failed) = started {
            return *failed;
        }

        let config = &self.agent.config;
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
            let tools = self.agent.tool_snapshot();
            let response = match self.call_model(history, &tools).await {
                Ok(r) => r,
                Err(CallFailed::Cancelled) => return with_status(outcome, OutcomeStatus::Cancelled),
                Err(CallFailed::Provider(e)) => {
                    return failed_with(outcome, format!("provider.{}", e.kind()), e.to_string());
                }
            };
            if let Some(usage) = &response.usage {
                outcome.usage.add(usage);
            }
            // Calibrates the token estimate against what the provider counted.
            context::observe_usage(history, response.usage.as_ref());
            self.emitter.emit(EventKind::ModelCallCompleted {
                iteration,
                usage: response.usage,
            });

            let text = response.message.text();
            if !text.is_empty() {
                self.emitter.update(|s| s.last_message = Some(text.clone()));
                outcome.final_text = Some(text);
            }
            let calls = response.message.tool_calls.clone();
            if let Err(e) = history.push(store, self.session, vec![response.message]).await {
                return store_failed(outcome, e);
            }
            if calls.is_empty() {
                return outcome;
            }
            outcome.tool_calls += calls.len() as u32;

            let exec = ExecCtx {
                agent: self.agent,
                tools: &tools,
                session: self.session,
                cancel: self.cancel,
                emitter: self.emitter,
                origin: self.origin,
            };
            if iteration >= config.max_iterations {
                let results = not_run(&exec, &calls, "the iteration cap was reached").await;
                return self.capped(history, outcome, results).await;
            }
            let used_before = outcome.tool_calls as usize - calls.len();
            let allowed = config.max_tool_calls.map_or(calls.len(), |max| {
                (max as usize).saturating_sub(used_before).min(calls.len())
            });
            let (run_now, over_cap) = calls.split_at(allowed);

            let executed = exec.execute(run_now).await;
            let mut results = executed.results;
            results.extend(not_run(&exec, over_cap, "the tool-call cap was reached").await);

            match executed.stop {
                None if !over_cap.is_empty() => {
                    // The cap ends the turn, so a question asked in the same message is not asked.
                    if let Some((call, _)) = &executed.question {
                        results
                            .extend(not_run(&exec, std::slice::from_ref(call), "the tool-call cap was reached").await);
                    }
                    return self.capped(history, outcome, results).await;
                }
                None if executed.question.is_some() => {
                    if let Err(e) = history.push(store, self.session, results).await {
                        return store_failed(outcome, e);
                    }
                    if let Some((call, args)) = executed.question {
                        match self.park(history, &call, &args).await {
                            Ok(Some(question)) => {
                                let mut parked = with_status(outcome, OutcomeStatus::AwaitingUser);
                                parked.clarification = Some(question);
                                return parked;
                            }
                            // The question was malformed: the model was told; go on.
                            Ok(None) => {}
                            Err(e) => return store_failed(outcome, e),
                        }
                    }
                }
                None => {
                    if let Err(e) = history.push(store, self.session, results).await {
                        return store_failed(outcome, e);
                    }
                }
                Some(stop) => {
                    let pushed = history.push(store, self.session, results).await;
                    let ended = match stop {
                        Stop::Cancelled => with_status(outcome, OutcomeStatus::Cancelled),
                        Stop::Denied(reason) => {
                            let mut o = with_status(outcome, OutcomeStatus::Denied);
                            o.error = Some(reason);
                            o.error_kind = Some("denied".into());
                            o
                        }
                        Stop::Store(e) => store_failed(outcome, e),
                        Stop::Fatal { message, source } => {
                            let mut o = with_status(outcome, OutcomeStatus::Error);
                            o.error = Some(message);
                            o.error_kind = Some("tool.fatal".into());
                            o.error_source = source;
                            o
                        }
                    };
                    return match pushed {
                        Ok(()) => ended,
                        Err(e) => store_failed(ended, e),
                    };
                }
            }
        }
    }

    /// Starts a turn with a user message; a pending question is dismissed first.
    async fn start_with_message(&self, history: &mut History, message: Message) -> Result<(), Box<Outcome>> {
        let store = self.agent.store.as_ref();
        if let Some(pending) = self.state.take_pending(None) {
            let text = "[Clarification dismissed]: the user sent a new message instead of answering";
            settle_question(history, store, self.session, &pending, text, false)
                .await
                .map_err(|e| Box::new(store_failed(Outcome::new(OutcomeStatus::Error), e)))?;
            self.emitter.emit(EventKind::ClarificationDismissed {
                clarification_id: pending.id,
                reason: "a new message arrived".into(),
            });
        }
        history.turn_start = history.messages.len();
        history
            .push(store, self.session, vec![message])
            .await
            .map_err(|e| Box::new(store_failed(Outcome::new(OutcomeStatus::Error), e)))
    }

    /// Continues a parked turn with the person's answer.
    async fn start_with_answer(&self, history: &mut History, id: &str, answer: &str) -> Result<(), Box<Outcome>> {
        let Some(pending) = self.state.take_pending(Some(id)) else {
            return Err(Box::new(Outcome::failed(
                "clarification",
                ClarificationError::NotPending(id.to_owned()).to_string(),
            )));
        };
        history.turn_start = history.messages.len();
        let text = format!("[User Response to Clarification]: {answer}");
        settle_question(history, self.agent.store.as_ref(), self.session, &pending, &text, true)
            .await
            .map_err(|e| Box::new(store_failed(Outcome::new(OutcomeStatus::Error), e)))?;
        self.emitter.emit(EventKind::ClarificationResponded {
            clarification_id: pending.id,
            answer: answer.to_owned(),
        });
        Ok(())
    }

    /// Parks the turn on a question: persists it, emits `clarification_pending`, and watches
    /// for expiry and cancellation. Returns `None` when the question is malformed (the model
    /// gets an error result instead).
    async fn park(
        &self,
        history: &mut History,
        call: &ToolCall,
        args: &serde_json::Value,
    ) -> Result<Option<Clarification>, StoreError> {
        let store = self.agent.store.as_ref();
        let ttl = self.agent.config.clarification_ttl;
        let question = match Clarification::from_call(&call.id, args, now_millis(), ttl) {
            Ok(q) => Clarification {
                origin: self.origin.clone(),
                ..q
            },
            Err(message) => {
                let result = Message::tool_result(&call.id, &call.name, message, true);
                history.push(store, self.session, vec![result]).await?;
                return Ok(None);
            }
        };
        if let Some(store) = store {
            let json = serde_json::to_value(&question).map_err(|e| StoreError::Backend(e.to_string()))?;
            store.set_parked_run(self.session, Some(&json)).await?;
            let mut record = ToolCallRecord::pending(self.session.clone(), &call.id, &call.name, &call.arguments);
            record.started_at_ms = Some(question.asked_at_ms);
            store.upsert_tool_call(&record).await?;
        }
        self.emitter.emit(EventKind::ClarificationPending {
            clarification_id: question.id.clone(),
            question: question.to_json(),
        });
        let resolved = self.state.set_pending(question.clone());
        watch_question(
            self.agent.clone(),
            self.state.clone(),
            question.id.clone(),
            ttl,
            self.cancel.clone(),
            resolved,
            self.emitter.observers_only(),
        );
        Ok(Some(question))
    }

    /// Appends the results of the last calls and the cap message; ends `capped`.
    async fn capped(&self, history: &mut History, mut outcome: Outcome, mut results: Vec<Message>) -> Outcome {
        results.push(Message::assistant(CAP_MESSAGE));
        if let Err(e) = history.push(self.agent.store.as_ref(), self.session, results).await {
            return store_failed(outcome, e);
        }
        self.emitter.update(|s| s.last_message = Some(CAP_MESSAGE.to_owned()));
        outcome.final_text = Some(CAP_MESSAGE.to_owned());
        with_status(outcome, OutcomeStatus::Capped)
    }

    /// One streamed model call, raced against cancellation and bounded by the model timeout.
    async fn call_model(&self, history: &mut History, tools: &ToolSet) -> Result<ModelResponse, CallFailed> {
        match self.call_model_once(history, tools).await {
            Err(CallFailed::Provider(ProviderError::ContextOverflow(message))) => {
                // The provider says the request does not fit: shrink it once and retry.
                if context::after_overflow(self.agent, self.session, history, self.emitter).await {
                    self.call_model_once(history, tools).await
                } else {
                    Err(CallFailed::Provider(ProviderError::ContextOverflow(message)))
                }
            }
            other => other,
        }
    }

    async fn call_model_once(&self, history: &mut History, tools: &ToolSet) -> Result<ModelResponse, CallFailed> {
        let config = &self.agent.config;
        let mut request = ModelRequest {
            system: self.agent.system_prompt.clone(),
            messages: history.take_model_view(),
            tools: tools.schemas(),
            max_output_tokens: config.max_output_tokens,
            temperature: config.temperature,
        };
        // Compaction may call the model to summarise: it is cancellable like any model call.
        let fitted = tokio::select! {
            biased;
            _ = self.cancel.cancelled() => return Err(CallFailed::Cancelled),
            fitted = context::fit_request(self.agent, self.session, history, &mut request, self.emitter) => fitted,
        };
        let result = self.send_request(&request).await;
        if fitted == context::Fitted::AsIs {
            history.keep_model_view(request.messages);
        }
        result
    }

    /// Sends one request and assembles the streamed answer, emitting tokens as they come.
    async fn send_request(&self, request: &ModelRequest) -> Result<ModelResponse, CallFailed> {
        let config = &self.agent.config;
        let call = async {
            let mut stream = self.agent.provider.stream(request, self.cancel.child_token()).await?;
            let mut assembler = ResponseAssembler::new();
            while let Some(event) = stream.next().await {
                let event = event?;
                match &event {
                    StreamEvent::TextDelta { text } => {
                        self.emitter.emit(EventKind::ContentToken { text: text.clone() })
                    }
                    StreamEvent::ReasoningDelta { text } => {
                        self.emitter.emit(EventKind::ReasoningToken { text: text.clone() })
                    }
                    StreamEvent::Served { provider, model } => self.emitter.emit(EventKind::ModelRouted {
                        provider: provider.clone(),
                        model: model.clone(),
                    }),
                    _ => {}
                }
                assembler.push(event)?;
            }
            if !assembler.is_done() {
                return Err(ProviderError::Malformed(
                    "the response stream ended before the model finished".into(),
                ));
            }
            Ok(assembler.finish())
        };
        tokio::select! {
            biased;
            _ = self.cancel.cancelled() => Err(CallFailed::Cancelled),
            result = tokio::time::timeout(config.model_timeout, call) => match result {
                Err(_) => Err(CallFailed::Provider(ProviderError::Timeout(format!(
                    "no complete answer within {} s (the model-call timeout)",
                    config.model_timeout.as_secs_f64()
                )))),
                Ok(Err(ProviderError::Cancelled)) => Err(CallFailed::Cancelled),
                Ok(Err(e)) => Err(CallFailed::Provider(e)),
                Ok(Ok(response)) => Ok(response),
            },
        }
    }
}

fn with_status(mut outcome: Outcome, status: OutcomeStatus) -> Outcome {
    outcome.status = status;
    outcome
}

/// The turn so far, ended by an error: it keeps its counts, usage and last text.
fn failed_with(mut outcome: Outcome, kind: impl Into<String>, error: impl Into<String>) -> Outcome {
    outcome.status = OutcomeStatus::Error;
    outcome.error_kind = Some(kind.into());
    outcome.error = Some(error.into());
    outcome.error_source = None;
    outcome.clarification = None;
    outcome
}

/// The `error_kind` of a turn the store failed.
const STORE_ERROR_KIND: &str = "store";

fn store_failed(outcome: Outcome, error: StoreError) -> Outcome {
    failed_with(
        outcome,
        STORE_ERROR_KIND,
        format!("could not save the conversation: {error}"),
    )
}

/// Gives every dangling tool call of the last assistant message an "interrupted" result, and
/// marks its record cancelled, so the next request is valid after a crash or a lost task.
pub(crate) async fn repair_interrupted(
    history: &mut History,
    store: Option<&Arc<dyn Store>>,
    session: &SessionId,
    parked_call: Option<&str>,
) -> Result<(), StoreError> {
    // A call parked on a clarification question is waiting, not interrupted.
    let mut dangling = history.dangling_calls();
    dangling.retain(|(id, _)| Some(id.as_str()) != parked_call);
    if dangling.is_empty() {
        return Ok(());
    }
    if let Some(store) = store {
        let records = store.tool_calls(session).await?;
        for record in records {
            if !record.state.is_final() && dangling.iter().any(|(id, _)| *id == record.call_id) {
                let mut fixed = record;
                fixed.state = ToolCallState::Cancelled;
                fixed.error = Some(INTERRUPTED.to_owned());
                fixed.finished_at_ms = Some(now_millis());
                store.upsert_tool_call(&fixed).await?;
            }
        }
    }
    let results = dangling
        .into_iter()
        .map(|(id, name)| Message::tool_result(id, name, INTERRUPTED, true))
        .collect();
    history.push(store, session, results).await
}

/// Gives the parked `ask_clarification` call its result (`answered`: the person answered;
/// otherwise it expired or was dismissed) and clears the parked state.
async fn settle_question(
    history: &mut History,
    store: Option<&Arc<dyn Store>>,
    session: &SessionId,
    question: &Clarification,
    text: &str,
    answered: bool,
) -> Result<(), StoreError> {
    let result = Message::tool_result(&question.call_id, CLARIFICATION_TOOL, text, !answered);
    history.push(store, session, vec![result]).await?;
    if let Some(store) = store {
        store.set_parked_run(session, None).await?;
        let mut record = ToolCallRecord::pending(session.clone(), &question.call_id, CLARIFICATION_TOOL, "");
        record.state = if answered {
            ToolCallState::Succeeded
        } else {
            ToolCallState::Cancelled
        };
        record.raw_result = Some(text.to_owned());
        record.started_at_ms = Some(question.asked_at_ms);
        record.finished_at_ms = Some(now_millis());
        if let Some(existing) = store
            .tool_calls(session)
            .await?
            .into_iter()
            .find(|r| r.call_id == question.call_id)
        {
            record.arguments = existing.arguments;
        }
        store.upsert_tool_call(&record).await?;
    }
    Ok(())
}

/// Expires or dismisses a pending question unless it is answered first: after `ttl`, or when
/// the parked run is cancelled. The model finds the outcome in the transcript next turn.
pub(crate) fn watch_question(
    agent: Arc<AgentInner>,
    state: Arc<SessionState>,
    id: String,
    ttl: std::time::Duration,
    cancel: CancellationToken,
    resolved: CancellationToken,
    emitter: Emitter,
) {
    agent.runtime.clone().spawn(async move {
        let expired = tokio::select! {
            _ = resolved.cancelled() => return,
            _ = cancel.cancelled() => false,
            _ = tokio::time::sleep(ttl) => true,
        };
        let mut history = state.history.lock().await;
        let Some(question) = state.take_pending(Some(&id)) else {
            return;
        };
        let (text, event) = if expired {
            (
                format!(
                    "[Clarification expired]: the user did not answer within {} minutes",
                    ttl.as_secs().div_ceil(60)
                ),
                EventKind::ClarificationExpired {
                    clarification_id: id.clone(),
                },
            )
        } else {
            (
                "[Clarification dismissed]: the run was cancelled before the user answered".to_owned(),
                EventKind::ClarificationDismissed {
                    clarification_id: id.clone(),
                    reason: "the run was cancelled".into(),
                },
            )
        };
        if let Err(e) = settle_question(&mut history, agent.store.as_ref(), &state.id, &question, &text, false).await {
            tracing::warn!(error = %e, "could not record the end of a clarification");
        }
        drop(history);
        emitter.emit(event);
    });
}
