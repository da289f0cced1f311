//! The step seam: a turn driven through a journaling executor runs every tool once however
//! often it is replayed, names its steps stably, runs tools one at a time, and ends the way
//! the executor says (cancelled, or stopped for a retry with nothing written after the step).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::steps::{DurableSteps, Interrupted, StepRequest, Steps};
use agent_core::{
    Agent, AgentConfig, MemoryStore, Message, ModelRequest, OutcomeStatus, Role, ScriptStep, ScriptedProvider,
    ScriptedReply, Store, ToolContext, ToolError, TurnOrigin, tool_fn,
};
use agent_core::{DriveError, DriveOptions, TurnStart};
use common::{Log, assert_transcript_valid, messages_of};
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// Recorded steps, by position: what an engine's journal keeps across attempts.
#[derive(Default)]
struct Journal(Mutex<Vec<(StepRequest, Vec<u8>)>>);

impl Journal {
    fn names(&self) -> Vec<String> {
        self.0.lock().unwrap().iter().map(|(r, _)| r.name.clone()).collect()
    }
}

/// One attempt: replays what the journal holds, runs and records the rest, and interrupts
/// the step at `stop_at` (a worker killed there, or a cancel).
struct Attempt<'j> {
    journal: &'j Journal,
    next: AtomicUsize,
    stop_at: Option<(usize, Interrupted)>,
}

impl<'j> Attempt<'j> {
    fn new(journal: &'j Journal, stop_at: Option<(usize, Interrupted)>) -> Self {
        Attempt {
            journal,
            next: AtomicUsize::new(0),
            stop_at,
        }
    }
}

impl DurableSteps for Attempt<'_> {
    fn step<'a>(
        &'a self,
        request: StepRequest,
        effect: BoxFuture<'a, Vec<u8>>,
    ) -> BoxFuture<'a, Result<Vec<u8>, Interrupted>> {
        Box::pin(async move {
            let index = self.next.fetch_add(1, Ordering::SeqCst);
            if let Some((at, why)) = &self.stop_at
                && *at == index
            {
                return Err(why.clone());
            }
            if let Some((recorded, bytes)) = self.journal.0.lock().unwrap().get(index) {
                assert_eq!(recorded, &request, "the replay asked for a different step at {index}");
                return Ok(bytes.clone());
            }
            let bytes = effect.await;
            self.journal.0.lock().unwrap().push((request, bytes.clone()));
            Ok(bytes)
        })
    }
}

#[derive(Deserialize, JsonSchema)]
struct ChargeArgs {
    /// Which charge.
    n: u32,
}

/// A tool with a side effect: each run is logged with its call id; it also counts how many
/// of its calls run at once.
fn charge_tool(runs: Log, running: Arc<AtomicUsize>, most: Arc<AtomicUsize>, gated: bool) -> impl agent_core::Tool {
    tool_fn("charge", "Charges a card.", move |args: ChargeArgs, cx: ToolContext| {
        let runs = runs.clone();
        let running = running.clone();
        let most = most.clone();
        async move {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(30)).await;
            running.fetch_sub(1, Ordering::SeqCst);
            runs.push(format!("{} charge {}", cx.call_id, args.n));
            Ok::<_, ToolError>(format!("charged {}", args.n))
        }
    })
    .parallel_safe(true)
    .gated(gated)
}

/// Two charges at once, then one more, then the answer: decided from the request alone, as
/// a model's answers are.
fn model() -> ScriptedProvider {
    ScriptedProvider::from_fn(|request: &ModelRequest| {
        let results = request.messages.iter().filter(|m| m.role == Role::Tool).count();
        ScriptStep::Reply(match results {
            0 => ScriptedReply::tool_call("charge", json!({"n": 1})).with_call("charge", json!({"n": 2})),
            1 | 2 => ScriptedReply::tool_call("charge", json!({"n": 3})),
            _ => ScriptedReply::text("done"),
        })
    })
}

struct Fixture {
    agent: Agent,
    store: Arc<MemoryStore>,
    runs: Log,
    most: Arc<AtomicUsize>,
}

fn fixture() -> Fixture {
    let store = Arc::new(MemoryStore::new());
    let runs = Log::default();
    let most = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder()
        .provider(model())
        .store_arc(store.clone())
        .tool(charge_tool(
            runs.clone(),
            Arc::new(AtomicUsize::new(0)),
            most.clone(),
            false,
        ))
        .config(AgentConfig {
            max_parallel_tools: 4,
            ..AgentConfig::default()
        })
        .build()
        .unwrap();
    Fixture {
        agent,
        store,
        runs,
        most,
    }
}

fn message(text: &str) -> TurnStart {
    TurnStart::Message {
        message: Message::user(text),
        origin: TurnOrigin::Person,
    }
}

fn options<'a>(steps: &'a dyn DurableSteps) -> DriveOptions<'a> {
    DriveOptions {
        run_id: "run-1".into(),
        steps: Steps::Durable(steps),
        ..DriveOptions::default()
    }
}

#[tokio::test]
async fn a_turn_replayed_after_a_crash_runs_each_tool_once() {
    let f = fixture();
    let id = f.agent.create_session().await.unwrap().id().clone();
    let journal = Journal::default();
    // The engine's first step: where the turn starts from.
    let base = f.store.last_seq(&id).await.unwrap();

    // The worker dies as the second model call is about to start.
    let first = Attempt::new(&journal, Some((3, Interrupted::Engine("worker killed".into()))));
    let session = f.agent.session_at(&id, Some(base)).await.unwrap();
    match session
        .drive(message("charge twice, then once more"), options(&first))
        .await
    {
        Err(DriveError::Engine(why)) => assert!(why.contains("worker killed"), "{why}"),
        other => panic!("expected the attempt to stop, got {other:?}"),
    }
    assert_eq!(f.runs.entries().len(), 2, "both charges of the first message ran");
    let written = f.store.last_seq(&id).await.unwrap();

    // Another worker replays the turn from the same start and the same journal.
    let second = Attempt::new(&journal, None);
    let session = f.agent.session_at(&id, Some(base)).await.unwrap();
    let outcome = session
        .drive(message("charge twice, then once more"), options(&second))
        .await
        .unwrap();
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert_eq!(outcome.final_text.as_deref(), Some("done"));

    let mut runs = f.runs.entries();
    runs.sort();
    runs.dedup();
    assert_eq!(runs.len(), 3, "each charge ran exactly once: {:?}", f.runs.entries());
    assert_eq!(f.runs.entries().len(), 3);
    let names = journal.names();
    assert_eq!(names[0], "model:1");
    assert!(names[1].starts_with("tool:") && names[2].starts_with("tool:"));
    assert_eq!(names[3], "model:2");
    assert!(names[4].starts_with("tool:"));
    assert_eq!(names[5], "model:3");
    assert_eq!(names.len(), 6);

    // The replay wrote what the first attempt had written once, then the rest.
    let messages = messages_of(&f.agent.open_session(&id).await.unwrap()).await;
    assert_transcript_valid(&messages);
    let roles: Vec<Role> = messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::Tool,
            Role::Assistant,
            Role::Tool,
            Role::Assistant
        ],
    );
    assert!(
        (4..7).contains(&written),
        "the first attempt stored part of the turn ({written})"
    );
    let records = f.store.tool_calls(&id).await.unwrap();
    assert_eq!(records.len(), 3);
    assert!(records.iter().all(|r| r.state == agent_core::ToolCallState::Succeeded));
}

#[tokio::test]
async fn durable_tools_run_one_at_a_time_and_in_process_ones_together() {
    let f = fixture();
    let session = f.agent.create_session().await.unwrap();
    let outcome = session.drive(message("charge"), DriveOptions::default()).await.unwrap();
    assert_eq!(outcome.status, OutcomeStatus::Done);
    assert_eq!(
        f.most.load(Ordering::SeqCst),
        2,
        "in process, the two charges ran at once"
    );

    let f = fixture();
    let id = f.agent.create_session().await.unwrap().id().clone();
    let journal = Journal::default();
    let attempt = Attempt::new(&journal, None);
    let session = f.agent.session_at(&id, None).await.unwrap();
    let outcome = session.drive(message("charge"), options(&attempt)).await.unwrap();
    assert_eq!(outcome.status, OutcomeStatus::Done);
    assert_eq!(f.most.load(Ordering::SeqCst), 1, "journaled, one at a time");
    assert_eq!(f.runs.entries().len(), 3);
}

#[tokio::test]
async fn a_cancel_from_the_engine_ends_the_turn_cancelled_with_a_valid_transcript() {
    let f = fixture();
    let id = f.agent.create_session().await.unwrap().id().clone();
    let journal = Journal::default();
    // Cancelled at the second tool call: the first ran, the second did not.
    let attempt = Attempt::new(&journal, Some((2, Interrupted::Cancelled)));
    let session = f.agent.session_at(&id, Some(0)).await.unwrap();
    let outcome = session.drive(message("charge"), options(&attempt)).await.unwrap();
    assert_eq!(outcome.status, OutcomeStatus::Cancelled);
    assert_eq!(f.runs.entries().len(), 1);
    let messages = messages_of(&f.agent.open_session(&id).await.unwrap()).await;
    assert_transcript_valid(&messages);
    assert!(messages.last().unwrap().text().starts_with("cancelled"), "{messages:?}");
}

#[tokio::test]
async fn a_recorded_model_failure_ends_the_replay_the_same_way_without_calling_the_model() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let store = Arc::new(MemoryStore::new());
    let agent = Agent::builder()
        .provider(ScriptedProvider::from_fn(move |_: &ModelRequest| {
            counted.fetch_add(1, Ordering::SeqCst);
            ScriptStep::Error(agent_core::ProviderError::Auth {
                status: 401,
                message: "bad key".into(),
            })
        }))
        .store_arc(store.clone())
        .build()
        .unwrap();
    let id = agent.create_session().await.unwrap().id().clone();
    let journal = Journal::default();
    for _ in 0..2 {
        let attempt = Attempt::new(&journal, None);
        let session = agent.session_at(&id, Some(0)).await.unwrap();
        let outcome = session.drive(message("hello"), options(&attempt)).await.unwrap();
        assert_eq!(outcome.status, OutcomeStatus::Error);
        assert!(outcome.error.unwrap().contains("bad key"));
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the replay read the recorded failure");
    assert_eq!(journal.names(), ["model:1"]);
}

#[tokio::test]
async fn an_answer_with_nothing_pending_is_refused() {
    let f = fixture();
    let session = f.agent.create_session().await.unwrap();
    let answer = TurnStart::Answer {
        clarification_id: "nope".into(),
        answer: "yes".into(),
    };
    match session.drive(answer, DriveOptions::default()).await {
        Err(DriveError::Clarification(e)) => assert!(e.to_string().contains("nope"), "{e}"),
        other => panic!("expected a refused answer, got {other:?}"),
    }
}

#[tokio::test]
async fn a_session_at_an_earlier_point_leaves_out_what_came_after() {
    let f = fixture();
    let session = f.agent.create_session().await.unwrap();
    session.send("first").await;
    let after_first = f.store.last_seq(session.id()).await.unwrap();
    session.send("second").await;
    let earlier = f.agent.session_at(session.id(), Some(after_first)).await.unwrap();
    let view = earlier.model_history().await;
    assert!(view.iter().any(|m| m.text() == "first"));
    assert!(!view.iter().any(|m| m.text() == "second"));
    assert!(
        f.agent
            .session_at(&agent_core::SessionId::new_random(), None)
            .await
            .is_err(),
        "a session the store does not hold is not found"
    );
}

#[tokio::test]
async fn a_durable_turn_parks_for_approval_and_a_driven_decision_resumes_it() {
    let f = {
        let store = Arc::new(MemoryStore::new());
        let runs = Log::default();
        let agent = Agent::builder()
            .provider(model())
            .store_arc(store.clone())
            .tool(charge_tool(runs.clone(), Arc::default(), Arc::default(), true))
            .gate(agent_core::gate_fn(|_| async {
                agent_core::GateDecision::ask("Charge?")
            }))
            .build()
            .unwrap();
        Fixture {
            agent,
            store,
            runs,
            most: Arc::default(),
        }
    };
    let id = f.agent.create_session().await.unwrap().id().clone();
    let journal = Journal::default();
    let attempt = Attempt::new(&journal, None);
    let session = f.agent.session_at(&id, Some(0)).await.unwrap();
    let outcome = session.drive(message("charge"), options(&attempt)).await.unwrap();
    assert_eq!(outcome.status, OutcomeStatus::AwaitingApproval);
    assert!(f.runs.entries().is_empty());

    // Answered later, by a handle loaded afresh (another replica), in a turn of its own.
    let base = f.store.last_seq(&id).await.unwrap();
    let session = f.agent.session_at(&id, Some(base)).await.unwrap();
    let approval = session
        .pending_approval()
        .expect("the approval is restored from the store");
    let refused = TurnStart::Approval {
        approval_id: approval.id.clone(),
        decisions: Vec::new(),
    };
    assert!(matches!(
        session.drive(refused, DriveOptions::default()).await,
        Err(DriveError::Approval(_))
    ));
    let decisions = approval
        .calls
        .iter()
        .map(|c| {
            (
                c.call_id.clone(),
                agent_core::ApprovalDecision::approve().remember(agent_core::RememberScope::Session),
            )
        })
        .collect();
    let journal = Journal::default();
    let attempt = Attempt::new(&journal, None);
    let decided = TurnStart::Approval {
        approval_id: approval.id,
        decisions,
    };
    let outcome = session.drive(decided, options(&attempt)).await.unwrap();
    assert_eq!(outcome.status, OutcomeStatus::Done, "{:?}", outcome.error);
    assert_eq!(
        f.runs.entries().len(),
        3,
        "the two approved charges and the remembered third ran"
    );
    assert_transcript_valid(&messages_of(&f.agent.open_session(&id).await.unwrap()).await);
}
