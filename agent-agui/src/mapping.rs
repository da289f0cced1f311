//! The pure mapping from agent-core events to AG-UI events. No I/O, no clock, no randomness:
//! the ids it mints derive from the run id, so a scripted run always maps to the same events.
//!
//! | agent-core | AG-UI |
//! |---|---|
//! | `run_started` | `RUN_STARTED` (with the client's `threadId` and `runId`) |
//! | `model_call_started` / `model_call_completed` | `STEP_STARTED` / `STEP_FINISHED` (`model_call_<n>`) |
//! | `content_token` | `TEXT_MESSAGE_START` (first token) / `TEXT_MESSAGE_CONTENT` / `TEXT_MESSAGE_END` |
//! | `reasoning_token` | `REASONING_START` + `REASONING_MESSAGE_START` / `..._CONTENT` / `..._END` + `REASONING_END` |
//! | `tool_call_arguments_delta` (with `stream_tool_arguments`) | `TOOL_CALL_START` (first piece) / `TOOL_CALL_ARGS` (each piece) / `TOOL_CALL_END` (when the model call ends) |
//! | `tool_call_started` | `TOOL_CALL_START` + `TOOL_CALL_ARGS` (the arguments' JSON) + `TOOL_CALL_END`, unless already streamed |
//! | `tool_call_succeeded` | `TOOL_CALL_RESULT` (none for a call of the client's tool: the client sent the result) |
//! | `tool_call_failed`, `tool_call_denied` | `TOOL_CALL_RESULT` (the error) and `CUSTOM` (the details) |
//! | `clarification_pending` | the `ask_clarification` call's `TOOL_CALL_*`; the run ends `RUN_FINISHED` with an interrupt outcome |
//! | `clarification_responded` | `TOOL_CALL_RESULT` of the `ask_clarification` call (when resuming) and `CUSTOM` |
//! | `run_completed` | `RUN_FINISHED`: outcome `success` (also for `awaiting_tools`: the client runs its tools' calls), or `interrupt` for `awaiting_user` (the question) and `awaiting_approval` (one interrupt per waiting call, reason `tool_approval`) |
//! | `run_capped` | `RUN_FINISHED` (outcome `success`, `result.status` `capped`) |
//! | `run_cancelled` | `RUN_FINISHED` with outcome `cancelled` |
//! | `run_failed` | `RUN_ERROR` (`code`: the error kind) |
//! | anything else | `CUSTOM`, named after the agent-core event, its JSON as the value |

use std::collections::HashSet;

use agent_core::{Clarification, ClarificationKind, EventKind, Outcome, OutcomeStatus, Usage};
use serde_json::{Value, json};

use crate::approval::approval_interrupts;
use crate::events::{AguiEvent, Interrupt, RunOutcome, TokenUsage};
use crate::iso_time::iso_utc;

/// The protocol version the produced events follow.
pub const PROTOCOL_VERSION: &str = "1.0";

/// The `reason` of the interrupt a clarification question becomes.
pub const CLARIFICATION_REASON: &str = "clarification";

/// Maps the events of one agent-core run to AG-UI events. Feed every event of the run, in
/// order, to [`EventMapper::map`]; when the event stream ends, [`EventMapper::finish`] closes
/// a run that never sent its final event.
#[derive(Debug)]
pub struct EventMapper {
    thread_id: String,
    run_id: String,
    next_id: u64,
    step: Option<String>,
    text: Option<String>,
    reasoning: Option<String>,
    /// The assistant message the tool calls of the last model call belong to.
    parent: Option<String>,
    started_calls: HashSet<String>,
    /// Calls whose arguments are being streamed: started, not ended yet.
    streaming_calls: Vec<String>,
    pending: Option<Clarification>,
    resuming: Option<Clarification>,
    /// Calls of the client's tools whose results the client has (it sent them) or will not
    /// get (dismissed): no `TOOL_CALL_RESULT` for them.
    host_calls: Vec<String>,
    finished: bool,
}

impl EventMapper {
    /// A mapper for the run `run_id` of thread `thread_id` (both as the client named them).
    pub fn new(thread_id: impl Into<String>, run_id: impl Into<String>) -> Self {
        EventMapper {
            thread_id: thread_id.into(),
            run_id: run_id.into(),
            next_id: 0,
            step: None,
            text: None,
            reasoning: None,
            parent: None,
            started_calls: HashSet::new(),
            streaming_calls: Vec::new(),
            pending: None,
            resuming: None,
            host_calls: Vec::new(),
            finished: false,
        }
    }

    /// For a run that continues a parked turn with the answer to `question`: the answer
    /// becomes the result of the question's `ask_clarification` tool call.
    pub fn resuming(mut self, question: Clarification) -> Self {
        self.resuming = Some(question);
        self
    }

    /// For a run that continues (or dismisses) a turn parked on calls of the client's tools
    /// `call_ids`: the client holds their results as its own `tool` messages, so none is sent
    /// as `TOOL_CALL_RESULT` (a dismissed call's failure goes out as `CUSTOM` only).
    pub fn host_calls(mut self, call_ids: Vec<String>) -> Self {
        self.host_calls = call_ids;
        self
    }

    /// Whether the run's final AG-UI event (`RUN_FINISHED` or `RUN_ERROR`) was produced.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The AG-UI events for one agent-core event (none, one or several).
    pub fn map(&mut self, event: &EventKind) -> Vec<AguiEvent> {
        let mut out = Vec::new();
        if self.finished {
            return out;
        }
        match event {
            EventKind::RunStarted { .. } => out.push(AguiEvent::RunStarted {
                thread_id: self.thread_id.clone(),
                run_id: self.run_id.clone(),
                protocol_version: Some(PROTOCOL_VERSION.into()),
            }),
            EventKind::ModelCallStarted { iteration } => {
                self.close_step(&mut out);
                let step_name = format!("model_call_{iteration}");
                out.push(AguiEvent::StepStarted {
                    step_name: step_name.clone(),
                });
                self.step = Some(step_name);
                self.parent = None;
            }
            EventKind::ModelCallCompleted { .. } => self.close_step(&mut out),
            EventKind::ContentToken { text } => self.content(&mut out, text),
            EventKind::ReasoningToken { text } => self.reasoning(&mut out, text),
            EventKind::ToolCallArgumentsDelta { call_id, name, delta } => {
                self.call_delta(&mut out, call_id, name, delta)
            }
            EventKind::ToolCallStarted {
                call_id,
                name,
                arguments,
            } => self.start_call(&mut out, call_id, name, Some(arguments)),
            EventKind::ToolCallSucceeded { call_id, .. } | EventKind::ToolCallFailed { call_id, .. }
                if self.host_calls.contains(call_id) =>
            {
                if matches!(event, EventKind::ToolCallFailed { .. }) {
                    out.push(custom(event));
                }
            }
            EventKind::ToolCallSucceeded { call_id, output, .. } => {
                self.close_messages(&mut out);
                out.push(self.result(call_id, output.clone()));
            }
            EventKind::ToolCallFailed {
                call_id, name, error, ..
            } => {
                self.start_call(&mut out, call_id, name, None);
                out.push(self.result(call_id, format!("Error: {error}")));
                out.push(custom(event));
            }
            EventKind::ToolCallDenied {
                call_id, name, reason, ..
            } => {
                self.start_call(&mut out, call_id, name, None);
                out.push(self.result(call_id, format!("Denied: {reason}")));
                out.push(custom(event));
            }
            EventKind::ClarificationPending { question, .. } => {
                if let Ok(question) = serde_json::from_value::<Clarification>(question.clone()) {
                    let arguments = ask_arguments(&question);
                    self.start_call(
                        &mut out,
                        &question.call_id,
                        agent_core::CLARIFICATION_TOOL,
                        Some(&arguments),
                    );
                    self.pending = Some(question);
                } else {
                    out.push(custom(event));
                }
            }
            EventKind::ClarificationResponded {
                clarification_id,
                answer,
            } => {
                let call_id = self
                    .resuming
                    .as_ref()
                    .filter(|q| &q.id == clarification_id)
                    .map(|q| q.call_id.clone());
                if let Some(call_id) = call_id {
                    out.push(self.result(&call_id, answer.clone()));
                }
                out.push(custom(event));
            }
            EventKind::RunCompleted { outcome } | EventKind::RunCapped { outcome } => {
                self.close_step(&mut out);
                out.push(self.finished_event(outcome));
                self.finished = true;
            }
            EventKind::RunCancelled { outcome } => {
                self.close_step(&mut out);
                out.push(AguiEvent::RunFinished {
                    thread_id: self.thread_id.clone(),
                    run_id: self.run_id.clone(),
                    result: Some(result_value(outcome)),
                    outcome: Some(RunOutcome::Cancelled {}),
                    usage: usage(&outcome.usage),
                });
                self.finished = true;
            }
            EventKind::RunFailed { outcome } => {
                self.close_step(&mut out);
                out.push(AguiEvent::RunError {
                    message: outcome.error.clone().unwrap_or_else(|| "the run failed".into()),
                    code: outcome.error_kind.map(|k| k.to_string()),
                });
                self.finished = true;
            }
            // approval_pending goes out as CUSTOM too; the run then ends with its interrupts
            // (see `finished_event`).
            //
            // model_routed, compaction_*, message_queued, clarification_expired,
            // clarification_dismissed and any event added later.
            other => out.push(custom(other)),
        }
        out
    }

    /// Closes a run whose event stream ended without a final event: `RUN_ERROR`, after closing
    /// what is open. Nothing when the run finished.
    pub fn finish(&mut self) -> Vec<AguiEvent> {
        let mut out = Vec::new();
        if self.finished {
            return out;
        }
        self.close_step(&mut out);
        out.push(AguiEvent::RunError {
            message: "the run's event stream ended before the run did".into(),
            code: Some("internal".into()),
        });
        self.finished = true;
        out
    }

    fn mint(&mut self, what: &str) -> String {
        self.next_id += 1;
        format!("{}-{what}-{}", self.run_id, self.next_id)
    }

    fn content(&mut self, out: &mut Vec<AguiEvent>, text: &str) {
        if text.is_empty() {
            return;
        }
        self.close_reasoning(out);
        let message_id = match &self.text {
            Some(id) => id.clone(),
            None => {
                let id = self.mint("msg");
                out.push(AguiEvent::TextMessageStart {
                    message_id: id.clone(),
                    role: "assistant".into(),
                });
                self.text = Some(id.clone());
                self.parent = Some(id.clone());
                id
            }
        };
        out.push(AguiEvent::TextMessageContent {
            message_id,
            delta: text.to_owned(),
        });
    }

    fn reasoning(&mut self, out: &mut Vec<AguiEvent>, text: &str) {
        if text.is_empty() {
            return;
        }
        self.close_text(out);
        let message_id = match &self.reasoning {
            Some(id) => id.clone(),
            None => {
                let id = self.mint("reasoning");
                out.push(AguiEvent::ReasoningStart { message_id: id.clone() });
                out.push(AguiEvent::ReasoningMessageStart {
                    message_id: id.clone(),
                    role: "reasoning".into(),
                });
                self.reasoning = Some(id.clone());
                id
            }
        };
        out.push(AguiEvent::ReasoningMessageContent {
            message_id,
            delta: text.to_owned(),
        });
    }

    /// Sends a call's start, arguments and end once; a call that never started (it failed
    /// or was denied before running) is started here without arguments.
    fn start_call(&mut self, out: &mut Vec<AguiEvent>, call_id: &str, name: &str, arguments: Option<&Value>) {
        self.close_messages(out);
        if !self.started_calls.insert(call_id.to_owned()) {
            return;
        }
        self.push_call_start(out, call_id, name);
        if let Some(arguments) = arguments {
            out.push(AguiEvent::ToolCallArgs {
                tool_call_id: call_id.to_owned(),
                delta: arguments.to_string(),
            });
        }
        out.push(AguiEvent::ToolCallEnd {
            tool_call_id: call_id.to_owned(),
        });
    }

    /// One piece of a call's arguments as the model streams them: the call starts with its
    /// first piece and ends when the model call does ([`Self::close_step`]); the call's
    /// `tool_call_started` then sends nothing more.
    fn call_delta(&mut self, out: &mut Vec<AguiEvent>, call_id: &str, name: &str, delta: &str) {
        if !self.streaming_calls.iter().any(|c| c == call_id) {
            self.close_messages(out);
            if !self.started_calls.insert(call_id.to_owned()) {
                return;
            }
            self.push_call_start(out, call_id, name);
            self.streaming_calls.push(call_id.to_owned());
        }
        if !delta.is_empty() {
            out.push(AguiEvent::ToolCallArgs {
                tool_call_id: call_id.to_owned(),
                delta: delta.to_owned(),
            });
        }
    }

    /// `TOOL_CALL_START` under the assistant message of the current model call.
    fn push_call_start(&mut self, out: &mut Vec<AguiEvent>, call_id: &str, name: &str) {
        let parent = match &self.parent {
            Some(id) => id.clone(),
            None => {
                let id = self.mint("msg");
                self.parent = Some(id.clone());
                id
            }
        };
        out.push(AguiEvent::ToolCallStart {
            tool_call_id: call_id.to_owned(),
            tool_call_name: name.to_owned(),
            parent_message_id: Some(parent),
        });
    }

    fn result(&mut self, call_id: &str, content: String) -> AguiEvent {
        AguiEvent::ToolCallResult {
            message_id: self.mint("result"),
            tool_call_id: call_id.to_owned(),
            content,
            role: Some("tool".into()),
        }
    }

    fn close_text(&mut self, out: &mut Vec<AguiEvent>) {
        if let Some(message_id) = self.text.take() {
            out.push(AguiEvent::TextMessageEnd { message_id });
        }
    }

    fn close_reasoning(&mut self, out: &mut Vec<AguiEvent>) {
        if let Some(message_id) = self.reasoning.take() {
            out.push(AguiEvent::ReasoningMessageEnd {
                message_id: message_id.clone(),
            });
            out.push(AguiEvent::ReasoningEnd { message_id });
        }
    }

    fn close_messages(&mut self, out: &mut Vec<AguiEvent>) {
        self.close_reasoning(out);
        self.close_text(out);
    }

    fn close_step(&mut self, out: &mut Vec<AguiEvent>) {
        self.close_messages(out);
        for tool_call_id in self.streaming_calls.drain(..) {
            out.push(AguiEvent::ToolCallEnd { tool_call_id });
        }
        if let Some(step_name) = self.step.take() {
            out.push(AguiEvent::StepFinished { step_name });
        }
    }

    fn finished_event(&mut self, outcome: &Outcome) -> AguiEvent {
        let question = match outcome.status {
            OutcomeStatus::AwaitingUser => outcome.clarification.clone().or_else(|| self.pending.take()),
            _ => None,
        };
        let run_outcome = match (question, &outcome.approval) {
            (Some(question), _) => RunOutcome::Interrupt {
                interrupts: vec![interrupt(&question)],
            },
            (None, Some(approval)) if outcome.status == OutcomeStatus::AwaitingApproval => RunOutcome::Interrupt {
                interrupts: approval_interrupts(approval),
            },
            (None, _) => RunOutcome::Success {},
        };
        AguiEvent::RunFinished {
            thread_id: self.thread_id.clone(),
            run_id: self.run_id.clone(),
            result: Some(result_value(outcome)),
            outcome: Some(run_outcome),
            usage: usage(&outcome.usage),
        }
    }
}

/// The interrupt a clarification question becomes. A resume entry answers it with a payload
/// `{"answer": "..."}` (a bare string or, for yes/no questions, a boolean also works).
pub fn interrupt(question: &Clarification) -> Interrupt {
    let answer = match question.kind {
        ClarificationKind::Confirm => json!({"type": "string", "enum": ["yes", "no"]}),
        ClarificationKind::Choice => json!({"type": "string", "enum": question.options}),
        ClarificationKind::Input => json!({"type": "string", "minLength": 1}),
    };
    let mut metadata = json!({"kind": question.kind, "options": question.options});
    if let (Some(title), Some(map)) = (&question.title, metadata.as_object_mut()) {
        map.insert("title".into(), Value::String(title.clone()));
    }
    Interrupt {
        id: question.id.clone(),
        reason: CLARIFICATION_REASON.into(),
        message: Some(question.question.clone()),
        tool_call_id: Some(question.call_id.clone()),
        response_schema: Some(json!({
            "type": "object",
            "properties": {"answer": answer},
            "required": ["answer"],
        })),
        expires_at: Some(iso_utc(question.expires_at_ms)),
        metadata: Some(metadata),
    }
}

/// The `ask_clarification` arguments a question was built from.
fn ask_arguments(question: &Clarification) -> Value {
    let mut args = json!({"kind": question.kind, "question": question.question});
    if let Some(map) = args.as_object_mut() {
        if let Some(title) = &question.title {
            map.insert("title".into(), Value::String(title.clone()));
        }
        if !question.options.is_empty() {
            map.insert("options".into(), json!(question.options));
        }
    }
    args
}

fn custom(event: &EventKind) -> AguiEvent {
    AguiEvent::Custom {
        name: event.name().to_owned(),
        value: serde_json::to_value(event).unwrap_or(Value::Null),
    }
}

/// `RUN_FINISHED.result`: how the turn ended and its last text.
fn result_value(outcome: &Outcome) -> Value {
    let mut result = json!({"status": outcome.status.as_str()});
    if let Some(map) = result.as_object_mut() {
        if let Some(text) = &outcome.final_text {
            map.insert("finalText".into(), Value::String(text.clone()));
        }
        if let Some(error) = &outcome.error {
            map.insert("error".into(), Value::String(error.clone()));
        }
    }
    result
}

fn usage(usage: &Usage) -> Option<Vec<TokenUsage>> {
    if *usage == Usage::default() {
        return None;
    }
    Some(vec![TokenUsage {
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        total_tokens: usage.input_tokens.saturating_add(usage.output_tokens),
        reasoning_tokens: usage.reasoning_tokens,
        cached_input_tokens: usage.cached_input_tokens,
        cache_write_input_tokens: usage.cache_write_tokens,
    }])
}
