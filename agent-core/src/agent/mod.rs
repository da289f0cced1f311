//! The agent: configuration, sessions, and turns ([`Run`]s) driven by the ReAct loop.

mod approval;
mod approval_api;
mod builder;
mod clarification;
mod config;
mod context;
mod cost;
mod drive;
mod drive_options;
mod emit;
mod error_kind;
mod event_log;
mod external_api;
mod external_tools;
mod genai_spans;
mod history;
mod hook_points;
mod hooks;
mod images;
mod observer_channel;
mod offered_tools;
mod parked_output;
mod parked_slot;
mod parked_watch;
mod pending_approval;
mod pending_tools;
mod question;
mod run;
mod session_spend;
mod sub_agent;
mod tools_exec;
mod turn;
mod turn_context;
mod typed_answer;
mod typed_api;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use tokio::runtime::Handle;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

pub use approval::{
    ApprovalCall, ApprovalDecision, ApprovalError, ApprovalRule, PendingApproval, RememberScope, SubAgentStep,
};
pub use builder::AgentBuilder;
pub use clarification::{CLARIFICATION_TOOL, Clarification, ClarificationError, ClarificationKind};
pub use config::{
    AgentConfig, DEFAULT_BUDGET_OUTPUT_TOKENS, DEFAULT_MAX_IMAGES, DEFAULT_MAX_TOOL_CALLS, DenialPolicy, Vision,
};
pub use drive_options::{DriveError, DriveOptions, TurnStart};
pub use emit::EventObserver;
pub use error_kind::{ErrorKind, UnknownErrorKind};
pub use hooks::{HookError, Hooks, ToolCallDecision, ToolCallInfo};
pub use observer_channel::{ObservedBatch, ObserverReceiver, ObserverSender, observer_channel};
pub use pending_tools::{ExternalCall, ExternalTool, ExternalToolError, ExternalToolResult, PendingToolCalls};
pub use run::{AnswerError, Outcome, OutcomeStatus, Run, RunEvents, RunState, RunStatus, SubAgentUsage};
pub use sub_agent::{AgentTool, DEFAULT_MAX_AGENT_DEPTH, agent_tool};

use crate::gate::{Gate, TurnOrigin};
use crate::message::Message;
use crate::provider::Provider;
use crate::session::SessionId;
use crate::store::{SessionInfo, Store, StoreError, StoredMessage};
use crate::tool::{ToolSet, ToolSetError};
use history::History;

/// Why an agent could not be built or a session opened.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// `AgentBuilder::build` was called without a provider.
    #[error("no provider configured: call AgentBuilder::provider(...) before build()")]
    NoProvider,
    /// No Tokio runtime to run turns on.
    #[error("no Tokio runtime: build the agent inside a Tokio runtime or pass one with AgentBuilder::runtime(...)")]
    NoRuntime,
    /// A tool could not be registered.
    #[error(transparent)]
    Tool(#[from] ToolSetError),
    /// The session does not exist.
    #[error("session {0} not found; create it with Agent::create_session")]
    SessionNotFound(SessionId),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A cost budget is set but the price of the provider's model is unknown.
    #[error(
        "a cost budget is set (max_run_cost_usd or max_session_cost_usd) but the price of model {0:?} is unknown: give it a price (AgentConfig::prices or AgentBuilder::prices)"
    )]
    Unpriced(String),
}

pub(crate) struct AgentInner {
    pub provider: Arc<dyn Provider>,
    /// Swapped whole by [`Agent::replace_tools`]; each model call takes a snapshot.
    tools: std::sync::RwLock<Arc<ToolSet>>,
    clarification: bool,
    pub store: Option<Arc<dyn Store>>,
    pub gate: Option<Arc<dyn Gate>>,
    pub system_prompt: Option<String>,
    pub config: AgentConfig,
    /// The prices the agent's calls are costed at.
    pub pricing: cost::Pricing,
    /// Whether the model is sent images: [`AgentConfig::vision`] resolved against the provider.
    pub takes_images: bool,
    /// The host's hooks, in order (empty: the loop skips every hook point).
    pub hooks: Arc<[Arc<dyn hooks::Hooks>]>,
    pub observers: Arc<[EventObserver]>,
    pub runtime: Handle,
    /// Remembered approval decisions.
    pub approval_rules: approval::ApprovalRules,
    sessions: Mutex<HashMap<SessionId, Weak<SessionState>>>,
}

impl AgentInner {
    pub(crate) fn tool_snapshot(&self) -> Arc<ToolSet> {
        match self.tools.read() {
            Ok(tools) => tools.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

/// Whether a session loaded from the store is the agent's shared one or a handle of its own.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Restore {
    /// Registered: [`Agent::open_session`] hands out the same state.
    Shared,
    /// Not registered ([`Agent::session_at`]).
    Detached,
}

/// One session's in-process state, shared by every handle to it. The async mutex makes turns
/// of a session run one after another.
pub(crate) struct SessionState {
    pub id: SessionId,
    pub history: Arc<tokio::sync::Mutex<History>>,
    /// The question a turn is parked on, if any.
    pub clarification: clarification::Slot,
    /// The approval a turn is parked on, if any.
    pub approval: approval::Slot,
    /// The external tool calls a turn is parked on, if any.
    pub external: external_tools::Slot,
    /// The external tools of the turn running or parked, if it has any, for the turn that
    /// continues it; stored with the parked turn, like `parked_output`.
    pub parked_tools: Mutex<Option<Arc<[pending_tools::ExternalTool]>>>,
    /// The output schema of the typed turn running or parked (on a question or an approval),
    /// for the turn that continues it; stored with the parked turn, so restored with it after
    /// a restart.
    pub parked_output: Mutex<Option<crate::provider::OutputSchema>>,
    /// What the session's finished turns spent in this process.
    pub spend: Mutex<crate::pricing::Spend>,
}

impl SessionState {
    /// The schema of the typed turn running or parked, if any.
    pub(crate) fn parked_output(&self) -> Option<crate::provider::OutputSchema> {
        self.parked_output.lock().ok().and_then(|kept| kept.clone())
    }

    /// The external tools of the turn running or parked, if any.
    pub(crate) fn parked_tools(&self) -> Option<Arc<[pending_tools::ExternalTool]>> {
        self.parked_tools.lock().ok().and_then(|kept| kept.clone())
    }

    fn new(id: SessionId, history: History) -> Self {
        SessionState {
            id,
            history: Arc::new(tokio::sync::Mutex::new(history)),
            clarification: clarification::Slot::default(),
            approval: approval::Slot::default(),
            external: external_tools::Slot::default(),
            parked_tools: Mutex::new(None),
            parked_output: Mutex::new(None),
            spend: Mutex::new(crate::pricing::Spend::default()),
        }
    }
}

/// An LLM agent: a provider, tools, an optional store and gate, and the loop's configuration.
/// Cheap to clone; clones share everything.
///
/// ```
/// use agent_core::{Agent, ScriptedProvider, ScriptedReply};
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = Agent::builder()
///     .provider(ScriptedProvider::new([ScriptedReply::text("Hello!").into()]))
///     .system_prompt("You are helpful.")
///     .build()?;
/// let session = agent.create_session().await?;
/// let outcome = session.send("Hi").await;
/// assert_eq!(outcome.final_text.as_deref(), Some("Hello!"));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Agent {
    inner: Arc<AgentInner>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("provider", &self.inner.provider.id())
            .field("tools", &self.inner.tool_snapshot())
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// Starts building an agent.
    pub fn builder() -> AgentBuilder {
        AgentBuilder::default()
    }

    /// A snapshot of the agent's tools.
    pub fn tools(&self) -> Arc<ToolSet> {
        self.inner.tool_snapshot()
    }

    /// Replaces the agent's tools (for example when an MCP server's tool list changes). Turns
    /// already running keep the snapshot their current model call was made with; the next
    /// model call sees the new set. The built-in `ask_clarification` tool is kept when enabled.
    pub fn replace_tools(&self, tools: ToolSet) -> Result<(), ToolSetError> {
        let mut tools = tools;
        if self.inner.clarification && !tools.has(CLARIFICATION_TOOL) {
            tools.register(clarification::AskClarificationTool::new())?;
        }
        if !self.inner.takes_images {
            images::drop_image_tools(&mut tools);
        }
        if let Ok(mut current) = self.inner.tools.write() {
            *current = Arc::new(tools);
        }
        Ok(())
    }

    /// The agent's configuration.
    pub fn config(&self) -> &AgentConfig {
        &self.inner.config
    }

    /// Whether the model is sent images: [`AgentConfig::vision`], with `auto` resolved by
    /// what the provider knows of its model. When not, tools that return images are not
    /// offered and images in the history are replaced by a note in every request.
    pub fn takes_images(&self) -> bool {
        self.inner.takes_images
    }

    /// The prices the agent's model calls are costed at: the built-in table
    /// ([`PriceTable::builtin`](crate::PriceTable::builtin)) with
    /// [`AgentConfig::prices`] and [`AgentBuilder::prices`] on top.
    pub fn prices(&self) -> &crate::PriceTable {
        self.inner.pricing.table()
    }

    /// The agent's store, if it has one.
    pub fn store(&self) -> Option<&Arc<dyn Store>> {
        self.inner.store.as_ref()
    }

    /// Creates a new session with a random id.
    pub async fn create_session(&self) -> Result<Session, AgentError> {
        let id = SessionId::new_random();
        let Some(store) = &self.inner.store else {
            return self.create_session_with_id(id).await;
        };
        store.create_generated_session(&SessionInfo::new(id.clone())).await?;
        Ok(self.attach(id, History::default()))
    }

    /// Creates a new session with the given id.
    pub async fn create_session_with_id(&self, id: SessionId) -> Result<Session, AgentError> {
        if let Some(store) = &self.inner.store {
            store.create_session(&SessionInfo::new(id.clone())).await?;
        } else if self.live_session(&id).is_some() {
            return Err(StoreError::AlreadyExists(id).into());
        }
        Ok(self.attach(id, History::default()))
    }

    /// Opens an existing session: one this agent already has open, or one in the store
    /// (its history is loaded, and a turn interrupted by a crash is repaired first).
    pub async fn open_session(&self, id: &SessionId) -> Result<Session, AgentError> {
        if let Some(state) = self.live_session(id) {
            return Ok(Session {
                agent: self.clone(),
                state,
            });
        }
        let store = self.stored_session(id).await?;
        let history = History::load(store.as_ref(), id).await?;
        self.restore(store, id, history, Restore::Shared).await
    }

    /// The store, when it holds session `id`.
    async fn stored_session(&self, id: &SessionId) -> Result<&Arc<dyn Store>, AgentError> {
        let Some(store) = &self.inner.store else {
            return Err(AgentError::SessionNotFound(id.clone()));
        };
        if store.session(id).await?.is_none() {
            return Err(AgentError::SessionNotFound(id.clone()));
        }
        Ok(store)
    }

    /// A session loaded from the store: what it spent, the question or approval it is parked
    /// on, and its history repaired after a crash.
    async fn restore(
        &self,
        store: &Arc<dyn Store>,
        id: &SessionId,
        mut history: History,
        how: Restore,
    ) -> Result<Session, AgentError> {
        let spend = session_spend::load(store.as_ref(), id, &history).await?;
        let parked_run = store.parked_run(id).await?;
        let mut parked = parked_run.as_ref().and_then(clarification::from_parked);
        let mut approval = parked_run.as_ref().and_then(approval::from_parked);
        let mut external = parked_run.as_ref().and_then(external_tools::from_parked);
        if how == Restore::Detached {
            // Parked by a later turn than the history loaded (an attempt an engine replays
            // from an earlier point): not this history's to wait on.
            parked = parked.filter(|q| history.has_call(&q.call_id));
            approval = approval.filter(|a| approval::waiting_ids(a).iter().all(|id| history.has_call(id)));
            external = external.filter(|e| external_tools::waiting_ids(e).iter().all(|id| history.has_call(id)));
        }
        // A typed turn parked on any stays typed when it continues, and offers the same
        // external tools.
        let output = parked_run.as_ref().and_then(parked_output::read);
        let offered = parked_run.as_ref().and_then(parked_output::read_tools);
        // Calls a parked turn holds back are waiting, not interrupted.
        let mut waiting: Vec<String> = parked.iter().map(|q| q.call_id.clone()).collect();
        waiting.extend(approval.iter().flat_map(approval::waiting_ids));
        waiting.extend(external.iter().flat_map(external_tools::waiting_ids));
        history.repair_interrupted(Some(store), id, &waiting).await?;
        let session = match how {
            Restore::Shared => self.attach(id.clone(), history),
            Restore::Detached => Session {
                agent: self.clone(),
                state: Arc::new(SessionState::new(id.clone(), history)),
            },
        };
        if let Ok(mut kept) = session.state.spend.lock() {
            *kept = spend;
        }
        if parked.is_some() || approval.is_some() || external.is_some() {
            if let Ok(mut kept) = session.state.parked_output.lock() {
                *kept = output;
            }
            if let Ok(mut kept) = session.state.parked_tools.lock() {
                *kept = offered;
            }
        }
        // The turn was parked when the process stopped: keep waiting.
        if let Some(question) = parked {
            clarification::restore(&self.inner, &session.state, question);
        }
        if let Some(approval) = approval {
            approval::restore(&self.inner, &session.state, approval);
        }
        if let Some(external) = external {
            external_tools::restore(&session.state, external);
        }
        Ok(session)
    }

    fn live_session(&self, id: &SessionId) -> Option<Arc<SessionState>> {
        let sessions = self.inner.sessions.lock().ok()?;
        sessions.get(id).and_then(Weak::upgrade)
    }

    fn attach(&self, id: SessionId, history: History) -> Session {
        let state = Arc::new(SessionState::new(id.clone(), history));
        if let Ok(mut sessions) = self.inner.sessions.lock() {
            sessions.retain(|_, s| s.strong_count() > 0);
            sessions.insert(id, Arc::downgrade(&state));
        }
        Session {
            agent: self.clone(),
            state,
        }
    }
}

/// A conversation with the agent. Turns of one session run one after another.
#[derive(Clone)]
pub struct Session {
    agent: Agent,
    state: Arc<SessionState>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("id", &self.state.id).finish()
    }
}

impl Session {
    /// The session's id.
    pub fn id(&self) -> &SessionId {
        &self.state.id
    }

    /// The agent the session belongs to.
    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// What the session's finished turns cost in US dollars (sub-agents and compaction's
    /// summaries included); `None` when a call's price was unknown. With a store it is kept
    /// there, so a session opened again after a restart goes on from what it had spent, and
    /// so does its budget.
    pub fn cost_usd(&self) -> Option<f64> {
        self.state.spend.lock().ok().and_then(|spend| spend.total_usd())
    }

    /// Starts a turn with a user text message. Returns at once; the turn runs in the
    /// background. If another turn of this session is running, this one starts after it.
    pub fn send(&self, text: impl Into<String>) -> Run {
        self.send_message(Message::user(text))
    }

    /// Starts a turn with any user message (for example text and images).
    pub fn send_message(&self, message: Message) -> Run {
        self.send_with_cancel(message, CancellationToken::new())
    }

    /// Starts a turn whose cancellation is tied to `cancel` (cancel it, or a parent of it, to
    /// stop the turn). A token that is already cancelled ends the turn `cancelled` at once.
    pub fn send_with_cancel(&self, message: Message, cancel: CancellationToken) -> Run {
        self.send_from(message, TurnOrigin::Person, cancel)
    }

    /// Starts a turn for a message that `origin` sent. A message from another tab's agent
    /// ([`TurnOrigin::Tab`]) does not carry the person's authority: the turn's `run_started`
    /// event and every gate request it causes name that tab.
    pub fn send_from(&self, message: Message, origin: TurnOrigin, cancel: CancellationToken) -> Run {
        let input = turn::TurnInput::User {
            message,
            origin,
            output: None,
            tools: None,
        };
        self.start(input, cancel, 0)
    }

    /// A turn of a sub-agent, `depth` agents below the one that started it.
    pub(crate) fn send_nested(
        &self,
        message: Message,
        origin: TurnOrigin,
        output: Option<crate::provider::OutputSchema>,
        cancel: CancellationToken,
        depth: u32,
    ) -> Run {
        let input = turn::TurnInput::User {
            message,
            origin,
            output: output.map(Box::new),
            tools: None,
        };
        self.start(input, cancel, depth)
    }

    /// The question a turn of this session is parked on, if any.
    pub fn pending_clarification(&self) -> Option<Clarification> {
        self.state.clarification.get()
    }

    /// Answers the pending question and continues the parked turn in a new [`Run`] (this
    /// works after a restart too: the question is persisted). An answer that does not fit the
    /// question (not one of the options, empty input, not yes/no) is refused and the question
    /// stays pending.
    pub fn answer_clarification(&self, clarification_id: &str, answer: &str) -> Result<Run, ClarificationError> {
        let input = self.answer_input(clarification_id, answer)?;
        Ok(self.start(input, CancellationToken::new(), 0))
    }

    /// The turn an answer to the pending question starts, when the answer fits.
    fn answer_input(&self, clarification_id: &str, answer: &str) -> Result<turn::TurnInput, ClarificationError> {
        let question = self
            .state
            .clarification
            .get()
            .filter(|q| q.id == clarification_id)
            .ok_or_else(|| ClarificationError::NotPending(clarification_id.to_owned()))?;
        if crate::store::now_millis() > question.expires_at_ms {
            return Err(ClarificationError::Expired);
        }
        let answer = question.check_answer(answer)?;
        Ok(turn::TurnInput::Answer {
            clarification_id: clarification_id.to_owned(),
            answer,
        })
    }

    /// Dismisses the pending question without answering it (the person closed it): the
    /// parked `ask_clarification` call gets a "dismissed" result, the question is no longer
    /// pending (in the store too, so this works after a restart), and `clarification_dismissed`
    /// goes to the agent's observers. No turn starts: the model reads the dismissal with the
    /// next message. Waits for a running turn of the session to end first.
    pub async fn dismiss_clarification(&self, clarification_id: &str) -> Result<(), ClarificationError> {
        clarification::dismiss(&self.agent.inner, &self.state, clarification_id).await
    }

    fn start(&self, input: turn::TurnInput, cancel: CancellationToken, depth: u32) -> Run {
        let inner = &self.agent.inner;
        let (writer, log) = event_log::event_log(inner.config.event_buffer);
        let (outcome_tx, outcome_rx) = watch::channel(None);
        let status = Arc::new(Mutex::new(RunStatus::default()));
        let run_id = uuid::Uuid::new_v4().to_string();
        let run = Run {
            id: run_id.clone(),
            session_id: self.state.id.clone(),
            events: log,
            events_read: std::sync::atomic::AtomicBool::new(false),
            status: status.clone(),
            cancel: cancel.clone(),
            outcome: outcome_rx,
        };
        let emitter = emit::Emitter {
            session_id: self.state.id.clone(),
            log: Some(writer),
            observers: inner.observers.clone(),
            status,
        };
        let agent = inner.clone();
        let state = self.state.clone();
        let slot = turn::TurnSlot::queue(&self.state.history);
        // Boxed: the turn's future is several kilobytes, and the task would copy it whole when
        // spawned and again when it finishes; one allocation per turn costs less. Boxed on its
        // first poll, inside a small future holding the arguments: a future is moved whole,
        // used or not, and made here the turn's was copied twice on the calling thread, which
        // for a binding is the host's own (`callgrind`: 8.8k instructions per turn).
        let turn = Box::pin(async move {
            let outcome = Box::pin(turn::run_turn(
                agent, state, slot, input, run_id, cancel, depth, emitter,
            ))
            .await;
            let _ = outcome_tx.send(Some(outcome));
        });
        // The turn's span is a child of the caller's (a sub-agent's, of the calling tool's).
        let caller = tracing::Span::current();
        if caller.is_disabled() {
            inner.runtime.spawn(turn);
        } else {
            inner.runtime.spawn(tracing::Instrument::instrument(turn, caller));
        }
        run
    }

    /// Every stored message of the session, including those hidden from the model, with
    /// sequence numbers. Without a store, the in-memory history is numbered from 1.
    pub async fn messages(&self) -> Result<Vec<StoredMessage>, AgentError> {
        if let Some(store) = &self.agent.inner.store {
            return Ok(store.load_messages(&self.state.id, 0).await?);
        }
        let history = self.state.history.lock().await;
        Ok(history
            .messages
            .iter()
            .enumerate()
            .map(|(i, m)| StoredMessage {
                seq: i as u64 + 1,
                message: m.clone(),
                created_at_ms: 0,
            })
            .collect())
    }

    /// The messages the model would see on the next turn.
    pub async fn model_history(&self) -> Vec<Message> {
        self.state.history.lock().await.next_turn_view()
    }
}
