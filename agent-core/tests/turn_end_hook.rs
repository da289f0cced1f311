//! `Tool::turn_ended`: every tool hears once that a turn ended, whatever the outcome, before
//! the outcome is returned; a hook that hangs holds the outcome back no longer than
//! `TURN_END_TIMEOUT`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::{Arc, Mutex};

use agent_core::{
    Agent, OutcomeStatus, ScriptStep, ScriptedProvider, ScriptedReply, SessionId, TURN_END_TIMEOUT, Tool, ToolContext,
    ToolError, ToolOutput, ToolSpec, async_trait,
};
use futures::StreamExt;
use serde_json::{Value, json};

/// A tool that counts its calls and the turn ends it hears of, optionally hanging in the hook.
struct Listener {
    spec: ToolSpec,
    heard: Arc<Mutex<Vec<String>>>,
    hang: bool,
}

impl Listener {
    fn new(hang: bool) -> (Listener, Arc<Mutex<Vec<String>>>) {
        let heard = Arc::new(Mutex::new(Vec::new()));
        let spec = ToolSpec::new("listen", "Does nothing.", json!({"type": "object", "properties": {}}));
        (
            Listener {
                spec,
                heard: heard.clone(),
                hang,
            },
            heard,
        )
    }
}

#[async_trait]
impl Tool for Listener {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, _args: Value, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        self.heard.lock().unwrap().push("call".to_owned());
        Ok(ToolOutput::text("ok"))
    }

    async fn turn_ended(&self, session_id: &SessionId) {
        self.heard.lock().unwrap().push(format!("ended {session_id}"));
        if self.hang {
            std::future::pending::<()>().await;
        }
    }
}

#[tokio::test]
async fn every_turn_end_is_heard_once_after_the_tool_calls_whatever_the_outcome() {
    let (tool, heard) = Listener::new(false);
    let provider = ScriptedProvider::new([
        ScriptStep::from(ScriptedReply::tool_call("listen", json!({}))),
        ScriptedReply::text("done").into(),
        ScriptStep::Hang("thinking".to_owned()),
    ]);
    let agent = Agent::builder().provider(provider).tool(tool).build().unwrap();
    let session = agent.create_session().await.unwrap();
    let id = session.id().to_string();

    assert_eq!(session.send("first").await.status, OutcomeStatus::Done);
    assert_eq!(*heard.lock().unwrap(), ["call".to_owned(), format!("ended {id}")]);

    // A turn cancelled while the model streams is heard of too.
    let run = session.send("second");
    let mut events = run.events();
    while let Some(event) = events.next().await {
        if event.kind.name() == "content_token" {
            break;
        }
    }
    run.cancel();
    assert_eq!(run.await.status, OutcomeStatus::Cancelled);
    assert_eq!(heard.lock().unwrap().len(), 3);
    assert_eq!(heard.lock().unwrap()[2], format!("ended {id}"));
}

#[tokio::test(start_paused = true)]
async fn a_hook_that_hangs_holds_the_outcome_back_no_longer_than_the_timeout() {
    let (tool, heard) = Listener::new(true);
    let provider = ScriptedProvider::new([ScriptStep::from(ScriptedReply::text("done"))]);
    let agent = Agent::builder().provider(provider).tool(tool).build().unwrap();
    let session = agent.create_session().await.unwrap();
    let started = tokio::time::Instant::now();
    assert_eq!(session.send("hello").await.status, OutcomeStatus::Done);
    let waited = started.elapsed();
    assert!(
        waited >= TURN_END_TIMEOUT && waited < TURN_END_TIMEOUT * 2,
        "waited {waited:?}"
    );
    assert_eq!(heard.lock().unwrap().len(), 1);
}
