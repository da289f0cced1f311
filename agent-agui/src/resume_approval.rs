//! The resume entries that answer a pending approval: the decisions they carry, or its
//! dismissal.

use agent_core::{ApprovalDecision, ApprovalError, PendingApproval, RememberScope, Session};
use axum::http::StatusCode;
use serde_json::Value;

use crate::input::{ResumeEntry, ResumeStatus, RunAgentInput};
use crate::mapping::EventMapper;
use crate::started::{Refusal, Running, Started, dismissed};

/// Answers the session's pending approval with `entries`: a cancelled entry dismisses it (no
/// turn runs); otherwise every call gets the decision its entry's payload carries.
pub(crate) async fn resume_approval(
    session: &Session,
    input: &RunAgentInput,
    mapper: EventMapper,
    approval: PendingApproval,
    entries: &[ResumeEntry],
) -> Result<Started, Refusal> {
    if entries.iter().any(|e| e.status == ResumeStatus::Cancelled) {
        session.dismiss_approval(&approval.id).await.map_err(refusal)?;
        return Ok(Started::Events(dismissed(
            input,
            "approval_resolved",
            "approval_id",
            &approval.id,
        )));
    }
    let decisions = entries
        .iter()
        .map(|e| Ok((e.interrupt_id.clone(), decision(e.payload.as_ref())?)))
        .collect::<Result<Vec<_>, Refusal>>()?;
    let run = session.resolve_approval(&approval.id, decisions).map_err(refusal)?;
    Ok(Started::Run(Box::new(Running { run, mapper })))
}

fn decision(payload: Option<&Value>) -> Result<ApprovalDecision, Refusal> {
    let bad = || {
        Refusal::new(
            StatusCode::BAD_REQUEST,
            "an approval's resume payload is {\"approved\": true|false, \"arguments\"?: {...}, \"reason\"?: \"...\", \"remember\"?: \"session\"|\"always\"|{\"host\": \"*.example.com\"}}",
        )
    };
    let Some(Value::Object(map)) = payload else {
        return Err(bad());
    };
    let remember = match map.get("remember") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s == "session" => Some(RememberScope::Session),
        Some(Value::String(s)) if s == "always" => Some(RememberScope::Always),
        Some(Value::Object(o)) if o.len() == 1 => match o.get("host") {
            Some(Value::String(pattern)) => Some(RememberScope::host(pattern.as_str())),
            _ => return Err(bad()),
        },
        Some(_) => return Err(bad()),
    };
    let decision = match map.get("approved") {
        Some(Value::Bool(true)) => ApprovalDecision::Approve {
            arguments: map.get("arguments").filter(|a| !a.is_null()).cloned(),
            remember,
        },
        Some(Value::Bool(false)) => ApprovalDecision::Reject {
            reason: map.get("reason").and_then(Value::as_str).map(str::to_owned),
            remember,
        },
        _ => return Err(bad()),
    };
    Ok(decision)
}

fn refusal(e: ApprovalError) -> Refusal {
    let status = match e {
        ApprovalError::MissingDecision(_)
        | ApprovalError::UnknownCall(_)
        | ApprovalError::InvalidArguments { .. }
        | ApprovalError::InvalidRemember { .. } => StatusCode::BAD_REQUEST,
        ApprovalError::NotPending(_) | ApprovalError::Expired => StatusCode::CONFLICT,
        ApprovalError::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
    };
    Refusal::new(status, e.to_string())
}
