//! Agents, their builder, and sessions.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use agent_core::{
    Agent, AgentBuilder, AgentConfig, CancellationToken, DenialPolicy, MemoryStore, Message, Session, SessionId, Store,
};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi_derive::napi;
use serde_json::Value;

use crate::callbacks::{AbortFn, Callback, GateFn, JsGate, JsTool, ToolDefinition, ToolFn};
use crate::error::{agent_error, coded};
use crate::provider::NativeProvider;
use crate::run::NativeRun;

/// The loop's limits, from JS. Unset fields keep the defaults.
#[napi(object)]
#[derive(Default)]
pub struct AgentConfigInput {
    /// Model calls per turn before the turn ends `capped` (default 100).
    pub max_iterations: Option<u32>,
    /// Tool calls per turn before the turn ends `capped` (default unlimited).
    pub max_tool_calls: Option<u32>,
    /// The whole model call, in ms (default 180 000).
    pub model_timeout_ms: Option<f64>,
    /// A tool call, in ms, unless the tool sets its own (default 60 000).
    pub tool_timeout_ms: Option<f64>,
    /// Parallel-safe tools running at once (default 3).
    pub max_parallel_tools: Option<u32>,
    /// Characters of a tool result sent to the model (default 20 000).
    pub result_cap_chars: Option<u32>,
    /// `end_turn` (default) or `tell_model`.
    pub on_denial: Option<String>,
    /// Events buffered per run for slow iterators (default 1024).
    pub event_buffer: Option<u32>,
    /// Upper bound on generated tokens per model call.
    pub max_output_tokens: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
}

fn millis(ms: f64) -> Duration {
    Duration::from_secs_f64(ms.max(0.0) / 1000.0)
}

fn to_config(input: AgentConfigInput) -> Result<AgentConfig> {
    let mut c = AgentConfig::default();
    if let Some(v) = input.max_iterations {
        c.max_iterations = v;
    }
    c.max_tool_calls = input.max_tool_calls;
    if let Some(v) = input.model_timeout_ms {
        c.model_timeout = millis(v);
    }
    if let Some(v) = input.tool_timeout_ms {
        c.tool_timeout = millis(v);
    }
    if let Some(v) = input.max_parallel_tools {
        c.max_parallel_tools = v as usize;
    }
    if let Some(v) = input.result_cap_chars {
        c.result_cap_chars = v as usize;
    }
    if let Some(v) = input.on_denial {
        c.on_denial = match v.as_str() {
            "end_turn" | "endTurn" => DenialPolicy::EndTurn,
            "tell_model" | "tellModel" => DenialPolicy::TellModel,
            other => {
                return Err(coded(
                    "invalid_argument",
                    format!("onDenial must be 'end_turn' or 'tell_model', got {other:?}"),
                ));
            }
        };
    }
    if let Some(v) = input.event_buffer {
        c.event_buffer = v as usize;
    }
    c.max_output_tokens = input.max_output_tokens;
    c.temperature = input.temperature.map(|t| t as f32);
    Ok(c)
}

/// A session store shared by agents.
#[napi]
pub struct NativeStore {
    pub(crate) inner: Arc<dyn Store>,
}

#[napi]
impl NativeStore {
    /// A store that keeps sessions in this process's memory.
    #[napi(factory)]
    pub fn memory() -> NativeStore {
        NativeStore {
            inner: Arc::new(MemoryStore::new()),
        }
    }

    /// The ids of stored sessions (newest first when the store knows).
    #[napi]
    pub async fn session_ids(&self) -> Result<Vec<String>> {
        let sessions = self.inner.list_sessions().await.map_err(|e| coded("store", e))?;
        Ok(sessions.into_iter().map(|s| s.id.to_string()).collect())
    }
}

/// Builds a [`NativeAgent`] piece by piece (the JS `Agent` constructor drives it).
#[napi]
pub struct NativeAgentBuilder {
    builder: Option<AgentBuilder>,
    abort: Option<Arc<AbortFn>>,
    tools: Vec<(ToolDefinition, ToolFn)>,
    next_invocation: Arc<AtomicU32>,
}

#[napi]
impl NativeAgentBuilder {
    /// An empty builder.
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        NativeAgentBuilder {
            builder: Some(Agent::builder()),
            abort: None,
            tools: Vec::new(),
            next_invocation: Arc::new(AtomicU32::new(1)),
        }
    }

    fn update(&mut self, f: impl FnOnce(AgentBuilder) -> AgentBuilder) -> Result<()> {
        let builder = self
            .builder
            .take()
            .ok_or_else(|| coded("invalid_state", "the builder was already used"))?;
        self.builder = Some(f(builder));
        Ok(())
    }

    /// Sets the provider.
    #[napi]
    pub fn provider(&mut self, provider: &NativeProvider) -> Result<()> {
        let p = provider.inner.clone();
        self.update(|b| b.provider_arc(p))
    }

    /// Sets the store.
    #[napi]
    pub fn store(&mut self, store: &NativeStore) -> Result<()> {
        let s = store.inner.clone();
        self.update(|b| b.store_arc(s))
    }

    /// Adds every tool of a native tool set (fs, shell, page tools).
    #[napi]
    pub fn tool_set(&mut self, set: &crate::toolsets::NativeToolSet) -> Result<()> {
        let tools = set.tools.clone();
        self.update(|mut b| {
            for t in tools {
                b = b.tool_arc(t);
            }
            b
        })
    }

    /// Adds a JS tool.
    #[napi(
        ts_args_type = "definition: ToolDefinition, invoke: (input: ToolCallInput) => ToolReply | Promise<ToolReply>"
    )]
    pub fn tool(
        &mut self,
        definition: ToolDefinition,
        invoke: Function<
            '_,
            crate::callbacks::ToolCallInput,
            Either<crate::callbacks::ToolReply, Promise<crate::callbacks::ToolReply>>,
        >,
    ) -> Result<()> {
        let tsfn: ToolFn = invoke.build_threadsafe_function().weak::<true>().build()?;
        self.tools.push((definition, tsfn));
        Ok(())
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
        self.update(|b| b.gate(JsGate(tsfn)))
    }

    /// Adds an observer that sees every event of every run.
    #[napi(ts_args_type = "observer: (event: any) => void")]
    pub fn on_event(&mut self, observer: Function<'_, Value, ()>) -> Result<()> {
        let tsfn: Callback<Value, ()> = observer.build_threadsafe_function().weak::<true>().build()?;
        self.update(|b| {
            b.on_event(move |ev| {
                tsfn.call(crate::convert::event(ev), ThreadsafeFunctionCallMode::NonBlocking);
            })
        })
    }

    /// Sets the system prompt.
    #[napi]
    pub fn system_prompt(&mut self, prompt: String) -> Result<()> {
        self.update(|b| b.system_prompt(prompt))
    }

    /// Sets the loop's limits.
    #[napi]
    pub fn config(&mut self, config: AgentConfigInput) -> Result<()> {
        let config = to_config(config)?;
        self.update(|b| b.config(config))
    }

    /// Builds the agent. The builder cannot be used again.
    #[napi]
    pub fn build(&mut self) -> Result<NativeAgent> {
        let mut builder = self
            .builder
            .take()
            .ok_or_else(|| coded("invalid_state", "the builder was already used"))?;
        for (def, func) in self.tools.drain(..) {
            builder = builder.tool(JsTool::new(
                def,
                func,
                self.abort.clone(),
                self.next_invocation.clone(),
            )?);
        }
        let handle = napi::bindgen_prelude::within_runtime_if_available(tokio::runtime::Handle::current);
        let agent = builder.runtime(handle).build().map_err(agent_error)?;
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
    fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(coded("closed", "the agent is closed"));
        }
        Ok(())
    }

    fn wrap(&self, session: Session) -> NativeSession {
        NativeSession {
            inner: session,
            root: self.root.clone(),
            closed: self.closed.clone(),
        }
    }

    /// Creates a session (with a random id unless one is given).
    #[napi]
    pub async fn create_session(&self, id: Option<String>) -> Result<NativeSession> {
        self.check_open()?;
        let session = match id {
            Some(id) => {
                let id: SessionId = SessionId::parse(&id).map_err(|e| coded("invalid_argument", e))?;
                self.inner.create_session_with_id(id).await
            }
            None => self.inner.create_session().await,
        }
        .map_err(agent_error)?;
        Ok(self.wrap(session))
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

/// A conversation with the agent.
#[napi]
pub struct NativeSession {
    inner: Session,
    root: CancellationToken,
    closed: Arc<AtomicBool>,
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

    /// Starts a turn with a whole user message given as JSON (`{role, content: [...]}`).
    #[napi]
    pub fn send_message(&self, message_json: String, cancelled: Option<bool>) -> Result<NativeRun> {
        let value: Value =
            serde_json::from_str(&message_json).map_err(|e| coded("invalid_argument", format!("message: {e}")))?;
        let message: Message = serde_json::from_value(crate::convert::snake_keys(value))
            .map_err(|e| coded("invalid_argument", format!("message: {e}")))?;
        self.start(message, cancelled.unwrap_or(false))
    }

    fn start(&self, message: Message, cancelled: bool) -> Result<NativeRun> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(coded("closed", "the agent is closed"));
        }
        let token = self.root.child_token();
        if cancelled {
            token.cancel();
        }
        let run = self.inner.send_with_cancel(message, token);
        Ok(NativeRun::new(run))
    }

    /// Every stored message of the session, as JSON text.
    #[napi]
    pub async fn messages_json(&self) -> Result<String> {
        let messages = self.inner.messages().await.map_err(agent_error)?;
        let value = crate::convert::camel_keys(serde_json::to_value(messages).unwrap_or(Value::Null));
        Ok(value.to_string())
    }

    /// The messages the model would see on the next turn, as JSON text.
    #[napi]
    pub async fn model_history_json(&self) -> Result<String> {
        let messages = self.inner.model_history().await;
        let value = crate::convert::camel_keys(serde_json::to_value(messages).unwrap_or(Value::Null));
        Ok(value.to_string())
    }
}
