//! What a request starts: a new turn with the last user message, the parked turn continued
//! with the answer a `resume` entry carries or with the results of the client's tools that the
//! last `tool` messages carry, or (for a cancelled entry) the question dismissed.

use agent_core::{Agent, ClarificationError, Message, Session};
use axum::http::StatusCode;
use serde_json::Value;

use crate::input::{ResumeEntry, ResumeStatus, RunAgentInput};
use crate::mapping::EventMapper;
use crate::resume_approval::resume_approval;
use crate::resume_tools::{refusal as tools_refusal, resume_tools};
use crate::started::{Refusal, Running, Started, dismissed};
use crate::thread::open_thread;

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
    let pending_tools = session.pending_tool_calls();
    match input.resume.as_deref() {
        Some([]) | None => {
            let results = input.trailing_tool_results();
            if !results.is_empty() {
                return resume_tools(&session, mapper, pending_tools, &results);
            }
            let text = input.turn_text()?;
            let tools = input.external_tools();
            let run = if tools.is_empty() {
                session.send(text)
            } else {
                session
                    .send_with_tools(Message::user(text), tools)
                    .map_err(tools_refusal)?
            };
            // The new message dismisses calls of the client's tools still pending: the model
            // is told they did not run; the client has nothing more to do with them.
            let mapper = match pending_tools {
                Some(pending) => mapper.host_calls(pending.calls.into_iter().map(|c| c.call_id).collect()),
                None => mapper,
            };
            Ok(Started::Run(Box::new(Running { run, mapper })))
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
