//! Typed final answers: the answer parsed and checked against the schema, one corrective
//! retry, an `output.invalid` error after a second failure, tools in the same turn, and the
//! answer given through the answer tool.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use agent_core::{
    ANSWER_TOOL, Agent, AnswerError, CancellationToken, ErrorKind, Message, OutcomeStatus, OutputSchema, Role,
    ScriptedProvider, ScriptedReply, Visibility, tool_fn,
};
use common::{assert_transcript_valid, messages_of};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct City {
    name: String,
    population: u64,
}

#[derive(Deserialize, JsonSchema)]
struct LookupArgs {
    city: String,
}

fn agent(provider: Arc<ScriptedProvider>) -> Agent {
    Agent::builder()
        .provider(provider)
        .tool(tool_fn(
            "lookup",
            "Looks a city up.",
            |args: LookupArgs, _cx| async move { Ok(format!("{} has 709000 people", args.city)) },
        ))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_valid_answer_is_parsed_and_the_schema_is_sent() {
    let provider = Arc::new(
        ScriptedProvider::new([ScriptedReply::json(json!({"name": "Oslo", "population": 709000})).into()])
            .record_requests(),
    );
    let session = agent(provider.clone()).create_session().await.unwrap();
    let outcome = session.send_typed::<City>("Capital of Norway?").await;
    assert_eq!(outcome.status, OutcomeStatus::Done);
    assert_eq!(
        outcome.structured_as::<City>().unwrap(),
        City {
            name: "Oslo".into(),
            population: 709000
        }
    );
    assert_eq!(
        outcome.final_text.as_deref(),
        Some(r#"{"name":"Oslo","population":709000}"#)
    );
    let requests = provider.requests();
    let schema = requests[0]
        .output_schema
        .as_ref()
        .expect("the request carries the schema");
    assert_eq!(schema.name, "City");
    assert_eq!(schema.schema["required"], json!(["name", "population"]));
    // The tools stay offered in the typed turn.
    assert_eq!(requests[0].tools.len(), 1);

    // The next, untyped turn carries no schema, and its outcome no structured answer.
    provider_is_done(&session).await;
}

async fn provider_is_done(session: &agent_core::Session) {
    let outcome = session.send("thanks").await;
    assert_eq!(outcome.status, OutcomeStatus::Error, "the script has no more steps");
    assert!(outcome.structured.is_none());
    assert!(matches!(
        outcome.structured_as::<City>(),
        Err(AnswerError::NoAnswer {
            status: OutcomeStatus::Error,
            ..
        })
    ));
}

#[tokio::test]
async fn an_invalid_answer_is_corrected_once() {
    let provider = Arc::new(
        ScriptedProvider::new([
            ScriptedReply::text("Oslo, about 709 000 people.").into(),
            ScriptedReply::json(json!({"name": "Oslo", "population": 709000})).into(),
        ])
        .record_requests(),
    );
    let session = agent(provider.clone()).create_session().await.unwrap();
    let outcome = session.send_typed::<City>("Capital of Norway?").await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert_eq!(outcome.iterations, 2);
    assert_eq!(outcome.structured, Some(json!({"name": "Oslo", "population": 709000})));

    // The second call saw the invalid answer and the runtime's note saying what was wrong.
    let second = &provider.requests()[1];
    let note = second.messages.last().unwrap();
    assert_eq!(note.role, Role::User);
    assert!(
        note.text()
            .starts_with("[note from the runtime: your final answer is not valid JSON")
    );
    assert!(second.output_schema.is_some(), "the retry is typed too");

    let messages = messages_of(&session).await;
    assert_transcript_valid(&messages);
    let stored_note = messages
        .iter()
        .find(|m| m.text().starts_with("[note from the runtime"))
        .unwrap();
    assert_eq!(
        stored_note.visibility,
        Visibility::MODEL_ONLY,
        "the person does not see the note"
    );
}

#[tokio::test]
async fn invalid_twice_ends_in_an_output_error_naming_the_problem() {
    let provider = Arc::new(ScriptedProvider::new([
        ScriptedReply::json(json!({"name": "Oslo"})).into(),
        ScriptedReply::json(json!({"name": "Oslo", "population": "many"})).into(),
    ]));
    let session = agent(provider).create_session().await.unwrap();
    let outcome = session.send_typed::<City>("Capital of Norway?").await;
    assert_eq!(outcome.status, OutcomeStatus::Error);
    assert_eq!(outcome.error_kind, Some(ErrorKind::OutputInvalid));
    assert_eq!(
        serde_json::to_value(outcome.error_kind).unwrap(),
        json!("output.invalid")
    );
    let error = outcome.error.as_deref().unwrap();
    assert!(error.contains("does not match the schema"), "{error}");
    assert!(error.contains("/population"), "names where: {error}");
    assert!(error.contains("\"many\""), "names what: {error}");
    assert!(error.contains("also after one correction"), "{error}");
    assert_eq!(
        outcome.final_text.as_deref(),
        Some(r#"{"name":"Oslo","population":"many"}"#),
        "the raw text is kept"
    );
    assert!(outcome.structured.is_none());
}

#[tokio::test]
async fn a_tool_call_then_a_typed_answer_in_the_same_turn() {
    let provider = Arc::new(
        ScriptedProvider::new([
            ScriptedReply::tool_call("lookup", json!({"city": "Oslo"})).into(),
            ScriptedReply::json(json!({"name": "Oslo", "population": 709000})).into(),
        ])
        .record_requests(),
    );
    let session = agent(provider.clone()).create_session().await.unwrap();
    let outcome = session.send_typed::<City>("Capital of Norway?").await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert_eq!((outcome.iterations, outcome.tool_calls), (2, 1));
    assert_eq!(outcome.structured_as::<City>().unwrap().population, 709000);
    let requests = provider.requests();
    assert!(requests.iter().all(|r| r.output_schema.is_some() && r.tools.len() == 1));
    assert!(requests[1].messages.iter().any(|m| m.role == Role::Tool));
    assert_transcript_valid(&messages_of(&session).await);
}

#[tokio::test]
async fn the_answer_through_the_answer_tool_becomes_the_answer() {
    let provider = Arc::new(ScriptedProvider::new([
        ScriptedReply::tool_call("lookup", json!({"city": "Oslo"})).into(),
        ScriptedReply::answer_tool(json!({"name": "Oslo", "population": 709000}))
            .with_text("Here it is.")
            .into(),
    ]));
    let session = agent(provider).create_session().await.unwrap();
    let outcome = session.send_typed::<City>("Capital of Norway?").await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert_eq!(outcome.tool_calls, 1, "the answer tool is not a tool call");
    assert_eq!(outcome.structured_as::<City>().unwrap().name, "Oslo");
    assert_eq!(
        outcome.final_text.as_deref(),
        Some(r#"{"name":"Oslo","population":709000}"#)
    );
    // The stored answer is plain text: no call waits for a result.
    let messages = messages_of(&session).await;
    assert_transcript_valid(&messages);
    let last = messages.last().unwrap();
    assert_eq!(last.role, Role::Assistant);
    assert!(last.tool_calls.is_empty());
}

#[tokio::test]
async fn the_answer_tool_beside_other_calls_is_dropped_and_asked_again() {
    let provider = Arc::new(ScriptedProvider::new([
        ScriptedReply::tool_call("lookup", json!({"city": "Oslo"}))
            .with_call(ANSWER_TOOL, json!({"name": "Oslo", "population": 1}))
            .into(),
        ScriptedReply::answer_tool(json!({"name": "Oslo", "population": 709000})).into(),
    ]));
    let session = agent(provider).create_session().await.unwrap();
    let outcome = session.send_typed::<City>("Capital of Norway?").await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert_eq!(outcome.structured_as::<City>().unwrap().population, 709000);
    assert_transcript_valid(&messages_of(&session).await);
}

#[tokio::test]
async fn a_json_schema_from_a_binding_and_a_non_object_answer() {
    let provider = Arc::new(ScriptedProvider::new([ScriptedReply::answer_tool(
        json!({"value": ["a", "b"]}),
    )
    .into()]));
    let session = agent(provider).create_session().await.unwrap();
    let schema = OutputSchema::new("tags", json!({"type": "array", "items": {"type": "string"}}));
    let outcome = session
        .send_with_schema(Message::user("Tags?"), schema, CancellationToken::new())
        .await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert_eq!(outcome.structured, Some(json!(["a", "b"])));
    assert_eq!(outcome.structured_as::<Vec<String>>().unwrap(), ["a", "b"]);
    assert!(matches!(outcome.structured_as::<City>(), Err(AnswerError::Mismatch(_))));
    let serialized = serde_json::to_value(&outcome).unwrap();
    assert_eq!(serialized["structured"], json!(["a", "b"]));
}

#[tokio::test]
async fn an_invalid_schema_fails_before_the_model_is_called() {
    let provider = Arc::new(ScriptedProvider::new([]));
    let session = agent(provider.clone()).create_session().await.unwrap();
    let schema = OutputSchema::new("bad", json!({"type": "no-such-type"}));
    let outcome = session
        .send_with_schema(Message::user("?"), schema, CancellationToken::new())
        .await;
    assert_eq!(outcome.error_kind, Some(ErrorKind::OutputSchema));
    assert!(outcome.error.as_deref().unwrap().contains("\"bad\""));
    assert_eq!(provider.call_count(), 0);
}

#[tokio::test]
async fn a_typed_turn_parked_on_a_question_stays_typed_when_answered() {
    let provider = Arc::new(
        ScriptedProvider::new([
            ScriptedReply::tool_call(
                "ask_clarification",
                json!({"kind": "input", "title": "City", "question": "Which city?"}),
            )
            .into(),
            ScriptedReply::json(json!({"name": "Oslo", "population": 709000})).into(),
        ])
        .record_requests(),
    );
    let agent = Agent::builder()
        .provider_arc(provider.clone())
        .clarification(true)
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let outcome = session.send_typed::<City>("A capital, please.").await;
    assert_eq!(outcome.status, OutcomeStatus::AwaitingUser, "{:?}", outcome.error);
    let question = outcome.clarification.unwrap();
    let outcome = session.answer_clarification(&question.id, "Norway").unwrap().await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert_eq!(outcome.structured_as::<City>().unwrap().name, "Oslo");
    assert!(
        provider.requests()[1].output_schema.is_some(),
        "the continued turn is typed"
    );
}

#[tokio::test]
async fn no_correction_is_made_past_max_iterations() {
    let provider = Arc::new(ScriptedProvider::new([ScriptedReply::text("Oslo").into()]));
    let agent = Agent::builder()
        .provider_arc(provider.clone())
        .config(agent_core::AgentConfig {
            max_iterations: 1,
            ..Default::default()
        })
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    let outcome = session.send_typed::<City>("Capital of Norway?").await;
    assert_eq!(outcome.error_kind, Some(ErrorKind::OutputInvalid));
    assert!(
        outcome.error.as_deref().unwrap().contains("max_iterations"),
        "{:?}",
        outcome.error
    );
    assert_eq!(provider.call_count(), 1);
}

/// An agent over `store` that asks its person before `pay` runs and can ask clarifications.
fn parking_agent(store: Arc<dyn agent_core::Store>, provider: Arc<ScriptedProvider>) -> Agent {
    let pay = tool_fn("pay", "Pays.", |_: serde_json::Value, _cx| async move {
        Ok::<_, agent_core::ToolError>("paid")
    })
    .gated(true);
    Agent::builder()
        .provider_arc(provider)
        .store_arc(store)
        .tool(pay)
        .clarification(true)
        .gate(agent_core::gate_fn(|_| async {
            agent_core::GateDecision::ask("Pay this?")
        }))
        .build()
        .unwrap()
}

fn oslo() -> ScriptedReply {
    ScriptedReply::json(json!({"name": "Oslo", "population": 709000}))
}

#[tokio::test]
async fn a_typed_turn_parked_on_a_question_is_still_typed_after_a_restart() {
    let store: Arc<dyn agent_core::Store> = Arc::new(agent_core::MemoryStore::new());
    let asks = ScriptedReply::tool_call("ask_clarification", json!({"kind": "input", "question": "Which city?"}));
    let first = parking_agent(store.clone(), Arc::new(ScriptedProvider::new([asks.into()])));
    let session = first.create_session().await.unwrap();
    let id = session.id().clone();
    let outcome = session.send_typed::<City>("A capital, please.").await;
    assert_eq!(outcome.status, OutcomeStatus::AwaitingUser, "{:?}", outcome.error);
    let question = outcome.clarification.unwrap();
    drop(session);
    drop(first);

    // Another agent on the same store: the process restarted.
    let provider = Arc::new(ScriptedProvider::new([oslo().into()]).record_requests());
    let second = parking_agent(store, provider.clone());
    let session = second.open_session(&id).await.unwrap();
    let outcome = session.answer_clarification(&question.id, "Norway").unwrap().await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert_eq!(outcome.structured_as::<City>().unwrap().name, "Oslo");
    assert_eq!(provider.requests()[0].output_schema.as_ref().unwrap().name, "City");
}

#[tokio::test]
async fn a_typed_turn_parked_on_an_approval_is_still_typed_after_a_restart_and_untyped_turns_stay_untyped() {
    let store: Arc<dyn agent_core::Store> = Arc::new(agent_core::MemoryStore::new());
    let pays = || ScriptedReply::tool_call("pay", json!({"amount": 3}));
    let first = parking_agent(
        store.clone(),
        Arc::new(ScriptedProvider::new([pays().into(), pays().into()])),
    );
    let typed = first.create_session().await.unwrap();
    let plain = first.create_session().await.unwrap();
    let typed_outcome = typed.send_typed::<City>("Pay, then name a capital.").await;
    let plain_outcome = plain.send("Pay.").await;
    for outcome in [&typed_outcome, &plain_outcome] {
        assert_eq!(outcome.status, OutcomeStatus::AwaitingApproval, "{:?}", outcome.error);
    }
    let ids = [typed.id().clone(), plain.id().clone()];
    let approvals = [typed_outcome.approval.unwrap(), plain_outcome.approval.unwrap()];
    drop((typed, plain, first));

    let provider =
        Arc::new(ScriptedProvider::new([oslo().into(), ScriptedReply::text("Paid.").into()]).record_requests());
    let second = parking_agent(store, provider.clone());
    let mut outcomes = Vec::new();
    for (id, approval) in ids.iter().zip(&approvals) {
        let session = second.open_session(id).await.unwrap();
        let call = approval.calls[0].call_id.clone();
        let run = session
            .resolve_approval(&approval.id, [(call, agent_core::ApprovalDecision::approve())])
            .unwrap();
        outcomes.push(run.await);
    }
    assert_eq!(outcomes[0].status, OutcomeStatus::Done, "{:?}", outcomes[0].error);
    assert_eq!(outcomes[0].structured_as::<City>().unwrap().name, "Oslo");
    assert_eq!(outcomes[1].final_text.as_deref(), Some("Paid."));
    assert!(outcomes[1].structured.is_none());
    let requests = provider.requests();
    assert_eq!(requests[0].output_schema.as_ref().unwrap().name, "City");
    assert!(requests[1].output_schema.is_none(), "the untyped turn stays untyped");
}
