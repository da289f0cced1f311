//! The servers the Restate tests run against, and a countdown model.
//!
//! The URLs come from AGENT_DURABLE_TEST_RESTATE_ADMIN, AGENT_DURABLE_TEST_RESTATE_INGRESS and
//! AGENT_CORE_TEST_POSTGRES_URL (`with_durable_servers` in scripts/lib/ensure-restate.sh starts both servers inside a
//! loopback-only network namespace and sets them).

#![allow(dead_code)]

pub mod replica;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::{
    CancellationToken, EventStream, FinishReason, ModelRequest, Provider, ProviderError, Role, StreamEvent, Usage,
    async_trait,
};
use futures::StreamExt;

/// An environment variable the run needs; `--include-ignored` without it fails saying so.
pub fn env(name: &str) -> String {
    std::env::var(name)
        .unwrap_or_else(|_| panic!("{name} is not set: run it through with_durable_servers in scripts/lib/ensure-restate.sh (scripts/test does)"))
}

pub fn admin() -> String {
    env("AGENT_DURABLE_TEST_RESTATE_ADMIN")
}

pub fn ingress() -> String {
    env("AGENT_DURABLE_TEST_RESTATE_INGRESS")
}

pub fn postgres() -> String {
    env("AGENT_CORE_TEST_POSTGRES_URL")
}

/// What the countdown model saw, shared by every replica of a test.
#[derive(Debug, Default)]
pub struct ModelLog {
    /// Live model calls, by the user message's tag.
    pub calls: Mutex<HashMap<String, u32>>,
    /// Tags whose turn should make a replica die at their third model call (once).
    pub crash_at_third: Mutex<Vec<String>>,
    /// Told when a replica should die.
    pub crash: Mutex<Option<tokio::sync::mpsc::UnboundedSender<()>>>,
    /// Tags whose model calls hang until cancelled; told when one starts.
    pub hanging: Mutex<Option<tokio::sync::mpsc::UnboundedSender<String>>>,
}

/// A model that calls the `record` tool `tools=N` times (default 3) for a user message
/// `tag=T tools=N [hang]`, with call ids `T-1`, `T-2`..., then answers `done T`; for
/// `tag=T ask`, asks the person a question, then answers `done T: <their answer>`. Its answer
/// depends only on the request, so every replica gives the same one.
pub struct Countdown {
    pub log: Arc<ModelLog>,
}

fn word<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.split_whitespace().find_map(|w| w.strip_prefix(key))
}

#[async_trait]
impl Provider for Countdown {
    fn id(&self) -> &str {
        "countdown"
    }

    async fn stream(&self, request: &ModelRequest, cancel: CancellationToken) -> Result<EventStream, ProviderError> {
        let last_user = request.messages.iter().rposition(|m| m.role == Role::User).unwrap_or(0);
        let text = request.messages.get(last_user).map(|m| m.text()).unwrap_or_default();
        let tag = word(&text, "tag=").unwrap_or("none").to_owned();
        let wanted: usize = word(&text, "tools=").and_then(|n| n.parse().ok()).unwrap_or(3);
        let done = request.messages[last_user..]
            .iter()
            .filter(|m| m.role == Role::Tool)
            .count();
        let calls = {
            let mut calls = self.log.calls.lock().unwrap();
            let n = calls.entry(tag.clone()).or_default();
            *n += 1;
            *n
        };
        if text.split_whitespace().any(|w| w == "hang") {
            if let Some(tx) = self.log.hanging.lock().unwrap().as_ref() {
                let _ = tx.send(tag.clone());
            }
            cancel.cancelled().await;
            return Err(ProviderError::Cancelled);
        }
        if calls == 3 {
            let crash = {
                let mut list = self.log.crash_at_third.lock().unwrap();
                let hit = list.iter().position(|t| *t == tag);
                hit.map(|i| list.remove(i)).is_some()
            };
            if crash {
                if let Some(tx) = self.log.crash.lock().unwrap().as_ref() {
                    let _ = tx.send(());
                }
                // The replica dies meanwhile.
                tokio::time::sleep(Duration::from_secs(600)).await;
            }
        }
        let mut events = Vec::new();
        if text.split_whitespace().any(|w| w == "ask") {
            // Asks once; once answered, answers with what the person said.
            let answered = request.messages[last_user..]
                .iter()
                .rev()
                .find(|m| m.role == Role::Tool)
                .map(|m| m.text());
            match answered {
                None => {
                    let id = format!("{tag}-ask");
                    events.push(Ok(StreamEvent::ToolCallStart {
                        id: id.clone(),
                        name: agent_core::CLARIFICATION_TOOL.into(),
                        signature: None,
                    }));
                    events.push(Ok(StreamEvent::ToolArgsDelta {
                        id: id.clone(),
                        json: r#"{"kind":"input","question":"Which colour?"}"#.into(),
                    }));
                    events.push(Ok(StreamEvent::ToolCallEnd { id }));
                    events.push(Ok(StreamEvent::Done {
                        finish_reason: FinishReason::ToolCalls,
                    }));
                }
                Some(answer) => {
                    events.push(Ok(StreamEvent::TextDelta {
                        text: format!("done {tag}: {answer}"),
                    }));
                    events.push(Ok(StreamEvent::Done {
                        finish_reason: FinishReason::Stop,
                    }));
                }
            }
            return Ok(futures::stream::iter(events).boxed());
        }
        if let Some(target) = word(&text, "send=") {
            // Sends one message to session `target`, then answers.
            if done == 0 {
                let id = format!("{tag}-send");
                events.push(Ok(StreamEvent::ToolCallStart {
                    id: id.clone(),
                    name: agent_core::tabs::SEND_TO_TAB.into(),
                    signature: None,
                }));
                events.push(Ok(StreamEvent::ToolArgsDelta {
                    id: id.clone(),
                    json: format!("{{\"tab_id\":\"{target}\",\"message\":\"tag={tag}r tools=1\"}}"),
                }));
                events.push(Ok(StreamEvent::ToolCallEnd { id }));
                events.push(Ok(StreamEvent::Done {
                    finish_reason: FinishReason::ToolCalls,
                }));
            } else {
                events.push(Ok(StreamEvent::TextDelta {
                    text: format!("done {tag}"),
                }));
                events.push(Ok(StreamEvent::Done {
                    finish_reason: FinishReason::Stop,
                }));
            }
            return Ok(futures::stream::iter(events).boxed());
        }
        if done < wanted {
            let id = format!("{tag}-{}", done + 1);
            events.push(Ok(StreamEvent::ToolCallStart {
                id: id.clone(),
                name: "record".into(),
                signature: None,
            }));
            events.push(Ok(StreamEvent::ToolArgsDelta {
                id: id.clone(),
                json: format!("{{\"note\":\"{id}\"}}"),
            }));
            events.push(Ok(StreamEvent::ToolCallEnd { id }));
            events.push(Ok(StreamEvent::Usage {
                usage: Usage::default(),
            }));
            events.push(Ok(StreamEvent::Done {
                finish_reason: FinishReason::ToolCalls,
            }));
        } else {
            events.push(Ok(StreamEvent::TextDelta {
                text: format!("done {tag}"),
            }));
            events.push(Ok(StreamEvent::Usage {
                usage: Usage::default(),
            }));
            events.push(Ok(StreamEvent::Done {
                finish_reason: FinishReason::Stop,
            }));
        }
        Ok(futures::stream::iter(events).boxed())
    }
}
