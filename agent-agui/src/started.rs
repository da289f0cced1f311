//! What a request starts, as the endpoint streams it: a running turn with its mapper, or the
//! whole answer when no turn runs; and a refusal before anything streams.

use agent_core::Run;
use axum::http::StatusCode;
use serde_json::json;

use crate::events::{AguiEvent, RunOutcome};
use crate::input::{BadInput, RunAgentInput};
use crate::mapping::{EventMapper, PROTOCOL_VERSION};

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
