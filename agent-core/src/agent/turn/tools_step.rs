//! The tool half of an iteration: run the calls the model asked for within the caps, record
//! their results, and decide from how the calls stopped whether the loop goes on.

use std::ops::ControlFlow;

use super::repeat_guard::{RepeatGuard, Verdict};
use super::{Turn, store_failed, with_status};
use crate::agent::approval::{self, Decisions, Parking};
use crate::agent::clarification;
use crate::agent::error_kind::ErrorKind;
use crate::agent::external_tools;
use crate::agent::history::History;
use crate::agent::run::{Outcome, OutcomeStatus};
use crate::agent::tools_exec::{ExecCtx, Executed, Stop, not_run};
use crate::message::{Message, Role, ToolCall};
use crate::tool::{ToolSet, UsageMeter};

/// The assistant message appended when the iteration cap ends the turn.
const ITERATION_CAP_MESSAGE: &str = "Reached maximum iteration limit";

/// The assistant message appended when the tool-call cap ends the turn: its own, so the person
/// (and a host that polls `last_message`) can tell which limit stopped the agent.
fn tool_call_cap_message(max: u32) -> String {
    format!("Reached maximum tool call limit ({max} per turn)")
}

const TOOL_CALL_CAP: &str = "the tool-call cap was reached";

const REPEATED_CALLS: &str = "the turn ended on a repeated tool call";

/// Shows the guard each call that ran with its result, in the model's order; the message the
/// turn ends with when the model went on repeating a call after the guard's note.
fn watch_repeats(repeats: &mut RepeatGuard, calls: &[ToolCall], results: &mut [Message]) -> Option<String> {
    let mut stop = None;
    for call in calls {
        let Some(result) = results
            .iter_mut()
            .find(|r| r.tool_call_id.as_deref() == Some(call.id.as_str()))
        else {
            continue;
        };
        if let Verdict::Stop(message) = repeats.observe(call, result) {
            stop.get_or_insert(message);
        }
    }
    stop
}

/// The calls of external tools, without their arguments.
fn host_calls(external: &[(ToolCall, serde_json::Value)]) -> Vec<ToolCall> {
    external.iter().map(|(call, _)| call.clone()).collect()
}

impl Turn<'_> {
    /// Runs one assistant message's tool calls. `Continue` with the turn so far when the loop
    /// calls the model again; `Break` with the outcome when the turn ends here.
    pub(super) async fn run_tools(
        &self,
        history: &mut History,
        mut outcome: Outcome,
        tools: &ToolSet,
        calls: &[ToolCall],
        repeats: &mut RepeatGuard,
        decided: Option<&Decisions>,
    ) -> ControlFlow<Outcome, Outcome> {
        let config = &self.agent.config;
        outcome.tool_calls += calls.len() as u32;
        let spent = UsageMeter::default();
        let exec = ExecCtx {
            agent: self.agent,
            tools,
            session: self.session,
            cancel: self.cancel,
            emitter: self.emitter,
            origin: self.origin,
            depth: self.depth,
            spent: &spent,
            decided,
            steps: self.steps,
            external: self.external.get().map(|tools| &**tools),
        };
        if outcome.iterations >= config.max_iterations {
            let results = not_run(&exec, calls, "the iteration cap was reached").await;
            return ControlFlow::Break(
                self.capped(history, outcome, results, ITERATION_CAP_MESSAGE.to_owned())
                    .await,
            );
        }
        let used_before = outcome.tool_calls as usize - calls.len();
        let allowed = config.max_tool_calls.map_or(calls.len(), |max| {
            (max as usize).saturating_sub(used_before).min(calls.len())
        });
        let (run_now, over_cap) = calls.split_at(allowed);

        let Executed {
            mut results,
            stop,
            question,
            approval,
            external,
        } = exec.execute(run_now).await;
        if let Some(Stop::Engine(message)) = stop {
            return ControlFlow::Break(self.stop_for_engine(outcome, message));
        }
        // The calls an approval holds back: the asked one and those after it.
        let waiting: &[ToolCall] = approval.as_ref().map_or(&[], |parking| &run_now[parking.index..]);
        spent.add_to(&mut outcome);
        results.extend(not_run(&exec, over_cap, TOOL_CALL_CAP).await);

        if let Some(stop) = stop {
            return ControlFlow::Break(self.stopped(history, outcome, results, stop).await);
        }
        if !over_cap.is_empty() {
            // The cap ends the turn, so a question asked in the same message is not asked,
            // nor an approval.
            if let Some((call, _)) = &question {
                results.extend(not_run(&exec, std::slice::from_ref(call), TOOL_CALL_CAP).await);
            }
            results.extend(not_run(&exec, waiting, TOOL_CALL_CAP).await);
            results.extend(not_run(&exec, &host_calls(&external), TOOL_CALL_CAP).await);
            let message = tool_call_cap_message(config.max_tool_calls.unwrap_or_default());
            return ControlFlow::Break(self.capped(history, outcome, results, message).await);
        }
        if let Some(message) = watch_repeats(repeats, run_now, &mut results) {
            // The guard ends the turn, so a question asked in the same message is not asked.
            if let Some((call, _)) = &question {
                results.extend(not_run(&exec, std::slice::from_ref(call), REPEATED_CALLS).await);
            }
            results.extend(not_run(&exec, waiting, REPEATED_CALLS).await);
            results.extend(not_run(&exec, &host_calls(&external), REPEATED_CALLS).await);
            return ControlFlow::Break(self.capped(history, outcome, results, message).await);
        }
        if let Err(e) = history.push(self.agent.store.as_ref(), self.session, results).await {
            return ControlFlow::Break(store_failed(outcome, e));
        }
        if let Some(parking) = approval {
            return ControlFlow::Break(
                self.park_for_approval(history, outcome, waiting.to_vec(), parking)
                    .await,
            );
        }
        if !external.is_empty() {
            return ControlFlow::Break(self.park_for_tools(outcome, external).await);
        }
        match question {
            Some((call, args)) => self.ask(history, outcome, &call, &args).await,
            None => ControlFlow::Continue(outcome),
        }
    }

    /// Parks the turn until the host returns the results of its external tools' calls.
    async fn park_for_tools(&self, outcome: Outcome, calls: Vec<(ToolCall, serde_json::Value)>) -> Outcome {
        match external_tools::park(self, calls).await {
            Ok(pending) => {
                let mut parked = with_status(outcome, OutcomeStatus::AwaitingTools);
                parked.external_calls = Some(Box::new(pending));
                parked
            }
            Err(e) => store_failed(outcome, e),
        }
    }

    /// Parks the turn until the person answers the gate's questions about the calls of
    /// `parking`.
    async fn park_for_approval(
        &self,
        history: &History,
        outcome: Outcome,
        waiting: Vec<ToolCall>,
        parking: Parking,
    ) -> Outcome {
        let message = history
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .map(Message::text)
            .filter(|t| !t.is_empty());
        match approval::park(self, waiting, parking, message).await {
            Ok(pending) => {
                let mut parked = with_status(outcome, OutcomeStatus::AwaitingApproval);
                parked.approval = Some(pending);
                parked
            }
            Err(e) => store_failed(outcome, e),
        }
    }

    /// Ends the turn the way its tool calls stopped (cancelled, denied, store or fatal tool
    /// failure), after recording the results it has.
    async fn stopped(&self, history: &mut History, outcome: Outcome, results: Vec<Message>, stop: Stop) -> Outcome {
        let pushed = history.push(self.agent.store.as_ref(), self.session, results).await;
        let ended = match stop {
            Stop::Cancelled => with_status(outcome, OutcomeStatus::Cancelled),
            Stop::Denied(reason) => {
                let mut o = with_status(outcome, OutcomeStatus::Denied);
                o.error = Some(reason);
                o.error_kind = Some(ErrorKind::Denied);
                o
            }
            Stop::Store(e) => store_failed(outcome, e),
            Stop::Hook(message) => {
                let mut o = with_status(outcome, OutcomeStatus::Error);
                o.error = Some(message);
                o.error_kind = Some(ErrorKind::Hook);
                o
            }
            // Returned by `run_tools` before anything is written.
            Stop::Engine(message) => return self.stop_for_engine(outcome, message),
            Stop::Fatal { message, source } => {
                let mut o = with_status(outcome, OutcomeStatus::Error);
                o.error = Some(message);
                o.error_kind = Some(ErrorKind::ToolFatal);
                o.error_source = source;
                o
            }
        };
        match pushed {
            Ok(()) => ended,
            Err(e) => store_failed(ended, e),
        }
    }

    /// Parks the turn on the model's question; a malformed question was answered with an
    /// error result, and the loop goes on.
    async fn ask(
        &self,
        history: &mut History,
        outcome: Outcome,
        call: &ToolCall,
        args: &serde_json::Value,
    ) -> ControlFlow<Outcome, Outcome> {
        match clarification::park(self, history, call, args).await {
            Ok(Some(question)) => {
                let mut parked = with_status(outcome, OutcomeStatus::AwaitingUser);
                parked.clarification = Some(question);
                ControlFlow::Break(parked)
            }
            Ok(None) => ControlFlow::Continue(outcome),
            Err(e) => ControlFlow::Break(store_failed(outcome, e)),
        }
    }

    /// Appends the results of the last calls and the cap's message; ends `capped`.
    pub(super) async fn capped(
        &self,
        history: &mut History,
        mut outcome: Outcome,
        mut results: Vec<Message>,
        message: String,
    ) -> Outcome {
        results.push(Message::assistant(message.as_str()));
        if let Err(e) = history.push(self.agent.store.as_ref(), self.session, results).await {
            return store_failed(outcome, e);
        }
        self.emitter.update(|s| s.last_message = Some(message.clone()));
        outcome.final_text = Some(message);
        with_status(outcome, OutcomeStatus::Capped)
    }
}
