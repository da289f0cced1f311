//! The step seam: how a durable-execution engine (Restate, Temporal) journals a turn.
//!
//! A turn is a sequence of effects: model calls, tool calls, compaction summaries. In process
//! ([`Steps::InProcess`], the default) each is a plain `.await`. A host that drives a turn
//! under an engine ([`Session::drive`](crate::Session::drive) with [`Steps::Durable`]) hands
//! every effect to a [`DurableSteps`] executor, which runs it at most once to a recorded result
//! and, when the engine replays the turn after a crash, returns the recorded result instead of
//! running it again. So a tool with side effects runs once however often the turn is replayed.
//!
//! What the loop guarantees an executor, in durable mode:
//! - steps are awaited one at a time, in an order decided only by the history the turn started
//!   from and the results of earlier steps (tools run one after another, parallel-safe or not);
//! - every step has a name that is stable across replays (`model:3`, `tool:call_abc`,
//!   `summary:2`), which an engine may compare to detect a diverging replay;
//! - a step's output is JSON bytes the executor stores and returns as they were.
//!
//! What the executor must do: return [`Interrupted::Cancelled`] when the engine cancelled the
//! turn (the turn then ends `cancelled` with a valid transcript), and
//! [`Interrupted::Engine`] when the attempt must stop so that the engine can retry it (the
//! turn then stops writing at once and [`Session::drive`](crate::Session::drive) returns the
//! error). `docs/durable-design.md` describes the Restate executor and how Temporal maps onto
//! the same seam.

use std::future::Future;

use futures::future::BoxFuture;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// What kind of effect a step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// One model call (streamed; the tokens are events of the live call only).
    Model,
    /// One tool call, with its timeout.
    Tool,
    /// A model call that summarises older messages when the conversation no longer fits.
    Summary,
}

/// The identity of one effect within a turn, the same on every replay.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepRequest {
    /// What kind of effect it is.
    pub kind: StepKind,
    /// A name unique within the turn and stable across replays: `model:{iteration}` (with
    /// `.{n}` after a retry that shrank the request), `tool:{call id}`, `summary:{n}`.
    pub name: String,
    /// What an engine that runs effects out of process would need (the tool's name and
    /// arguments for a tool step); `null` for model and summary steps, whose request is built
    /// from the history.
    pub input: serde_json::Value,
}

/// Why a durable step did not produce a result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Interrupted {
    /// The engine cancelled the turn: it ends `cancelled`, writing its closing messages.
    #[error("the turn was cancelled by the execution engine")]
    Cancelled,
    /// The attempt must stop now (the engine will retry or replay it); the message says why.
    #[error("the execution engine stopped the attempt: {0}")]
    Engine(String),
}

/// What a model call's step records (the loop's and compaction's summary calls alike).
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) enum ModelStep {
    Answered(Box<crate::provider::ModelResponse>),
    Failed(crate::provider::ProviderError),
    /// The turn was cancelled during the call.
    Cancelled,
    /// No complete answer within the model-call timeout (a summary call's own timeout).
    TimedOut,
}

/// An executor that journals a turn's effects; implemented by a durable-execution adapter.
///
/// The loop awaits one step at a time in durable mode, so an implementation may hold the
/// engine's context by reference and need not be reentrant.
pub trait DurableSteps: Send + Sync {
    /// Runs `effect` at most once to a recorded result and returns its bytes; on a replay that
    /// reaches a recorded step, returns the recorded bytes without polling `effect`.
    fn step<'a>(
        &'a self,
        request: StepRequest,
        effect: BoxFuture<'a, Vec<u8>>,
    ) -> BoxFuture<'a, Result<Vec<u8>, Interrupted>>;
}

/// How a turn runs its effects: in process (the default), or through a [`DurableSteps`]
/// executor.
#[derive(Clone, Copy, Default)]
pub enum Steps<'a> {
    /// Each effect is awaited where it is: no serialisation, no allocation.
    #[default]
    InProcess,
    /// Each effect goes through the executor, which records its result.
    Durable(&'a dyn DurableSteps),
}

impl std::fmt::Debug for Steps<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Steps::InProcess => f.write_str("Steps::InProcess"),
            Steps::Durable(_) => f.write_str("Steps::Durable(..)"),
        }
    }
}

impl Steps<'_> {
    /// Whether effects are journaled (and so run one at a time).
    pub fn is_durable(&self) -> bool {
        matches!(self, Steps::Durable(_))
    }

    /// Runs one effect: awaited in place in process; through the executor, its output
    /// serialised as JSON, when durable. `request` is built only in durable mode.
    pub(crate) async fn run<T, F>(&self, request: impl FnOnce() -> StepRequest, effect: F) -> Result<T, Interrupted>
    where
        F: Future<Output = T> + Send,
        T: Serialize + DeserializeOwned + Send,
    {
        match self {
            Steps::InProcess => Ok(effect.await),
            Steps::Durable(executor) => {
                let request = request();
                let name = request.name.clone();
                let effect: BoxFuture<'_, Vec<u8>> = Box::pin(async move {
                    // The step types below serialise infallibly (plain data, string keys);
                    // an empty record would fail to decode on replay and stop the attempt.
                    serde_json::to_vec(&effect.await).unwrap_or_default()
                });
                let bytes = executor.step(request, effect).await?;
                serde_json::from_slice(&bytes).map_err(|e| {
                    Interrupted::Engine(format!(
                        "the recorded result of step {name} does not decode ({e}); was it recorded by another version of the agent?"
                    ))
                })
            }
        }
    }
}
