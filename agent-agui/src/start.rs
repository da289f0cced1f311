//! What a request starts: a new turn with the last user message, the parked turn continued
//! with the answer a `resume` entry carries, or (for a cancelled entry) the question dismissed.

use agent_core::{Agent, ClarificationError, Run, Session};
use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::approval::resume_approval;
use crate::events::{AguiEvent, RunOutcome};
use crate::input::{BadInput, ResumeEntry, ResumeStatus, RunAgentInput};
use crate::mapping::{EventMapper, PROTOCOL_VERSION};
use crate::thread::open_thread;

/// A request the endpoint refuses before streaming: the status and a message for people.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub status: StatusCode,
    pub message: String,
}

impl Refusal {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Refusal {
            status,
            message: message.into(),
        }
    }
}

impl From<BadInput> for Refusal {
    fn from(e: BadInput) -> Self {
        Refusal::new(StatusCode::BAD_REQUEST, e.0)
    }
}

/// A running turn and the mapper for its events.
pub(crate) struct Running {
    pub run: Run,
    pub mapper: EventMapper,
}

/// What to stream back.
pub(crate) enum Started {
    /// A turn is running: map its events.
    Run(Box<Running>),
    /// No turn runs: these events are the whole answer.
    Events(Vec<AguiEvent>),
}

pub(crate) async fn start(agent: &Agent, input: &RunAgentInput) -> Result<Started, Refusal> {
    let session = open_thread(agent, &input.thread_id).await.map_err(|e| {
        Refusal::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot open the thread's session: {e}"),
        )
    })?;
    let mapper = EventMapper::new(&input.thread_id, &input.run_id);
    if let Some(entries) = input.resume.as_deref().filter(|e| !e.is_empty())
        && let Some(approval) = session.pending_approval()
    {
        return resume_approval(&session, input, mapper, approval, entries).await;
    }
    match input.resume.as_deref() {
        Some([]) | None => {
            let text = input.new_user_text()?;
            Ok(Started::Run(Box::new(Running {
                run: session.send(text),
                mapper,
            })))
        }
        Some([entry]) => resume(&session, input, mapper, entry).await,
        Some(_) => Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "resume has several entries; this agent waits on one interrupt at a time",
        )),
    }
}

async fn resume(
    session: &Session,
    input: &RunAgentInput,
    mapper: EventMapper,
    entry: &ResumeEntry,
) -> Result<Started, Refusal> {
    let Some(question) = session.pending_clarification().filter(|q| q.id == entry.interrupt_id) else {
        return Err(Refusal::new(
            StatusCode::CONFLICT,
            format!(
                "no pending interrupt {:?} on this thread (it was answered, dismissed or expired)",
                entry.interrupt_id
            ),
        ));
    };
    match entry.status {
        ResumeStatus::Resolved => {
            let answer = answer_text(entry.payload.as_ref())?;
            let run = session.answer_clarification(&question.id, &answer).map_err(refusal)?;
            Ok(Started::Run(Box::new(Running {
                run,
                mapper: mapper.resuming(question),
            })))
        }
        ResumeStatus::Cancelled => {
            session.dismiss_clarification(&question.id).await.map_err(refusal)?;
            Ok(Started::Events(dismissed(
                input,
                "clarification_dismissed",
                "clarification_id",
                &question.id,
            )))
        }
    }
}

/// The answer in a resume payload: `{"answer": ...}`, a bare string, or a boolean (yes/no).
fn answer_text(payload: Option<&Value>) -> Result<String, Refusal> {
    let value = match payload {
        Some(Value::Object(map)) => map.get("answer"),
        other => other,
    };
    match value {
        Some(Value::String(text)) => Ok(text.clone()),
        Some(Value::Bool(yes)) => Ok(if *yes { "yes" } else { "no" }.into()),
        _ => Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "a resolved resume entry needs a payload {\"answer\": \"...\"} (a string, or a boolean for yes/no)",
        )),
    }
}

fn refusal(e: ClarificationError) -> Refusal {
    let status = match e {
        ClarificationError::InvalidAnswer(_) => StatusCode::BAD_REQUEST,
        ClarificationError::NotPending(_) | ClarificationError::Expired => StatusCode::CONFLICT,
        ClarificationError::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
    };
    Refusal::new(status, e.to_string())
}

/// The events of a resume that dismissed what the turn was parked on (a question, an
/// approval; `event` names the agent-core event, `id_key` the id's key in it): no turn runs.
pub(crate) fn dismissed(input: &RunAgentInput, event: &str, id_key: &str, id: &str) -> Vec<AguiEvent> {
    vec![
        AguiEvent::RunStarted {
            thread_id: input.thread_id.clone(),
            run_id: input.run_id.clone(),
            protocol_version: Some(PROTOCOL_VERSION.into()),
        },
        AguiEvent::Custom {
            name: event.into(),
            value: json!({
                "type": event,
                id_key: id,
                "reason": "the client cancelled the interrupt",
            }),
        },
        AguiEvent::RunFinished {
            thread_id: input.thread_id.clone(),
            run_id: input.run_id.clone(),
            result: Some(json!({"status": "dismissed"})),
            outcome: Some(RunOutcome::Success {}),
            usage: None,
        },
    ]
}
