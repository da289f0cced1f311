//! The `tool` messages that answer the calls of the client's own tools the thread's turn is
//! parked on: submitted as the calls' results, and the turn continues.

use agent_core::{ExternalToolError, ExternalToolResult, PendingToolCalls, Session};
use axum::http::StatusCode;

use crate::mapping::EventMapper;
use crate::started::{Refusal, Running, Started};

/// Continues the turn parked on `pending` with the results the client's trailing `tool`
/// messages carry (one per pending call; messages answering other calls are already known and
/// left out).
pub(crate) fn resume_tools(
    session: &Session,
    mapper: EventMapper,
    pending: Option<PendingToolCalls>,
    results: &[ExternalToolResult],
) -> Result<Started, Refusal> {
    let Some(pending) = pending.filter(|p| p.calls.iter().any(|c| results.iter().any(|r| r.call_id == c.call_id)))
    else {
        return Err(Refusal::new(
            StatusCode::CONFLICT,
            "the tool messages answer no pending tool call of this thread (they were answered or dismissed already); end the messages with a user message to start a turn",
        ));
    };
    let mut answers = Vec::with_capacity(pending.calls.len());
    for call in &pending.calls {
        // The last message for a call wins.
        match results.iter().rev().find(|r| r.call_id == call.call_id) {
            Some(result) => answers.push(result.clone()),
            None => {
                return Err(Refusal::new(
                    StatusCode::BAD_REQUEST,
                    format!(
                        "no tool message answers the pending call {} ({}); send one tool message per pending call",
                        call.call_id, call.name
                    ),
                ));
            }
        }
    }
    let run = session.submit_tool_results(&pending.id, answers).map_err(refusal)?;
    let ids = pending.calls.into_iter().map(|c| c.call_id).collect();
    Ok(Started::Run(Box::new(Running {
        run,
        mapper: mapper.host_calls(ids),
    })))
}

/// How refused external tools or results are answered.
pub(crate) fn refusal(e: ExternalToolError) -> Refusal {
    let status = match e {
        ExternalToolError::NotPending(_) => StatusCode::CONFLICT,
        ExternalToolError::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
        ExternalToolError::NameClash(_)
        | ExternalToolError::InvalidSchema { .. }
        | ExternalToolError::MissingResult(_)
        | ExternalToolError::UnknownCall(_)
        | ExternalToolError::DuplicateResult(_) => StatusCode::BAD_REQUEST,
    };
    Refusal::new(status, e.to_string())
}
