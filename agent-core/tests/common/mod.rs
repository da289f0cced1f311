//! Helpers shared by the agent-core integration tests.
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_core::{AgentEvent, ContentPart, EventKind, ImageSource, Message, Role, Run};
use futures::StreamExt;

/// Asserts the transcript invariant: every assistant tool call has exactly one tool result,
/// after it and before the next assistant message, and no tool result answers an unknown call.
pub fn assert_transcript_valid(messages: &[Message]) {
    let mut open: HashMap<String, usize> = HashMap::new();
    for (i, m) in messages.iter().enumerate() {
        match m.role {
            Role::Assistant => {
                assert!(
                    open.is_empty(),
                    "assistant message {i} follows unanswered tool calls {open:?}"
                );
                for c in &m.tool_calls {
                    open.insert(c.id.clone(), 0);
                }
            }
            Role::Tool => {
                let id = m.tool_call_id.clone().expect("tool message without tool_call_id");
                let count = open.remove(&id);
                assert!(
                    count.is_some(),
                    "tool result {i} answers unknown or already answered call {id}"
                );
            }
            Role::User | Role::System => {
                assert!(
                    open.is_empty(),
                    "user message {i} follows unanswered tool calls {open:?}"
                );
            }
        }
    }
    assert!(open.is_empty(), "unanswered tool calls at the end: {open:?}");
}

/// Collects every event of a run (the run's stream ends after its final event).
pub async fn collect_events(run: &Run) -> Vec<AgentEvent> {
    run.events().collect().await
}

/// Event names in order, without token events.
pub fn names(events: &[AgentEvent]) -> Vec<&'static str> {
    events
        .iter()
        .map(|e| e.kind.name())
        .filter(|n| *n != "content_token" && *n != "reasoning_token")
        .collect()
}

/// Every stored message of the session, in order.
pub async fn messages_of(session: &agent_core::Session) -> Vec<Message> {
    session
        .messages()
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.message)
        .collect()
}

/// A thread-safe log of strings, for side effects of tools.
#[derive(Clone, Default)]
pub struct Log(pub Arc<Mutex<Vec<String>>>);

impl Log {
    pub fn push(&self, s: impl Into<String>) {
        self.0.lock().unwrap().push(s.into());
    }
    pub fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// The text of each tool result, in order.
pub fn tool_results(messages: &[Message]) -> Vec<(String, bool)> {
    messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| (m.text(), m.is_error))
        .collect()
}

pub fn is_final(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::RunCompleted { .. }
            | EventKind::RunFailed { .. }
            | EventKind::RunCancelled { .. }
            | EventKind::RunCapped { .. }
    )
}

/// A PNG image part whose base64 data is `tag`, to tell images apart.
pub fn image(tag: &str) -> ContentPart {
    ContentPart::Image {
        media_type: "image/png".into(),
        source: ImageSource::Base64 { data: tag.into() },
    }
}
