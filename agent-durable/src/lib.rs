//! # agent-durable
//!
//! Durable turns for agent-core on [Restate](https://restate.dev): a virtual object per session
//! ([`AgentSession`]) runs each turn in a Restate handler, so one writer holds a session at a
//! time across every replica, and each model call, tool call and summary of the turn is a
//! journaled step ([`RestateSteps`], agent-core's [`DurableSteps`](agent_core::steps::DurableSteps)).
//! When a replica dies mid-turn, Restate replays the turn on another: completed steps return
//! their recorded results without running again, so a tool with side effects runs once.
//!
//! The history lives in the agent's store, which every replica shares (agent-store-postgres's
//! `PostgresStore`). Cancels reach the turn through Restate (at its next step) and through
//! PostgreSQL `NOTIFY` ([`spawn_cancel_listener`], at once, in the middle of a model or tool call).
//!
//! ```no_run
//! use agent_durable::{AgentSession, RunRegistry, spawn_cancel_listener};
//! use restate_sdk::prelude::{Endpoint, HttpServer};
//!
//! # async fn serve(agent: agent_core::Agent, postgres_url: &str) -> Result<(), Box<dyn std::error::Error>> {
//! let runs = RunRegistry::new();
//! let _listener = spawn_cancel_listener(postgres_url, runs.clone())?;
//! let object = AgentSession::new(agent, runs)?.with_cancel_notify(postgres_url);
//! HttpServer::new(Endpoint::builder().bind(object).build())
//!     .listen_and_serve("127.0.0.1:9080".parse()?)
//!     .await;
//! # Ok(()) }
//! ```
//!
//! `docs/durable.md` describes how to run it, what is journaled and what is not.

mod error;
mod notify;
mod object;
mod records;
mod runs;
mod send_tool;
mod steps;
mod wire;

pub use error::DurableError;
pub use notify::{CANCEL_CHANNEL, notify_cancel, spawn_cancel_listener};
pub use object::{AgentSession, AgentSessionClient};
pub use runs::{RunGuard, RunRegistry};
pub use send_tool::send_to_session_tool;
pub use steps::RestateSteps;
pub use wire::{AnswerRequest, ApproveRequest, CancelReply, CancelRequest, RelayRequest, TurnReply, TurnRequest};
