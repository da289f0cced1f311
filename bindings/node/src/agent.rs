//! Agents, their builder, and sessions.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use agent_core::{
    Agent, AgentBuilder, AgentConfig, CancellationToken, MemoryStore, Message, Session, SessionId, Store,
};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

use crate::callbacks::{AbortFn, GateFn, JsGate, JsTool, ToolDefinition};
use crate::convert::{Json, js};
use crate::dispatch::{Dispatcher, NativeToolDispatcher};
use crate::error::{agent_error, coded};
use crate::hooks::{HookFn, HookInput, HookReply, JsHooks};
use crate::provider::NativeProvider;
use crate::run::NativeRun;

/// Events for the JS observer: what waited, oldest first, and how many were dropped before them
/// because the JS thread fell behind.
#[napi(object, object_from_js = false)]
pub struct EventBatch {
    /// The events.
    #[napi(ts_type = "Array<any>")]
    pub events: Vec<Json>,
    /// How many events were dropped since the previous batch (streamed tokens first).
    pub dropped: f64,
}

/// The observer: called with nothing from the emitting thread, it takes the waiting batch on
/// the JS thread (weak, not callee-handled).
type ObserverFn = ThreadsafeFunction<(), (), EventBatch, Status, false, true>;

/// A hook wrapper function as the JS layer hands it over.
type HookFunction<'a> = Function<'a, HookInput, Either<Promise<HookReply>, HookReply>>;

/// A session store shared by agents.
#[napi]
pub struct NativeStore {
    pub(crate) inner: Arc<dyn Store>,
    pub(crate) sqlite: Option<agent_store::SqliteStore>,
}

#[napi]
impl NativeStore {
    /// A store that keeps sessions in this process's memory.
    #[napi(factory)]
    pub fn memory() -> NativeStore {
        NativeStore {
            inner: Arc::new(MemoryStore::new()),
            sqlite: None,
        }
    }

    /// The ids of stored sessions (newest first when the store knows).
    #[napi]
    pub async fn session_ids(&self) -> Result<Vec<String>> {
        let sessions = self.inner.list_sessions().await.map_err(|e| coded("store", e))?;
        Ok(sessions.into_iter().map(|s| s.id.to_string()).collect())
    }
}

/// Everything an agent is made of, kept so that more agents can be built from it (the tab hub
/// builds one per tab).
#[derive(Clone, Default)]
pub(crate) struct Recipe {
    provider: Option<Arc<dyn agent_core::Provider>>,
    store: Option<Arc<dyn Store>>,
    tools: Vec<Arc<dyn agent_core::Tool>>,
    gate: Option<Arc<dyn agent_core::Gate>>,
    observers: Vec<agent_core::EventObserver>,
    system_prompt: Option<String>,
    config: Option<AgentConfig>,
    clarification: bool,
    hooks: Vec<Arc<dyn agent_core::Hooks>>,
}

impl Recipe {
    /// The tools (what an MCP server built from this recipe serves).
    pub(crate) fn tools(&self) -> Vec<Arc<dyn agent_core::Tool>> {
        self.tools.clone()
    }

    /// The gate.
    pub(crate) fn gate(&self) -> Option<Arc<dyn agent_core::Gate>> {
        self.gate.clone()
    }

    /// An `AgentBuilder` with every piece (the store too, when `with_store`).
    pub(crate) fn builder(&self, with_store: bool) -> AgentBuilder {
        let mut b = Agent::builder();
        if let Some(p) = &self.provider {
            b = b.provider_arc(p.clone());
        }
        if with_store && let Some(s) = &self.store {
            b = b.store_arc(s.clone());
        }
        for t in &self.tools {
            b = b.tool_arc(t.clone());
        }
        if let Some(g) = &self.gate {
            b = b.gate_arc(g.clone());
        }
        for o in &self.observers {
            let o = o.clone();
            b = b.on_event(move |e| o(e));
        }
        if let Some(p) = &self.system_prompt {
            b = b.system_prompt(p.clone());
        }
        if let Some(c) = &self.config {
            b = b.config(c.clone());
        }
        for h in &self.hooks {
            b = b.hooks_arc(h.clone());
        }
        b.clarification(self.clarification)
    }
}

/// Builds a [`NativeAgent`] piece by piece (the JS `Agent` constructor drives it).
#[napi]
pub struct NativeAgentBuilder {
    pub(crate) recipe: Recipe,
    abort: Option<Arc<AbortFn>>,
    js_tools: Vec<(ToolDefinition, Dispatcher, u32)>,
    next_invocation: Arc<AtomicU32>,
}

#[napi]
impl NativeAgentBuilder {
    /// An empty builder.
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        NativeAgentBuilder {
            recipe: Recipe::default(),
            abort: None,
            js_tools: Vec::new(),
            next_invocation: Arc::new(AtomicU32::new(1)),
        }
    }

    /// Sets the provider.
    #[napi]
    pub fn provider(&mut self, provider: &NativeProvider) {
        self.recipe.provider = Some(provider.inner.clone());
    }

    /// Sets the store.
    #[napi]
    pub fn store(&mut self, store: &NativeStore) {
        self.recipe.store = Some(store.inner.clone());
    }

    /// Adds every tool of a native tool set (fs, shell, page tools).
    #[napi]
    pub fn tool_set(&mut self, set: &crate::toolsets::NativeToolSet) {
        self.recipe.tools.extend(set.tools.iter().cloned());
    }

    /// Adds a JS tool, which `dispatcher` runs under `index`.
    #[napi]
    pub fn tool(&mut self, definition: ToolDefinition, dispatcher: &NativeToolDispatcher, index: u32) {
        self.js_tools.push((definition, dispatcher.user(), index));
    }

    /// Sets the function that aborts a JS tool invocation's AbortSignal.
    #[napi(ts_args_type = "abort: (invocation: number) => void")]
    pub fn abort_hook(&mut self, abort: Function<'_, u32, ()>) -> Result<()> {
        let tsfn: AbortFn = abort.build_threadsafe_function().weak::<true>().build()?;
        self.abort = Some(Arc::new(tsfn));
        Ok(())
    }

    /// Sets the consent gate.
    #[napi(ts_args_type = "gate: (input: GateInput) => GateReply | Promise<GateReply>")]
    pub fn gate(
        &mut self,
        gate: Function<
            '_,
            crate::callbacks::GateInput,
            Either<crate::callbacks::GateReply, Promise<crate::callbacks::GateReply>>,
        >,
    ) -> Result<()> {
        let tsfn: GateFn = gate.build_threadsafe_function().weak::<true>().build()?;
        self.recipe.gate = Some(Arc::new(JsGate(tsfn)));
        Ok(())
    }

    /// Adds an observer that sees the events of every run in batches, in order. Events wait for
    /// it in a queue of the `eventBuffer` set before (1 024 by default) that drops streamed
    /// tokens first when the JS thread falls behind; a batch says how many were dropped before
    /// it. The JS thread is woken from the thread that emits the first event of a batch, so an
    /// event reaches the observer before whatever that thread hands the JS thread next (a
    /// run's outcome), and the batch is taken when the observer is called, so one is in
    /// flight at most.
    #[napi(ts_args_type = "observer: (batch: EventBatch) => void")]
    pub fn on_event(&mut self, observer: Function<'_, EventBatch, ()>) -> Result<()> {
        let capacity = self
            .recipe
            .config
            .as_ref()
            .map_or_else(|| AgentConfig::default().event_buffer, |c| c.event_buffer);
        let (tx, rx) = agent_core::observer_channel::<Json>(capacity);
        let rx = std::sync::Mutex::new(rx);
        let tsfn: ObserverFn = observer
            .build_threadsafe_function::<()>()
            .weak::<true>()
            .build_callback(move |_| {
                let batch = rx.lock().ok().and_then(|mut rx| rx.try_recv());
                Ok(batch.map_or_else(
                    || EventBatch {
                        events: Vec::new(),
                        dropped: 0.0,
                    },
                    |b| EventBatch {
                        events: b.events,
                        dropped: b.dropped as f64,
                    },
                ))
            })?;
        self.recipe.observers.push(Arc::new(move |ev| {
            if tx.send_with(ev, crate::convert::event) {
                tsfn.call((), ThreadsafeFunctionCallMode::NonBlocking);
            }
        }));
        Ok(())
    }

    /// Adds one hooks object: the wrappers of the methods it has (`undefined` for the others),
    /// which answer `{ error }` or `{ json }` (what the method returned, as JSON text). An
    /// object with none of the methods is refused.
    #[napi(
        ts_args_type = "beforeModelCall: ((input: HookInput) => Promise<HookReply> | HookReply) | undefined | null, afterModelCall: ((input: HookInput) => Promise<HookReply> | HookReply) | undefined | null, beforeToolCall: ((input: HookInput) => Promise<HookReply> | HookReply) | undefined | null, afterToolCall: ((input: HookInput) => Promise<HookReply> | HookReply) | undefined | null, turnEnded: ((input: HookInput) => Promise<HookReply> | HookReply) | undefined | null"
    )]
    pub fn hooks(
        &mut self,
        before_model_call: Option<HookFunction<'_>>,
        after_model_call: Option<HookFunction<'_>>,
        before_tool_call: Option<HookFunction<'_>>,
        after_tool_call: Option<HookFunction<'_>>,
        turn_ended: Option<HookFunction<'_>>,
    ) -> Result<()> {
        let tsfn = |f: Option<HookFunction<'_>>| -> Result<Option<HookFn>> {
            f.map(|f| f.build_threadsafe_function().weak::<true>().build())
                .transpose()
        };
        let hooks = JsHooks::new(
            tsfn(before_model_call)?,
            tsfn(after_model_call)?,
            tsfn(before_tool_call)?,
            tsfn(after_tool_call)?,
            tsfn(turn_ended)?,
        )
        .ok_or_else(|| {
            coded(
                "invalid_argument",
                format!("a hooks object needs at least one of {}", crate::hooks::method_names()),
            )
        })?;
        self.recipe.hooks.push(Arc::new(hooks));
        Ok(())
    }

    /// Offers the model the built-in `ask_clarification` tool (a turn that calls it parks in
    /// `awaiting_user` until the session's question is answered).
    #[napi]
    pub fn clarification(&mut self, enabled: bool) {
        self.recipe.clarification = enabled;
    }

    /// Sets the system prompt.
    #[napi]
    pub fn system_prompt(&mut self, prompt: String) {
        self.recipe.system_prompt = Some(prompt);
    }

    /// Sets the loop's limits: an `AgentConfig` options object (camelCase keys of the options
    /// format; unset keys keep their defaults, unknown ones are refused; `maxToolCalls: null`
    /// is no cap).
    #[napi(ts_args_type = "config: object")]
    pub fn config(&mut self, config: Unknown<'_>) -> Result<()> {
        const WHAT: &str = "Agent config";
        let value = crate::options::value_of(WHAT, config)?;
        self.recipe.config = Some(crate::options::parse_named::<AgentConfig>(WHAT, "AgentConfig", value)?);
        Ok(())
    }

    /// Turns the JS tools added so far into native tools (`build` does it too).
    #[napi]
    pub fn seal(&mut self) -> Result<()> {
        for (def, dispatcher, index) in self.js_tools.drain(..) {
            let tool = JsTool::new(def, dispatcher, index, self.abort.clone(), self.next_invocation.clone())?;
            self.recipe.tools.push(Arc::new(tool));
        }
        Ok(())
    }

    /// Builds the agent. The builder can be used again.
    #[napi]
    pub fn build(&mut self) -> Result<NativeAgent> {
        self.seal()?;
        let handle = napi::bindgen_prelude::within_runtime_if_available(tokio::runtime::Handle::current);
        let agent = self.recipe.builder(true).runtime(handle).build().map_err(agent_error)?;
        Ok(NativeAgent {
            inner: agent,
            root: CancellationToken::new(),
            closed: Arc::new(AtomicBool::new(false)),
        })
    }
}

/// An agent: provider, tools, store, gate and configuration.
#[napi]
pub struct NativeAgent {
    inner: Agent,
    root: CancellationToken,
    closed: Arc<AtomicBool>,
}

#[napi]
impl NativeAgent {
    /// The core agent (what `agentTool` offers to another agent).
    pub(crate) fn agent(&self) -> &Agent {
        &self.inner
    }

    pub(crate) fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(coded("closed", "the agent is closed"));
        }
        Ok(())
    }

    fn wrap(&self, session: Session) -> NativeSession {
        NativeSession::detached(session, self.root.clone(), self.closed.clone())
    }

    /// Creates a session (with a random id unless one is given): the session itself when
    /// that needs no waiting (no store, or one that queues the write), else a promise of it.
    #[napi(ts_return_type = "NativeSession | Promise<NativeSession>")]
    pub fn create_session<'env>(
        &self,
        env: &'env Env,
        id: Option<String>,
    ) -> Result<Either<NativeSession, PromiseRaw<'env, NativeSession>>> {
        self.check_open()?;
        let id = id
            .map(|id| SessionId::parse(&id).map_err(|e| coded("invalid_argument", e)))
            .transpose()?;
        let agent = self.inner.clone();
        let (root, closed) = (self.root.clone(), self.closed.clone());
        crate::eager::value_or_promise(env, async move {
            let session = match id {
                Some(id) => agent.create_session_with_id(id).await,
                None => agent.create_session().await,
            }
            .map_err(agent_error)?;
            Ok(NativeSession::detached(session, root, closed))
        })
    }

    /// Opens an existing session (live in this agent, or in the store).
    #[napi]
    pub async fn open_session(&self, id: String) -> Result<NativeSession> {
        self.check_open()?;
        let id: SessionId = SessionId::parse(&id).map_err(|e| coded("invalid_argument", e))?;
        let session = self.inner.open_session(&id).await.map_err(agent_error)?;
        Ok(self.wrap(session))
    }

    /// The names of the agent's tools.
    #[napi]
    pub fn tool_names(&self) -> Vec<String> {
        self.inner.tools().iter().map(|t| t.spec().name.clone()).collect()
    }

    /// Whether the model is sent images: the config's `vision`, with `auto` resolved by what
    /// the provider knows of its model. When not, tools that return images (page_screenshot)
    /// are not offered and images in requests are replaced by a note.
    #[napi(getter)]
    pub fn takes_images(&self) -> bool {
        self.inner.takes_images()
    }

    /// Whether [`Self::close`] was called.
    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Closes the agent: running turns are cancelled and new ones refused.
    #[napi]
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.root.cancel();
    }
}

/// A refused clarification answer or dismissal, with its code.
pub(crate) fn clarification_error(e: agent_core::ClarificationError) -> Error {
    use agent_core::ClarificationError as E;
    let code = match &e {
        E::NotPending(_) => "clarification_not_pending",
        E::InvalidAnswer(_) => "clarification_invalid_answer",
        E::Expired => "clarification_expired",
        _ => "store",
    };
    coded(code, e)
}

/// A conversation with the agent.
#[napi]
pub struct NativeSession {
    inner: Session,
    root: CancellationToken,
    closed: Arc<AtomicBool>,
}

impl NativeSession {
    pub(crate) fn detached(inner: Session, root: CancellationToken, closed: Arc<AtomicBool>) -> Self {
        NativeSession { inner, root, closed }
    }

    /// The core session.
    pub(crate) fn session(&self) -> &Session {
        &self.inner
    }

    /// Refuses when the agent is closed.
    pub(crate) fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(coded("closed", "the agent is closed"));
        }
        Ok(())
    }
}

#[napi]
impl NativeSession {
    /// The session's id.
    #[napi(getter)]
    pub fn id(&self) -> String {
        self.inner.id().to_string()
    }

    /// Starts a turn with a user text message. `cancelled` starts it already cancelled (an
    /// aborted AbortSignal).
    #[napi]
    pub fn send(&self, text: String, cancelled: Option<bool>) -> Result<NativeRun> {
        self.start(Message::user(text), cancelled.unwrap_or(false))
    }

    /// Starts a turn with a whole user message (`{role, content: [...]}`, plain JSON data).
    #[napi(ts_args_type = "message: object, cancelled?: boolean | undefined | null")]
    pub fn send_message(&self, message: Unknown<'_>, cancelled: Option<bool>) -> Result<NativeRun> {
        let mut value = crate::options::value_of("message", message)?;
        crate::convert::integral_numbers(&mut value);
        let message: Message = serde_json::from_value(crate::convert::snake_keys(value))
            .map_err(|e| coded("invalid_argument", format!("message: {e}")))?;
        self.start(message, cancelled.unwrap_or(false))
    }

    /// Starts a typed turn: the final answer must match the JSON Schema `schema` (plain JSON
    /// data, keys kept as they are) named `name`; the outcome's `structured` holds it.
    /// `message` is text or a whole user message.
    #[napi(
        ts_args_type = "message: string | object, name: string, schema: object, cancelled?: boolean | undefined | null, strict?: boolean | undefined | null"
    )]
    pub fn send_with_schema(
        &self,
        message: Unknown<'_>,
        name: String,
        schema: Unknown<'_>,
        cancelled: Option<bool>,
        strict: Option<bool>,
    ) -> Result<NativeRun> {
        let mut value = crate::options::value_of("message", message)?;
        let message = if let serde_json::Value::String(text) = &value {
            Message::user(text.clone())
        } else {
            crate::convert::integral_numbers(&mut value);
            serde_json::from_value(crate::convert::snake_keys(value))
                .map_err(|e| coded("invalid_argument", format!("message: {e}")))?
        };
        let mut schema = crate::options::value_of("schema", schema)?;
        crate::convert::integral_numbers(&mut schema);
        let schema = agent_core::OutputSchema::new(name, schema).with_strict(strict.unwrap_or(false));
        self.begin(cancelled.unwrap_or(false), |session, token| {
            session.send_with_schema(message, schema, token)
        })
    }

    fn start(&self, message: Message, cancelled: bool) -> Result<NativeRun> {
        self.begin(cancelled, |session, token| session.send_with_cancel(message, token))
    }

    /// Starts a run with `send` unless the agent is closed.
    fn begin(
        &self,
        cancelled: bool,
        send: impl FnOnce(&Session, CancellationToken) -> agent_core::Run,
    ) -> Result<NativeRun> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(coded("closed", "the agent is closed"));
        }
        let token = self.root.child_token();
        if cancelled {
            token.cancel();
        }
        Ok(NativeRun::new(send(&self.inner, token)))
    }

    /// The question a turn of this session is parked on, if any.
    #[napi(ts_return_type = "any")]
    pub fn pending_clarification(&self) -> Option<Json> {
        self.inner.pending_clarification().map(|q| js(&q))
    }

    /// Answers the pending question; the parked turn goes on in a new run.
    #[napi]
    pub fn answer_clarification(&self, clarification_id: String, answer: String) -> Result<NativeRun> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(coded("closed", "the agent is closed"));
        }
        self.inner
            .answer_clarification(&clarification_id, &answer)
            .map(NativeRun::new)
            .map_err(clarification_error)
    }

    /// Dismisses the pending question without answering it (the person closed it): no turn
    /// starts, and the model reads the dismissal with the next message.
    #[napi]
    pub async fn dismiss_clarification(&self, clarification_id: String) -> Result<()> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(coded("closed", "the agent is closed"));
        }
        self.inner
            .dismiss_clarification(&clarification_id)
            .await
            .map_err(clarification_error)
    }

    /// Every stored message of the session, with sequence numbers.
    #[napi(ts_return_type = "Promise<any[]>")]
    pub async fn messages(&self) -> Result<Json> {
        let messages = self.inner.messages().await.map_err(agent_error)?;
        Ok(js(&messages))
    }

    /// The messages the model would see on the next turn.
    #[napi(ts_return_type = "Promise<any[]>")]
    pub async fn model_history(&self) -> Result<Json> {
        Ok(js(&self.inner.model_history().await))
    }

    /// What the session's finished turns cost in US dollars in this process; null when a
    /// call's price was unknown.
    #[napi]
    pub fn cost_usd(&self) -> Option<f64> {
        self.inner.cost_usd()
    }
}
