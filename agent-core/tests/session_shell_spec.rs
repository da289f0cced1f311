//! The scenarios of the Agent Session Shell spec (seed 002): orchestrator, tool registry,
//! argument validation and the max-iteration guard.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_core::{
    Agent, AgentConfig, Message, OutcomeStatus, Role, RunState, ScriptStep, ScriptedProvider, ScriptedReply,
    ToolContext, ToolError, ToolOutput, ToolSet, ToolSetError, ToolSpec, tool_fn,
};
use common::{assert_transcript_valid, messages_of, tool_results};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct TranscribeArgs {
    /// The asset to transcribe; optional.
    #[serde(rename = "assetId")]
    asset_id: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct StrictArgs {
    /// The asset to transcribe.
    #[serde(rename = "assetId")]
    asset_id: String,
}

fn transcribe(counter: Arc<AtomicUsize>) -> impl agent_core::Tool {
    tool_fn(
        "transcribe_video",
        "Transcribes a video asset.",
        move |args: TranscribeArgs, _cx: ToolContext| {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                Ok::<_, ToolError>(format!(
                    "transcript of {}",
                    args.asset_id.unwrap_or_else(|| "the video".into())
                ))
            }
        },
    )
}

#[tokio::test]
async fn happy_path_with_no_tool_calls() {
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([ScriptedReply::text("Hello!").into()]))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let run = session.send("Hi");
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    assert_eq!(outcome.final_text.as_deref(), Some("Hello!"));
    assert_eq!(run.status().state, RunState::Complete);
    assert_eq!(run.status().current_tool, None);
    let messages = messages_of(&session).await;
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[1].role, Role::Assistant);
    assert_eq!(messages[1].text(), "Hello!");
}

#[tokio::test]
async fn tool_call_then_final_answer() {
    let counter = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([
            ScriptedReply::tool_call("transcribe_video", json!({})).into(),
            ScriptedReply::text("Here is the transcription...").into(),
        ]))
        .tool(transcribe(counter.clone()))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let outcome = session.send("Transcribe it").await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    assert_eq!(outcome.iterations, 2);
    assert_eq!(counter.load(Ordering::SeqCst), 1);
    let messages = messages_of(&session).await;
    assert_eq!(
        tool_results(&messages),
        vec![("transcript of the video".to_owned(), false)]
    );
    assert_eq!(messages.last().unwrap().text(), "Here is the transcription...");
    assert_transcript_valid(&messages);
}

#[tokio::test]
async fn per_tool_recovery_when_a_tool_throws() {
    let failing = tool_fn(
        "transcribe_video",
        "Fails.",
        |_args: TranscribeArgs, _cx: ToolContext| async move { Err::<ToolOutput, _>(ToolError::model("decoder exploded")) },
    );
    let provider = Arc::new(
        ScriptedProvider::new([
            ScriptedReply::tool_call("transcribe_video", json!({})).into(),
            ScriptedReply::text("Sorry, transcription failed.").into(),
        ])
        .record_requests(),
    );
    let agent = Agent::builder()
        .provider_arc(provider.clone())
        .tool(failing)
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let outcome = session.send("Transcribe it").await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    // The error result went back to the model, which recovered with a final answer.
    let second = &provider.requests()[1];
    let result = second.messages.iter().find(|m| m.role == Role::Tool).unwrap();
    assert!(result.is_error);
    assert!(result.text().contains("decoder exploded"));
    assert_transcript_valid(&messages_of(&session).await);
}

#[tokio::test]
async fn registry_registers_looks_up_and_exports_schemas() {
    let mut set = ToolSet::new();
    set.register(transcribe(Arc::default())).unwrap();
    assert!(set.has("transcribe_video"));
    assert!(!set.has("echo_context"));
    assert_eq!(set.names(), vec!["transcribe_video"]);
    assert!(set.get("transcribe_video").is_some());
    let schemas = set.schemas();
    assert_eq!(schemas.len(), 1);
    assert_eq!(schemas[0].name, "transcribe_video");
    assert_eq!(schemas[0].description, "Transcribes a video asset.");
    let props = &schemas[0].parameters["properties"];
    assert!(props["assetId"].is_object(), "assetId in {props}");
    // Optional: not required.
    let required = schemas[0].parameters.get("required").cloned().unwrap_or(json!([]));
    assert!(!required.as_array().unwrap().iter().any(|r| r == "assetId"));
    // Duplicate names are refused.
    let err = set.register(transcribe(Arc::default())).unwrap_err();
    assert_eq!(err, ToolSetError::Duplicate("transcribe_video".into()));
}

#[tokio::test]
async fn validation_passes_when_nothing_is_required() {
    let counter = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([
            ScriptedReply::tool_call("transcribe_video", json!({})).into(),
            ScriptedReply::text("ok").into(),
        ]))
        .tool(transcribe(counter.clone()))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    assert_eq!(session.send("go").await.status, OutcomeStatus::Done);
    assert_eq!(counter.load(Ordering::SeqCst), 1, "the tool executes");
}

fn strict_tool(counter: Arc<AtomicUsize>) -> impl agent_core::Tool {
    tool_fn(
        "transcribe_video",
        "Strict.",
        move |args: StrictArgs, _cx: ToolContext| {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                Ok::<_, ToolError>(format!("ran for {}", args.asset_id))
            }
        },
    )
}

async fn run_with_args(args: serde_json::Value) -> (usize, Vec<Message>) {
    let counter = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([
            ScriptedReply::tool_call("transcribe_video", args).into(),
            ScriptedReply::text("ok").into(),
        ]))
        .tool(strict_tool(counter.clone()))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    assert_eq!(session.send("go").await.status, OutcomeStatus::Done);
    (counter.load(Ordering::SeqCst), messages_of(&session).await)
}

#[tokio::test]
async fn wrong_argument_type_is_refused_naming_the_argument() {
    let (runs, messages) = run_with_args(json!({"assetId": 123})).await;
    assert_eq!(runs, 0, "the tool must not execute");
    let results = tool_results(&messages);
    assert_eq!(results.len(), 1);
    assert!(results[0].1, "an error result");
    assert!(results[0].0.contains("assetId"), "{}", results[0].0);
}

#[tokio::test]
async fn missing_required_argument_is_refused_naming_the_argument() {
    let (runs, messages) = run_with_args(json!({})).await;
    assert_eq!(runs, 0);
    let results = tool_results(&messages);
    assert!(results[0].1);
    assert!(
        results[0].0.contains("missing required argument \"assetId\""),
        "{}",
        results[0].0
    );
}

#[tokio::test]
async fn explicit_schema_tools_validate_too() {
    struct Raw(ToolSpec);
    #[agent_core::async_trait]
    impl agent_core::Tool for Raw {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        async fn call(&self, _a: serde_json::Value, _c: ToolContext) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::text("ran"))
        }
    }
    let mut set = ToolSet::new();
    set.register(Raw(ToolSpec::new(
        "t",
        "d",
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
    )))
    .unwrap();
    assert!(set.validate("t", &json!({"n": 3})).is_ok());
    let err = set.validate("t", &json!({"n": "3"})).unwrap_err();
    assert_eq!(err.argument.as_deref(), Some("n"));
    let err = set.validate("t", &json!([])).unwrap_err();
    assert!(err.message.contains("t"), "{}", err.message);
}

fn looping_provider(times: usize) -> ScriptedProvider {
    let steps: Vec<ScriptStep> = (0..times)
        .map(|_| ScriptedReply::tool_call("transcribe_video", json!({})).into())
        .chain([ScriptedReply::text("never reached").into()])
        .collect();
    ScriptedProvider::new(steps)
}

#[tokio::test]
async fn cap_reached_mid_loop() {
    let counter = Arc::new(AtomicUsize::new(0));
    let provider = Arc::new(looping_provider(8));
    let agent = Agent::builder()
        .provider_arc(provider.clone())
        .tool(transcribe(counter.clone()))
        .config(AgentConfig {
            max_iterations: 8,
            // The same call with the same result each time: the iteration cap, not the loop
            // guard, is what this test is about.
            max_repeated_calls: 0,
            ..AgentConfig::default()
        })
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let run = session.send("loop");
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, OutcomeStatus::Capped);
    assert_eq!(outcome.iterations, 8);
    assert_eq!(provider.call_count(), 8);
    // Tool calls of iterations 1..7 ran; the 8th iteration's calls were not run.
    assert_eq!(counter.load(Ordering::SeqCst), 7);
    let messages = messages_of(&session).await;
    let last = messages.last().unwrap();
    assert_eq!(last.role, Role::Assistant);
    assert_eq!(last.text(), "Reached maximum iteration limit");
    assert!(tool_results(&messages).last().unwrap().0.contains("iteration cap"));
    assert_transcript_valid(&messages);
    assert_eq!(run.status().state, RunState::Complete);
}

#[tokio::test]
async fn loop_completes_within_cap() {
    let provider = ScriptedProvider::new([
        ScriptedReply::tool_call("transcribe_video", json!({})).into(),
        ScriptedReply::tool_call("transcribe_video", json!({})).into(),
        ScriptedReply::text("final").into(),
    ]);
    let agent = Agent::builder()
        .provider(provider)
        .tool(transcribe(Arc::default()))
        .config(AgentConfig {
            max_iterations: 8,
            ..AgentConfig::default()
        })
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let outcome = session.send("go").await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    let messages = messages_of(&session).await;
    assert!(!messages.iter().any(|m| m.text() == "Reached maximum iteration limit"));
}

#[tokio::test]
async fn tool_call_cap_ends_capped_with_valid_transcript() {
    let counter = Arc::new(AtomicUsize::new(0));
    let provider = ScriptedProvider::new([
        ScriptedReply::tool_call("transcribe_video", json!({}))
            .with_call("transcribe_video", json!({}))
            .with_call("transcribe_video", json!({}))
            .into(),
        ScriptedReply::text("never").into(),
    ]);
    let agent = Agent::builder()
        .provider(provider)
        .tool(transcribe(counter.clone()))
        .config(AgentConfig {
            max_tool_calls: Some(2),
            ..AgentConfig::default()
        })
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let outcome = session.send("go").await;
    assert_eq!(outcome.status, OutcomeStatus::Capped);
    assert_eq!(counter.load(Ordering::SeqCst), 2);
    let messages = messages_of(&session).await;
    assert_transcript_valid(&messages);
    assert!(tool_results(&messages)[2].0.contains("tool-call cap"));
    assert_eq!(
        messages.last().unwrap().text(),
        "Reached maximum tool call limit (2 per turn)"
    );
}

#[tokio::test]
async fn provider_error_sets_error_status() {
    let agent = Agent::builder()
        .provider(ScriptedProvider::new([ScriptStep::Error(
            agent_core::ProviderError::Auth {
                status: 401,
                message: "bad key".into(),
            },
        )]))
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let run = session.send("hi");
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, OutcomeStatus::Error);
    assert_eq!(
        outcome.error_kind,
        Some(agent_core::ErrorKind::Provider(agent_core::ProviderErrorKind::Auth))
    );
    assert!(outcome.error.unwrap().contains("bad key"));
    let status = run.status();
    assert_eq!(status.state, RunState::Error);
    assert!(status.error.is_some());
    // The conversation is still sendable: the user message is stored, nothing dangles.
    assert_transcript_valid(&messages_of(&session).await);
}
