//! # agent-agui
//!
//! [AG-UI](https://docs.ag-ui.com) for agent-core: a pure mapping from a run's
//! [`AgentEvent`](agent_core::AgentEvent)s to AG-UI events ([`EventMapper`]), the AG-UI wire
//! types ([`AguiEvent`], [`RunAgentInput`]), and an axum endpoint ([`AguiEndpoint`]) that takes
//! `RunAgentInput` and streams the run's events over SSE, with `threadId` mapped to a stored
//! session ([`session_id_for_thread`]).
//!
//! A clarification question (`ask_clarification`) ends the run with an interrupt outcome; the
//! client answers it with a new run whose `resume` entry carries `{"answer": "..."}`. A turn
//! parked for the person's approval ends with one interrupt per waiting call (reason
//! `tool_approval`), answered by `{"approved": true|false, ...}`. The client's own tools
//! (`RunAgentInput.tools`) are offered to the model; a call of one ends the run for the client
//! to run it, and the client's next run, ending with the `tool` messages, continues the turn.
//! Aborting the request cancels the run. See `docs/agui.md` for the whole mapping.
//!
//! ```no_run
//! use agent_core::{Agent, MemoryStore, ScriptedProvider, ScriptedReply};
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let agent = Agent::builder()
//!     .provider(ScriptedProvider::new([ScriptedReply::text("Hello!").into()]))
//!     .store(MemoryStore::new())
//!     .clarification(true)
//!     .build()?;
//! let app = agent_agui::router(agent);
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! axum::serve(listener, app).await?;
//! # Ok(()) }
//! ```

mod approval;
mod events;
mod input;
mod iso_time;
mod mapping;
mod resume_approval;
mod resume_tools;
mod router;
mod start;
mod started;
mod thread;

pub use approval::{APPROVAL_REASON, approval_interrupts};
pub use events::{AguiEvent, Interrupt, RunOutcome, TokenUsage};
pub use input::{
    BadInput, ClientTool, ContextEntry, InputMessage, MAX_CONTEXT_BYTES, MAX_ID_LEN, ResumeEntry, ResumeStatus,
    RunAgentInput,
};
pub use mapping::{CLARIFICATION_REASON, EventMapper, PROTOCOL_VERSION, interrupt};
pub use router::{AguiEndpoint, DEFAULT_MAX_BODY_BYTES, router};
pub use thread::{open_thread, session_id_for_thread};
