//! The AG-UI events of scripted runs, through a real agent and the mapper, as snapshots.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use agent_agui::{AguiEvent, EventMapper};
use agent_core::{
    Agent, MemoryStore, OutcomeStatus, Run, ScriptStep, ScriptStepSpec, ScriptedProvider, ScriptedReply, ToolContext,
    ToolError, tool_fn,
};
use futures::StreamExt;
use serde_json::{Value, json};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// Text to echo.
    text: String,
}

fn agent(steps: Vec<ScriptStep>) -> Agent {
    let echo = tool_fn("echo", "Echoes text.", |args: EchoArgs, _cx: ToolContext| async move {
        Ok::<_, ToolError>(args.text)
    });
    Agent::builder()
        .provider(ScriptedProvider::new(steps))
        .tool(echo)
        .store(MemoryStore::new())
        .clarification(true)
        .build()
        .unwrap()
}

async fn mapped(run: &Run, mut mapper: EventMapper) -> Vec<AguiEvent> {
    let mut out = Vec::new();
    let mut events = run.events();
    while let Some(event) = events.next().await {
        out.extend(mapper.map(&event.kind));
    }
    out.extend(mapper.finish());
    out
}

/// The events as JSON, with the values that change from run to run (question ids, expiry
/// times, durations) replaced by placeholders.
fn stable(events: &[AguiEvent]) -> Value {
    fn walk(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    match key.as_str() {
                        "expiresAt" | "expires_at_ms" | "asked_at_ms" | "duration_ms" => *v = json!("[varies]"),
                        "clarification_id" => *v = json!("[question id]"),
                        "id" if v.as_str().is_some_and(|s| s.len() == 36) => *v = json!("[question id]"),
                        _ => walk(v),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    let mut value = serde_json::to_value(events).unwrap();
    walk(&mut value);
    value
}

#[tokio::test]
async fn text_reasoning_and_a_tool_call() {
    let agent = agent(vec![
        ScriptedReply::tool_call("echo", json!({"text": "hi"}))
            .with_reasoning("The person wants an echo.")
            .with_text("Calling echo.")
            .into(),
        ScriptedReply::text("Echo said hi.").into(),
    ]);
    let session = agent.create_session().await.unwrap();
    let run = session.send("Echo hi");
    let events = mapped(&run, EventMapper::new("thread-1", "run-1")).await;
    assert_eq!(run.outcome().await.status, OutcomeStatus::Done);
    insta::assert_json_snapshot!(stable(&events));
}

#[tokio::test]
async fn streamed_tool_arguments_become_tool_call_args_as_they_come() {
    let echo = tool_fn("echo", "Echoes text.", |args: EchoArgs, _cx: ToolContext| async move {
        Ok::<_, ToolError>(args.text)
    });
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([
            ScriptedReply::tool_call("echo", json!({"text": "a longer text to stream"}))
                .with_text("Calling echo.")
                .into(),
            ScriptedReply::text("Done.").into(),
        ]))
        .tool(echo)
        .config(agent_core::AgentConfig {
            stream_tool_arguments: true,
            ..agent_core::AgentConfig::default()
        })
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let run = session.send("Echo");
    let events = mapped(&run, EventMapper::new("thread-1", "run-5")).await;
    assert_eq!(run.outcome().await.status, OutcomeStatus::Done);
    let json: Vec<Value> = events.iter().map(|e| serde_json::to_value(e).unwrap()).collect();
    let kinds: Vec<&str> = json.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let first_call = kinds.iter().position(|k| *k == "TOOL_CALL_START").unwrap();
    let end = kinds.iter().position(|k| *k == "TOOL_CALL_END").unwrap();
    let step_end = kinds.iter().position(|k| *k == "STEP_FINISHED").unwrap();
    // Started once, its pieces in between, ended when the model call ended (before the tool
    // ran and its result came), the text message closed before the call started.
    assert_eq!(
        kinds.iter().filter(|k| **k == "TOOL_CALL_START").count(),
        1,
        "{kinds:?}"
    );
    assert_eq!(kinds.iter().filter(|k| **k == "TOOL_CALL_END").count(), 1, "{kinds:?}");
    assert!(kinds[..first_call].contains(&"TEXT_MESSAGE_END"), "{kinds:?}");
    assert!(end < step_end && step_end < kinds.iter().position(|k| *k == "TOOL_CALL_RESULT").unwrap());
    let pieces: Vec<&str> = json[first_call..end]
        .iter()
        .filter(|e| e["type"] == "TOOL_CALL_ARGS")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert!(pieces.len() >= 2, "streamed in pieces: {pieces:?}");
    assert_eq!(pieces.concat(), r#"{"text":"a longer text to stream"}"#);
    assert_eq!(json[first_call]["toolCallName"], "echo");
}

#[tokio::test]
async fn a_failed_tool_call_and_a_provider_error() {
    let error: ScriptStepSpec =
        serde_json::from_value(json!({"text": "Half an answer", "error": {"kind": "auth", "message": "bad key"}}))
            .unwrap();
    let agent = agent(vec![
        ScriptedReply::tool_call("no_such_tool", json!({})).into(),
        ScriptStep::try_from(error).unwrap(),
    ]);
    let session = agent.create_session().await.unwrap();
    let run = session.send("Go");
    let events = mapped(&run, EventMapper::new("thread-1", "run-2")).await;
    assert_eq!(run.outcome().await.status, OutcomeStatus::Error);
    insta::assert_json_snapshot!(stable(&events));
}

#[tokio::test]
async fn a_clarification_interrupts_and_its_answer_resumes() {
    let agent = agent(vec![
        ScriptedReply::tool_call(
            "ask_clarification",
            json!({"kind": "choice", "question": "Red or blue?", "options": ["red", "blue"]}),
        )
        .into(),
        ScriptedReply::text("Blue it is.").into(),
    ]);
    let session = agent.create_session().await.unwrap();
    let run = session.send("Pick a colour with me");
    let asked = mapped(&run, EventMapper::new("thread-1", "run-3")).await;
    assert_eq!(run.outcome().await.status, OutcomeStatus::AwaitingUser);
    insta::assert_json_snapshot!("clarification_asked", stable(&asked));

    let question = session.pending_clarification().unwrap();
    let run = session.answer_clarification(&question.id, "blue").unwrap();
    let answered = mapped(&run, EventMapper::new("thread-1", "run-4").resuming(question)).await;
    assert_eq!(run.outcome().await.status, OutcomeStatus::Done);
    insta::assert_json_snapshot!("clarification_answered", stable(&answered));
}

#[tokio::test]
async fn a_cancelled_run_finishes_cancelled_with_its_messages_closed() {
    let agent = agent(vec![ScriptStep::Hang("Working".into())]);
    let session = agent.create_session().await.unwrap();
    let run = session.send("Take your time");
    let mut mapper = EventMapper::new("thread-1", "run-5");
    let mut out = Vec::new();
    let mut events = run.events();
    while let Some(event) = events.next().await {
        let is_text = matches!(event.kind, agent_core::EventKind::ContentToken { .. });
        out.extend(mapper.map(&event.kind));
        if is_text {
            run.cancel();
        }
    }
    assert!(mapper.is_finished());
    insta::assert_json_snapshot!(stable(&out));
}

#[test]
fn a_stream_that_ends_early_is_closed_with_run_error() {
    let mut mapper = EventMapper::new("t", "r");
    let mut out = mapper.map(&agent_core::EventKind::RunStarted {
        run_id: "x".into(),
        origin: Default::default(),
    });
    out.extend(mapper.map(&agent_core::EventKind::ModelCallStarted { iteration: 1 }));
    out.extend(mapper.map(&agent_core::EventKind::ContentToken { text: "Hel".into() }));
    out.extend(mapper.finish());
    assert!(mapper.finish().is_empty());
    insta::assert_json_snapshot!(stable(&out));
}
