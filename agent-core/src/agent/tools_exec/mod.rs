//! Running one assistant message's tool calls: validate, ask the gate, run (parallel-safe
//! tools up to the limit at once), cap, record. Every call ends with exactly one result.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, Span};

mod cap;
mod consent;
mod record;
mod step;

use super::AgentInner;
use super::approval::{ApprovalCall, ApprovalDecision, Decisions, NestedDecisions, Parking, Verdict, asked};
use super::clarification;
use super::config::DenialPolicy;
use super::emit::Emitter;
use super::error_kind::ErrorKind;
use super::genai_spans;
use super::hook_points::{self, Decided};
use super::offered_tools::ExternalSet;
use super::run::RunState;
use super::sub_agent::SubAgentParked;
use crate::agent::hooks::ToolCallInfo;
use crate::compress::{compress_text, compress_value_text};
use crate::event::EventKind;
use crate::gate::TurnOrigin;
use crate::message::{Message, ToolCall};
use crate::session::SessionId;
use crate::steps::{Interrupted, StepKind, StepRequest, Steps};
use crate::store::{StoreError, ToolCallState, now_millis};
use crate::tool::{BoxError, Tool, ToolContext, ToolError, ToolOutput, ToolSet, UsageMeter};
use crate::untrusted::wrap_untrusted;
pub(super) use cap::cap_output;
use consent::{Consent, Later};
use step::ToolStep;

pub(crate) use record::not_run;

/// Why the calls of a message stopped early.
pub(crate) enum Stop {
    Cancelled,
    Denied(String),
    Fatal {
        message: String,
        source: Option<Arc<BoxError>>,
    },
    /// The store could not make the conversation durable before a gated call.
    Store(StoreError),
    /// A host hook failed (its message).
    Hook(String),
    /// A durable executor stopped the attempt (its message): nothing more is written.
    Engine(String),
}

/// The results (one per call, in call order) and why execution stopped, if it did.
pub(crate) struct Executed {
    pub results: Vec<Message>,
    pub stop: Option<Stop>,
    /// An `ask_clarification` call to park the turn on (its result comes with the answer).
    pub question: Option<(ToolCall, serde_json::Value)>,
    /// The calls the gate asked the person about: the turn parks on them, and the first of
    /// them and the calls after it have no result yet.
    pub approval: Option<Parking>,
    /// Calls of the turn's external tools, with their checked arguments, to park the turn on
    /// (the host runs them; their results come with the host's). Empty unless the turn parks
    /// on them.
    pub external: Vec<(ToolCall, serde_json::Value)>,
}

pub(crate) struct ExecCtx<'a> {
    pub agent: &'a AgentInner,
    /// The tool set the model was offered in this iteration.
    pub tools: &'a ToolSet,
    pub session: &'a SessionId,
    pub cancel: &'a CancellationToken,
    pub emitter: &'a Emitter,
    /// Who started the turn, for gate requests.
    pub origin: &'a TurnOrigin,
    /// How many agents run above this turn's.
    pub depth: u32,
    /// Where tools report what their own model calls spent (sub-agents).
    pub spent: &'a UsageMeter,
    /// The person's decisions, by call id, when the turn resumes from an approval.
    pub decided: Option<&'a Decisions>,
    /// How calls run: in place, or each one a journaled step (then one at a time).
    pub steps: Steps<'a>,
    /// The tools the host runs itself, when the turn offers any.
    pub external: Option<&'a ExternalSet>,
}

struct Prepared {
    tool: Arc<dyn Tool>,
    args: serde_json::Value,
    /// For a sub-agent's call its turn parked in: the decisions that resume that turn (the
    /// call runs the sub-agent on, it does not start it again).
    resume: Option<Box<NestedDecisions>>,
}

/// Why settling a call stops the message's calls.
enum Halt {
    Stop(Stop),
    /// The call's sub-agent parked for approval (the call's index, the sub-agent's calls):
    /// the turn parks on them.
    SubAgentParked(usize, Vec<ApprovalCall>),
}

enum Failure {
    Tool(ToolError),
    Timeout(Duration),
    Panic(String),
}

struct Finished {
    index: usize,
    /// The call's `execute_tool` span, which the result is recorded on.
    span: Span,
    /// The arguments it ran with, kept only for the after_tool_call hooks.
    arguments: Option<serde_json::Value>,
    result: Result<ToolOutput, Failure>,
    started_at_ms: i64,
    elapsed: Duration,
}

type Inflight = FuturesUnordered<BoxFuture<'static, Finished>>;

impl ExecCtx<'_> {
    pub async fn execute(&self, calls: &[ToolCall]) -> Executed {
        let max_parallel = self.agent.config.max_parallel_tools.max(1);
        let mut slots: Vec<Option<Message>> = vec![None; calls.len()];
        let mut started = vec![false; calls.len()];
        let mut inflight = Inflight::new();
        let mut stop = None;
        let mut question: Option<(usize, serde_json::Value)> = None;
        let mut approval: Option<Parking> = None;
        let mut external: Vec<(usize, serde_json::Value)> = Vec::new();

        'calls: for (index, call) in calls.iter().enumerate() {
            let mut prepared = match self.prepare(call) {
                Ok(p) => p,
                // Behind a call that waits for the person, it is refused when the turn resumes.
                Err(_) if approval.is_some() => continue,
                Err(message) => {
                    slots[index] = Some(self.refuse(call, message).await);
                    continue;
                }
            };
            // A sub-agent's call parked on the person's approval, now answered: it continues the
            // sub-agent's turn, consented and hooked when it first ran.
            let resumes = match self.decided.and_then(|d| d.nested(&call.id)) {
                Some(nested) => {
                    prepared.resume = Some(Box::new(nested.clone()));
                    true
                }
                None => false,
            };
            // Behind a call that waits for the person, every call waits; the gate is asked about
            // the gated ones now, so that the person answers the whole message at once.
            if let Some(parking) = approval.as_mut() {
                let hosted = self.external.is_some_and(|tools| tools.has(&call.name));
                let skip = resumes || hosted || clarification::is_question(call) || !prepared.tool.spec().gated;
                if skip || parking.ends_turn {
                    continue;
                }
                match self.consent_later(call, &prepared.tool, &prepared.args).await {
                    Later::Ask(call) => parking.calls.push(call),
                    Later::Decided(gated) => {
                        // A denial that ends the turn: the calls after it will not run, so the
                        // person is not asked about them.
                        parking.ends_turn = matches!(gated.verdict, Verdict::Deny { .. })
                            && self.agent.config.on_denial == DenialPolicy::EndTurn;
                        parking.gated.push(gated);
                    }
                    Later::Cancelled => {
                        stop = Some(Stop::Cancelled);
                        break 'calls;
                    }
                    Later::StoreFailed(e) => {
                        stop = Some(Stop::Store(e));
                        break 'calls;
                    }
                }
                continue;
            }
            // The loop parks on a question instead of running it (see `clarification`).
            if !resumes && clarification::is_question(call) {
                if question.is_some() {
                    slots[index] = Some(self.refuse(call, clarification::ONE_AT_A_TIME.to_owned()).await);
                } else {
                    question = Some((index, prepared.args));
                }
                continue;
            }
            // The host runs the calls of its own tools: the turn parks on them.
            if !resumes
                && let Some(tools) = self.external
                && tools.has(&call.name)
            {
                external.push((index, prepared.args));
                continue;
            }
            let prepared = if resumes || self.agent.hooks.is_empty() {
                prepared
            } else {
                match self.hooked(call, prepared).await {
                    Ok(Ok(p)) => p,
                    Ok(Err(message)) => {
                        slots[index] = Some(self.refuse(call, message).await);
                        continue;
                    }
                    Err(message) => {
                        stop = Some(Stop::Hook(message));
                        break 'calls;
                    }
                }
            };
            let spec = prepared.tool.spec();
            if spec.gated && !resumes {
                match self.consent(call, &prepared.tool, &prepared.args).await {
                    Consent::Run => {}
                    Consent::Refused(result) => {
                        slots[index] = Some(result);
                        continue;
                    }
                    Consent::EndTurn(result, why) => {
                        slots[index] = Some(result);
                        stop = Some(Stop::Denied(why));
                        break 'calls;
                    }
                    Consent::Park(prompt, host) => {
                        approval = Some(Parking::at(index, vec![asked(call, prepared.args, prompt, host)]));
                        continue;
                    }
                    Consent::Cancelled => {
                        stop = Some(Stop::Cancelled);
                        break 'calls;
                    }
                    Consent::StoreFailed(e) => {
                        stop = Some(Stop::Store(e));
                        break 'calls;
                    }
                }
            }
            if self.steps.is_durable() {
                // A journaled call runs alone: an engine replays steps one at a time.
                started[index] = true;
                // Boxed: the in-process turn's future does not carry the durable path's state.
                let ended = match Box::pin(self.run_step(index, call, prepared)).await {
                    Ok(done) => self.settle(calls, &mut slots, done).await,
                    Err(Interrupted::Cancelled) => Some(Halt::Stop(Stop::Cancelled)),
                    Err(Interrupted::Engine(message)) => Some(Halt::Stop(Stop::Engine(message))),
                };
                if let Some(halt) = ended {
                    stop = halted(halt, &mut approval);
                    break 'calls;
                }
                continue;
            }
            // A sequential tool runs alone; a parallel-safe one waits for a free slot.
            let parallel = spec.parallel_safe;
            let room = if parallel { max_parallel } else { 1 };
            while inflight.len() >= room || (!parallel && !inflight.is_empty()) {
                if let Some(halt) = self.settle_next(calls, &mut slots, &mut inflight).await {
                    stop = halted(halt, &mut approval);
                    break 'calls;
                }
            }
            started[index] = true;
            let future = self.launch(index, call, prepared).await;
            inflight.push(future);
            if !parallel && let Some(halt) = self.settle_next(calls, &mut slots, &mut inflight).await {
                stop = halted(halt, &mut approval);
                break 'calls;
            }
        }

        // Calls already running finish unless the turn was cancelled or failed.
        if matches!(stop, None | Some(Stop::Denied(_))) {
            while !inflight.is_empty() {
                if let Some(halt) = self.settle_next(calls, &mut slots, &mut inflight).await {
                    stop = halted(halt, &mut approval);
                    if stop.is_some() {
                        break;
                    }
                }
            }
        }
        // Dropping the set drops every unfinished tool future.
        drop(inflight);
        if matches!(stop, Some(Stop::Engine(_))) {
            // The engine retries the attempt: no result is written for any call.
            return Executed {
                results: Vec::new(),
                stop,
                question: None,
                approval: None,
                external: Vec::new(),
            };
        }
        // External calls park the turn when nothing else ends or parks it; those before a call
        // that waits for approval are refused (those after it wait with it).
        let parks_external = stop.is_none() && approval.is_none() && !external.is_empty();
        if stop.is_none()
            && let Some(Parking { index: parked, .. }) = &approval
        {
            for (index, _) in external.iter().filter(|(index, _)| index < parked) {
                let why = "not run: a call in the same message is waiting for the person's approval; call it again once it is answered";
                slots[*index] = Some(self.refuse(&calls[*index], why.to_owned()).await);
            }
        }

        // A question parks the turn only when nothing else stopped it, and not when an
        // approval does: a question the model asked before the approved call is refused, one
        // after it waits with it.
        let question = match (question, &stop, &approval) {
            (Some((index, args)), None, None) if !parks_external => Some((index, args)),
            (Some((index, _)), None, None) => {
                let why = "not asked: calls in the same message are waiting for the host's results; ask again once they are answered";
                slots[index] = Some(self.refuse(&calls[index], why.to_owned()).await);
                None
            }
            (Some((index, _)), None, Some(Parking { index: parked, .. })) if index < *parked => {
                let why = "not asked: a call in the same message is waiting for the person's approval; ask again once it is answered";
                slots[index] = Some(self.refuse(&calls[index], why.to_owned()).await);
                None
            }
            _ => None,
        };
        let approval = if stop.is_none() { approval } else { None };
        let mut results = Vec::with_capacity(calls.len());
        for (index, call) in calls.iter().enumerate() {
            if question.as_ref().is_some_and(|(q, _)| *q == index) {
                continue;
            }
            if parks_external && external.iter().any(|(e, _)| *e == index) {
                continue;
            }
            // The parked call and those after it get their results when the person answers.
            if approval.as_ref().is_some_and(|parking| index >= parking.index) {
                break;
            }
            match slots[index].take() {
                Some(m) => results.push(m),
                None => results.push(self.unfinished(call, started[index], stop.as_ref()).await),
            }
        }
        self.emitter.update(|s| s.current_tool = None);
        Executed {
            results,
            stop,
            question: question.map(|(index, args)| (calls[index].clone(), args)),
            approval,
            external: if parks_external {
                external
                    .into_iter()
                    .map(|(index, args)| (calls[index].clone(), args))
                    .collect()
            } else {
                Vec::new()
            },
        }
    }

    fn prepare(&self, call: &ToolCall) -> Result<Prepared, String> {
        let Some(tool) = self.tools.get(&call.name) else {
            let names = self.tools.names();
            let available = if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            };
            // The name is the model's invention here: clipped to one short line.
            return Err(format!(
                "unknown tool \"{}\"; available tools: {available}. The call did not run.",
                crate::untrusted::tool_name(&call.name)
            ));
        };
        let args = call.parse_arguments().map_err(|e| {
            format!(
                "the arguments of {} are not valid JSON ({e}); send one JSON object that matches the tool's schema. The tool did not run.",
                call.name
            )
        })?;
        self.tools.validate(&call.name, &args).map_err(|e| e.message)?;
        // The person approved it with edited arguments (checked against the schema then).
        let args = match self.decided.and_then(|d| d.get(&call.id)) {
            Some(ApprovalDecision::Approve {
                arguments: Some(edited),
                ..
            }) => edited.clone(),
            _ => args,
        };
        Ok(Prepared {
            tool: tool.clone(),
            args,
            resume: None,
        })
    }

    /// The call as the before_tool_call hooks leave it: to run (rewritten arguments checked
    /// against the schema again), or refused with what the model is told; `Err` when a hook
    /// failed.
    async fn hooked(&self, call: &ToolCall, prepared: Prepared) -> Result<Result<Prepared, String>, String> {
        let info = ToolCallInfo {
            session_id: self.session,
            call_id: &call.id,
            tool: &call.name,
            arguments: &prepared.args,
            origin: self.origin,
        };
        match hook_points::before_tool_call(&self.agent.hooks, info).await? {
            Decided::Denied(reason) => Ok(Err(format!("denied by the host: {reason}. {} did not run.", call.name))),
            Decided::Run(args) if args == prepared.args => Ok(Ok(prepared)),
            Decided::Run(args) => match self.tools.validate(&call.name, &args) {
                Ok(()) => Ok(Ok(Prepared {
                    tool: prepared.tool,
                    args,
                    resume: None,
                })),
                Err(e) => Ok(Err(format!(
                    "the host rewrote the arguments of {} into ones its schema refuses ({}); the tool did not run.",
                    call.name, e.message
                ))),
            },
        }
    }

    /// Announces a call about to run: the status, the `tool_call_started` event and the
    /// `running` record. Returns when it started.
    async fn announce(&self, call: &ToolCall, args: &serde_json::Value) -> i64 {
        self.emitter.update(|s| {
            s.state = RunState::ToolCall;
            s.current_tool = Some(call.name.clone());
        });
        self.emitter.emit(EventKind::ToolCallStarted {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: args.clone(),
        });
        let started_at_ms = now_millis();
        let mut record = self.record(call, ToolCallState::Running);
        record.started_at_ms = Some(started_at_ms);
        self.save(call, record).await;
        started_at_ms
    }

    /// What a call of `call` gets to know and the token that cancels it.
    fn tool_context(&self, call: &ToolCall) -> (ToolContext, CancellationToken) {
        let cancel = self.cancel.child_token();
        let cx = ToolContext {
            session_id: self.session.clone(),
            call_id: call.id.clone(),
            cancel: cancel.clone(),
            model_takes_images: self.agent.takes_images,
            depth: self.depth,
            origin: self.origin.clone(),
            spent: self.spent.clone(),
        };
        (cx, cancel)
    }

    /// The call itself (not yet polled): bounded by the tool's timeout, panics caught, and
    /// how long it took.
    fn call_future(
        &self,
        call: &ToolCall,
        prepared: Prepared,
        timeout: Duration,
    ) -> impl Future<Output = (Result<ToolOutput, Failure>, Duration)> + Send + 'static {
        let (cx, cancel) = self.tool_context(call);
        let Prepared { tool, args, resume } = prepared;
        async move {
            let start = Instant::now();
            let guarded = AssertUnwindSafe(async move {
                match resume {
                    None => tool.call(args, cx).await,
                    Some(nested) => resume_sub_agent(tool.as_ref(), nested, cx).await,
                }
            })
            .catch_unwind();
            let result = ended(tokio::time::timeout(timeout, guarded).await, &cancel, timeout);
            (result, start.elapsed())
        }
    }

    async fn launch(&self, index: usize, call: &ToolCall, prepared: Prepared) -> BoxFuture<'static, Finished> {
        let spec = prepared.tool.spec();
        let timeout = spec.timeout.unwrap_or(self.agent.config.tool_timeout);
        let span = genai_spans::execute_tool(self.agent, self.session, call, spec, &prepared.args);
        let started_at_ms = self.announce(call, &prepared.args).await;
        // The call's future is built here, not by `call_future`: one async block, so the
        // boxed future is no larger than the call needs (the loop benchmark shows a nested
        // one).
        let (cx, cancel) = self.tool_context(call);
        let Prepared { tool, args, resume } = prepared;
        let arguments = (!self.agent.hooks.is_empty()).then(|| args.clone());
        let traced = span.clone();
        let call = async move {
            let start = Instant::now();
            let guarded = AssertUnwindSafe(async move {
                match resume {
                    None => tool.call(args, cx).await,
                    Some(nested) => resume_sub_agent(tool.as_ref(), nested, cx).await,
                }
            })
            .catch_unwind();
            let result = ended(tokio::time::timeout(timeout, guarded).await, &cancel, timeout);
            Finished {
                index,
                span,
                arguments,
                result,
                started_at_ms,
                elapsed: start.elapsed(),
            }
        };
        // A sub-agent's turn started by the tool nests under this span; without a subscriber
        // the call is not wrapped at all.
        if traced.is_disabled() {
            call.boxed()
        } else {
            call.instrument(traced).boxed()
        }
    }

    /// Runs a call as a journaled step (`tool:{call id}`): on a replay that reaches it, the
    /// recorded result stands and the tool does not run again. A cancel while it runs is
    /// recorded too, so a replay ends the turn the same way.
    async fn run_step(&self, index: usize, call: &ToolCall, prepared: Prepared) -> Result<Finished, Interrupted> {
        let input = serde_json::json!({ "tool": call.name, "arguments": prepared.args });
        let spec = prepared.tool.spec();
        let timeout = spec.timeout.unwrap_or(self.agent.config.tool_timeout);
        let span = genai_spans::execute_tool(self.agent, self.session, call, spec, &prepared.args);
        let started_at_ms = self.announce(call, &prepared.args).await;
        let arguments = (!self.agent.hooks.is_empty()).then(|| prepared.args.clone());
        let run = self.call_future(call, prepared, timeout);
        let cancel = self.cancel.clone();
        let effect = async move {
            tokio::select! {
                biased;
                _ = cancel.cancelled() => ToolStep::Cancelled,
                (result, elapsed) = run => ToolStep::finished(result, elapsed),
            }
        }
        .instrument(span.clone());
        let request = || StepRequest {
            kind: StepKind::Tool,
            name: format!("tool:{}", call.id),
            input,
        };
        let (result, elapsed) = self.steps.run(request, effect).await?.into_result()?;
        Ok(Finished {
            index,
            span,
            arguments,
            result,
            started_at_ms,
            elapsed,
        })
    }

    /// Waits for the next running call to finish and records its result. Returns why the
    /// calls must stop, if they must: the run was cancelled first, or the tool failed fatally.
    async fn settle_next(
        &self,
        calls: &[ToolCall],
        slots: &mut [Option<Message>],
        inflight: &mut Inflight,
    ) -> Option<Halt> {
        let done = tokio::select! {
            biased;
            _ = self.cancel.cancelled() => return Some(Halt::Stop(Stop::Cancelled)),
            done = inflight.next() => done?,
        };
        self.settle(calls, slots, done).await
    }

    /// Turns a finished call into its result message; returns a stop for fatal errors, and a
    /// park for a sub-agent's call whose turn parked for approval (no result yet).
    async fn settle(&self, calls: &[ToolCall], slots: &mut [Option<Message>], done: Finished) -> Option<Halt> {
        if let Err(Failure::Tool(ToolError::Fatal {
            source: Some(source), ..
        })) = &done.result
            && let Some(parked) = source.downcast_ref::<SubAgentParked>()
        {
            return Some(Halt::SubAgentParked(done.index, parked.calls.clone()));
        }
        let call = &calls[done.index];
        let mut record = self.record(call, ToolCallState::Succeeded);
        record.started_at_ms = Some(done.started_at_ms);
        record.finished_at_ms = Some(now_millis());
        let duration_ms = done.elapsed.as_millis() as u64;
        let mut hook_stop = None;
        let result = match done.arguments {
            Some(arguments) => {
                // A fatal error stays fatal; a timeout or a crash is an error for the model.
                let mut result = done.result.map_err(|f| match f {
                    Failure::Tool(e) => e,
                    other => ToolError::model(failure_text(call, other)),
                });
                let info = ToolCallInfo {
                    session_id: self.session,
                    call_id: &call.id,
                    tool: &call.name,
                    arguments: &arguments,
                    origin: self.origin,
                };
                if let Err(message) = hook_points::after_tool_call(&self.agent.hooks, info, &mut result).await {
                    result = Err(ToolError::model(format!("{} ran, but {message}", call.name)));
                    hook_stop = Some(Stop::Hook(message));
                }
                result.map_err(Failure::Tool)
            }
            None => done.result,
        };
        let (message, stop) = match result {
            Ok(mut output) => {
                let provenance = output.provenance.take();
                let mut capped = cap_output(output, self.agent.config.result_cap_chars);
                let compression = &self.agent.config.compression;
                let mut compressed = match capped.structured.take() {
                    Some(value) => compress_value_text(value, compression),
                    None => compress_text(&capped.full_text, compression),
                }
                .filter(|c| c.len() < capped.model_text.len());
                if let Some(source) = &provenance {
                    capped.wrap(source);
                    compressed = compressed.map(|c| wrap_untrusted(source, &c));
                }
                genai_spans::record_tool_result(&done.span, self.agent, &capped.model_text);
                self.emitter.emit(EventKind::ToolCallSucceeded {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    output: capped.model_text.clone(),
                    truncated: capped.truncated,
                    duration_ms,
                });
                record.raw_result = Some(capped.full_text);
                record.compressed_result = compressed.clone();
                let mut message = Message::tool_result(&call.id, &call.name, "", false);
                message.content = capped.content;
                message.compressed = compressed;
                (message, None)
            }
            Err(failure) => {
                let kind = match hook_stop {
                    Some(_) => ErrorKind::Hook.as_str(),
                    None => failure_kind(&failure),
                };
                genai_spans::record_error(&done.span, kind);
                let (text, stop) = match failure {
                    Failure::Tool(ToolError::Fatal { message, source }) => (
                        format!("error: {message}"),
                        Some(Stop::Fatal {
                            message: format!("tool {} failed fatally: {message}", call.name),
                            source: source.map(Arc::new),
                        }),
                    ),
                    other => (format!("error: {}", failure_text(call, other)), None),
                };
                self.emitter.emit(EventKind::ToolCallFailed {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    error: text.clone(),
                    fatal: stop.is_some(),
                });
                genai_spans::record_tool_result(&done.span, self.agent, &text);
                record.state = ToolCallState::Failed;
                record.error = Some(text.clone());
                (Message::tool_result(&call.id, &call.name, text, true), stop)
            }
        };
        self.save(call, record).await;
        slots[done.index] = Some(message);
        hook_stop.or(stop).map(Halt::Stop)
    }
}

/// A halt as the message's calls take it: a stop, or (for a sub-agent that parked) the
/// approval the turn parks on, unless an earlier call already parks it.
fn halted(halt: Halt, approval: &mut Option<Parking>) -> Option<Stop> {
    match halt {
        Halt::Stop(stop) => Some(stop),
        Halt::SubAgentParked(index, nested) => {
            if approval.as_ref().is_none_or(|parking| index < parking.index) {
                *approval = Some(Parking::at(index, nested));
            }
            None
        }
    }
}

/// Continues the sub-agent's turn a call of `tool` parked in (see [`Prepared::resume`]).
fn resume_sub_agent(
    tool: &dyn Tool,
    nested: Box<NestedDecisions>,
    cx: ToolContext,
) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
    async move {
        match tool.as_sub_agent() {
            Some(sub_agent) => sub_agent.resume(&nested, cx).await,
            None => Err(ToolError::model(format!(
                "{} is no longer a sub-agent, so its parked task cannot continue",
                tool.spec().name
            ))),
        }
    }
    .boxed()
}

/// How a call bounded by `timeout` ended: its output, or why there is none. A call that
/// timed out is told to stop through `cancel`.
fn ended(
    result: Result<std::thread::Result<Result<ToolOutput, ToolError>>, tokio::time::error::Elapsed>,
    cancel: &CancellationToken,
    timeout: Duration,
) -> Result<ToolOutput, Failure> {
    match result {
        Err(_) => {
            cancel.cancel();
            Err(Failure::Timeout(timeout))
        }
        Ok(Err(panic)) => Err(Failure::Panic(panic_message(panic.as_ref()))),
        Ok(Ok(Err(e))) => Err(Failure::Tool(e)),
        Ok(Ok(Ok(output))) => Ok(output),
    }
}

/// The `error.type` of a failed call's span: `tool.fatal` (the turn's error kind when it ends
/// the turn), `tool.error`, `tool.timeout` or `tool.panic`.
fn failure_kind(failure: &Failure) -> &'static str {
    match failure {
        Failure::Tool(ToolError::Fatal { .. }) => ErrorKind::ToolFatal.as_str(),
        Failure::Tool(ToolError::ForModel { .. }) => "tool.error",
        Failure::Timeout(_) => "tool.timeout",
        Failure::Panic(_) => "tool.panic",
    }
}

/// What the model is told of a failure that is not fatal (without the `error: ` prefix).
fn failure_text(call: &ToolCall, failure: Failure) -> String {
    match failure {
        Failure::Tool(ToolError::ForModel { message, .. } | ToolError::Fatal { message, .. }) => message,
        Failure::Timeout(limit) => format!("{} timed out after {} ms and was stopped", call.name, limit.as_millis()),
        Failure::Panic(what) => format!("{} crashed ({what})", call.name),
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        format!("panic: {s}")
    } else if let Some(s) = panic.downcast_ref::<String>() {
        format!("panic: {s}")
    } else {
        "panic".to_owned()
    }
}
