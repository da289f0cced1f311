//! Agents, sessions, runs and their events.

use std::sync::Arc;

use agent_core::{
    Agent, AgentBuilder, AgentConfig, AgentEvent, Gate, Outcome, Provider, Run, RunEvents, Session, SessionId, Store,
    Tool,
};
use futures::StreamExt;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{Json, json_to_py, py_to_json, to_json};
use crate::errors::{agent_error, config_error, invalid_id, store_error};
use crate::provider::{NativeProvider, NativeStore, NativeTool};
use crate::pyloop::{Loops, SessionLoop, run_blocking};
use crate::tool::{PyGate, PyTool};

pub fn runtime() -> &'static tokio::runtime::Runtime {
    pyo3_async_runtimes::tokio::get_runtime()
}

/// An agent: provider, tools, store, gate, system prompt and configuration.
#[pyclass(module = "agent_core._native", name = "Agent", frozen)]
pub struct NativeAgent {
    agent: Agent,
    loops: Arc<Loops>,
}

/// An event callback shared by the agents built from the same parts.
type Observer = Arc<dyn Fn(&AgentEvent) + Send + Sync>;

/// Everything an agent is built from, kept so that more agents can be built alike (the tab
/// hub builds one per tab).
#[derive(Clone)]
pub struct AgentParts {
    provider: Arc<dyn Provider>,
    tools: Vec<Arc<dyn Tool>>,
    store: Option<Arc<dyn Store>>,
    gate: Option<Arc<dyn Gate>>,
    system_prompt: Option<String>,
    config: AgentConfig,
    on_event: Option<Observer>,
    clarification: bool,
    hooks: Vec<Arc<dyn agent_core::Hooks>>,
    /// The asyncio loops the Python callbacks of these agents run on.
    pub loops: Arc<Loops>,
}

impl AgentParts {
    /// An agent builder with every part set (the store only when `with_store`).
    pub fn builder(&self, with_store: bool) -> AgentBuilder {
        let mut builder = Agent::builder()
            .provider_arc(self.provider.clone())
            .runtime(runtime().handle().clone())
            .config(self.config.clone())
            .clarification(self.clarification);
        for tool in &self.tools {
            builder = builder.tool_arc(tool.clone());
        }
        if with_store && let Some(store) = &self.store {
            builder = builder.store_arc(store.clone());
        }
        if let Some(gate) = &self.gate {
            builder = builder.gate_arc(gate.clone());
        }
        if let Some(prompt) = &self.system_prompt {
            builder = builder.system_prompt(prompt.clone());
        }
        for hooks in &self.hooks {
            builder = builder.hooks_arc(hooks.clone());
        }
        if let Some(observer) = &self.on_event {
            let observer = observer.clone();
            builder = builder.on_event(move |e| observer(e));
        }
        builder
    }

    /// The store, when one was given.
    pub fn store(&self) -> Option<Arc<dyn Store>> {
        self.store.clone()
    }
}

/// The settings an agent is built from, read once from keyword arguments (see `agent_core.Agent`)
/// and handed to `Agent(parts)` or `TabHub.build(parts, ...)`.
#[pyclass(module = "agent_core._native", name = "AgentParts", frozen)]
pub struct NativeAgentParts {
    pub(crate) parts: AgentParts,
}

#[pymethods]
impl NativeAgentParts {
    /// Keyword arguments only; pyo3 refuses an unknown or missing one with a `TypeError`
    /// naming it. `config` is an AgentConfig dict in the options format (`max_tool_calls: None`
    /// means no cap; see `agent_config`).
    #[new]
    #[pyo3(signature = (
        *,
        provider,
        tools=None,
        native_tools=None,
        store=None,
        gate=None,
        gate_is_async=false,
        system_prompt=None,
        config=None,
        on_event=None,
        clarification=false,
        hooks=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        provider: &Bound<'_, NativeProvider>,
        tools: Option<Vec<Bound<'_, PyAny>>>,
        native_tools: Option<Vec<PyRef<'_, NativeTool>>>,
        store: Option<PyRef<'_, NativeStore>>,
        gate: Option<Py<PyAny>>,
        gate_is_async: bool,
        system_prompt: Option<String>,
        config: Option<&Bound<'_, PyAny>>,
        on_event: Option<Py<PyAny>>,
        clarification: bool,
        hooks: Option<Vec<Bound<'_, PyAny>>>,
    ) -> PyResult<Self> {
        let loops = Arc::new(Loops::default());
        loops.remember_current(py);
        let mut all: Vec<Arc<dyn Tool>> = Vec::new();
        for tool in tools.iter().flatten() {
            all.push(Arc::new(PyTool::from_py(tool, loops.clone())?));
        }
        for tool in native_tools.iter().flatten() {
            all.push(tool.inner.clone());
        }
        let gate = gate.map(|g| Arc::new(PyGate::new(g, gate_is_async, loops.clone())) as Arc<dyn Gate>);
        let hooks = hooks
            .iter()
            .flatten()
            .map(|h| Ok(Arc::new(crate::hooks::PyHooks::from_py(h, loops.clone())?) as Arc<dyn agent_core::Hooks>))
            .collect::<PyResult<Vec<_>>>()?;
        let config = crate::agent_config::agent_config(config)?;
        let on_event = on_event
            .map(|callback| Arc::new(event_forwarder(callback, loops.clone(), config.event_buffer)) as Observer);
        Ok(NativeAgentParts {
            parts: AgentParts {
                provider: provider.get().inner.clone(),
                tools: all,
                store: store.map(|s| s.inner.clone()),
                gate,
                system_prompt,
                config,
                on_event,
                clarification,
                hooks,
                loops,
            },
        })
    }
}

#[pymethods]
impl NativeAgent {
    #[new]
    fn new(parts: &NativeAgentParts) -> PyResult<Self> {
        let parts = &parts.parts;
        let agent = parts.builder(true).build().map_err(agent_error)?;
        Ok(NativeAgent {
            agent,
            loops: parts.loops.clone(),
        })
    }

    /// Whether the model is sent images: `vision`, with `auto` resolved by what the provider
    /// knows of its model.
    #[getter]
    fn takes_images(&self) -> bool {
        self.agent.takes_images()
    }

    /// Creates a session (with `id`, or a random one). Awaitable.
    #[pyo3(signature = (id=None))]
    fn create_session<'py>(&self, py: Python<'py>, id: Option<String>) -> PyResult<Bound<'py, PyAny>> {
        let id = id.map(|i| SessionId::parse(&i)).transpose().map_err(invalid_id)?;
        let agent = self.agent.clone();
        let loops = self.loops.clone();
        crate::runtime::spawn_py_eager(py, async move {
            let session = match id {
                Some(id) => agent.create_session_with_id(id).await,
                None => agent.create_session().await,
            }
            .map_err(agent_error)?;
            Ok(NativeSession { session, loops })
        })
    }

    /// Opens a live or stored session. Awaitable.
    fn open_session<'py>(&self, py: Python<'py>, id: String) -> PyResult<Bound<'py, PyAny>> {
        let id = SessionId::parse(&id).map_err(invalid_id)?;
        let agent = self.agent.clone();
        let loops = self.loops.clone();
        crate::runtime::spawn_py(py, async move {
            let session = agent.open_session(&id).await.map_err(agent_error)?;
            Ok(NativeSession { session, loops })
        })
    }

    /// The tools' specs as dicts.
    fn tool_specs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let specs: Vec<_> = self.agent.tools().iter().map(|t| to_json(t.spec())).collect();
        json_to_py(py, &serde_json::Value::Array(specs))
    }

    /// The configuration as a dict in the options format (AgentConfig's keys, durations in
    /// milliseconds under `_ms` keys).
    fn config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &to_json(self.agent.config()))
    }

    /// The remembered approval decisions (dicts), oldest first. Awaitable.
    fn approval_rules<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let agent = self.agent.clone();
        crate::runtime::spawn_py(py, async move {
            let rules = agent.approval_rules().await.map_err(|e| store_error(&e))?;
            Ok(Json(to_json(&rules)))
        })
    }

    /// Forgets remembered decision `id`; whether there was one. Awaitable.
    fn revoke_approval_rule<'py>(&self, py: Python<'py>, id: String) -> PyResult<Bound<'py, PyAny>> {
        let agent = self.agent.clone();
        crate::runtime::spawn_py(py, async move {
            agent.revoke_approval_rule(&id).await.map_err(|e| store_error(&e))
        })
    }
}

/// Forwards events to a Python callback in order, without making the run wait for the GIL or
/// for the callback: events wait in a bounded queue (`capacity`, see
/// [`agent_core::observer_channel`]) that a task drains a batch at a time, calling the callback
/// on the session's asyncio loop or, without a loop, on the Python thread. The next batch is
/// taken once this one was delivered, so a callback that falls behind makes the queue drop
/// streamed tokens first (a `RuntimeWarning` says how many), not grow.
fn event_forwarder(
    callback: Py<PyAny>,
    loops: Arc<Loops>,
    capacity: usize,
) -> impl Fn(&AgentEvent) + Send + Sync + 'static {
    let (tx, mut rx) = agent_core::observer_channel::<AgentEvent>(capacity);
    let callback = Arc::new(callback);
    runtime().spawn(async move {
        while let Some(batch) = rx.recv().await {
            let mut dropped = batch.dropped;
            let mut events = batch
                .events
                .into_iter()
                .map(|e| {
                    let target = loops.for_session(&e.session_id);
                    (e, target)
                })
                .peekable();
            while let Some((first, target)) = events.next() {
                let mut group = vec![first];
                // Consecutive events bound for the same loop go in one delivery.
                while let Some((next, _)) = events.next_if(|(_, t)| same_loop(t, &target)) {
                    group.push(next);
                }
                let delivery = EventDelivery {
                    callback: callback.clone(),
                    events: group,
                    dropped: std::mem::take(&mut dropped),
                };
                // Err only when the interpreter is shutting down: nobody is left to see them.
                let _ = match &target {
                    Some(target) => crate::pyloop::run_on_loop(target, Box::new(move |py| delivery.run(py))).await,
                    None => run_blocking(move |py| delivery.run(py)).await,
                };
            }
        }
    });
    move |event: &AgentEvent| {
        // The task above awaits `recv`: it needs no waking of its own.
        tx.send(event);
    }
}

fn same_loop(a: &Option<Arc<SessionLoop>>, b: &Option<Arc<SessionLoop>>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        (None, None) => true,
        _ => false,
    }
}

/// Events for the callback, and how many were dropped before them.
struct EventDelivery {
    callback: Arc<Py<PyAny>>,
    events: Vec<AgentEvent>,
    dropped: u64,
}

impl EventDelivery {
    fn run(self, py: Python<'_>) {
        if self.dropped > 0 {
            let message = format!(
                "agent-core: the on_event callback fell behind; {} events were dropped (streamed tokens \
                 first). Return from it sooner, or raise `event_buffer`.",
                self.dropped
            );
            let warned = std::ffi::CString::new(message)
                .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
                .and_then(|m| PyErr::warn(py, &py.get_type::<pyo3::exceptions::PyRuntimeWarning>(), &m, 1));
            if let Err(e) = warned {
                e.print(py);
            }
        }
        let callback = self.callback.bind(py);
        for event in &self.events {
            if let Err(e) = json_to_py(py, &to_json(event)).and_then(|ev| callback.call1((ev,)).map(drop)) {
                e.print(py);
            }
        }
    }
}

/// A conversation.
#[pyclass(module = "agent_core._native", name = "Session", frozen)]
pub struct NativeSession {
    pub(crate) session: Session,
    pub(crate) loops: Arc<Loops>,
}

#[pymethods]
impl NativeSession {
    /// The session id.
    #[getter]
    fn id(&self) -> String {
        self.session.id().to_string()
    }

    /// Starts a turn with a user message: a string, or a message dict (`{"role": "user",
    /// "content": [...]}`). Returns the run at once.
    fn send(&self, py: Python<'_>, message: &Bound<'_, PyAny>) -> PyResult<NativeRun> {
        let message = user_message(message)?;
        self.loops.remember(py, self.session.id());
        let run = self.session.send_message(message);
        Ok(NativeRun { run: Arc::new(run) })
    }

    /// Starts a typed turn: like `send`, with a final answer that must match the JSON Schema
    /// `schema` (a dict) named `name`; the outcome's `structured` holds it. Returns the run at
    /// once; a schema that is not a valid JSON Schema ends it with `output.schema`. `strict`
    /// asks for the provider's strict schema mode where it has one (OpenAI).
    #[pyo3(signature = (message, name, schema, strict=false))]
    fn send_with_schema(
        &self,
        py: Python<'_>,
        message: &Bound<'_, PyAny>,
        name: &str,
        schema: &Bound<'_, PyAny>,
        strict: bool,
    ) -> PyResult<NativeRun> {
        let message = user_message(message)?;
        let schema = agent_core::OutputSchema::new(name, py_to_json(schema)?).with_strict(strict);
        self.loops.remember(py, self.session.id());
        let run = self
            .session
            .send_with_schema(message, schema, agent_core::CancellationToken::new());
        Ok(NativeRun { run: Arc::new(run) })
    }

    /// What the session's finished turns cost in US dollars in this process, or None when a
    /// call's price was unknown.
    fn cost_usd(&self) -> Option<f64> {
        self.session.cost_usd()
    }

    /// The question a turn of this session is parked on (a dict), or None.
    fn pending_clarification<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &to_json(&self.session.pending_clarification()))
    }

    /// Answers the pending question; the parked turn continues in the returned run.
    fn answer_clarification(&self, py: Python<'_>, clarification_id: &str, answer: &str) -> PyResult<NativeRun> {
        self.loops.remember(py, self.session.id());
        let run = self
            .session
            .answer_clarification(clarification_id, answer)
            .map_err(clarification_error)?;
        Ok(NativeRun { run: Arc::new(run) })
    }

    /// The approval a turn of this session is parked on (a dict), or None.
    fn pending_approval<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &to_json(&self.session.pending_approval()))
    }

    /// Answers the pending approval (`decisions`: call id to decision dict); the parked turn
    /// continues in the returned run.
    fn resolve_approval(&self, py: Python<'_>, approval_id: &str, decisions: &Bound<'_, PyAny>) -> PyResult<NativeRun> {
        let decisions = crate::approvals::decisions(decisions)?;
        self.loops.remember(py, self.session.id());
        let run = self
            .session
            .resolve_approval(approval_id, decisions)
            .map_err(crate::approvals::approval_error)?;
        Ok(NativeRun { run: Arc::new(run) })
    }

    /// Dismisses the pending approval without answering it; its calls do not run. Awaitable.
    fn dismiss_approval<'py>(&self, py: Python<'py>, approval_id: String) -> PyResult<Bound<'py, PyAny>> {
        let session = self.session.clone();
        crate::runtime::spawn_py(py, async move {
            session
                .dismiss_approval(&approval_id)
                .await
                .map_err(crate::approvals::approval_error)
        })
    }

    /// Dismisses the pending question without answering it; no turn starts. Waits for a
    /// running turn of the session to end first. Awaitable.
    fn dismiss_clarification<'py>(&self, py: Python<'py>, clarification_id: String) -> PyResult<Bound<'py, PyAny>> {
        let session = self.session.clone();
        crate::runtime::spawn_py(py, async move {
            session
                .dismiss_clarification(&clarification_id)
                .await
                .map_err(clarification_error)
        })
    }

    /// Every stored message (dicts with `seq`, `message`, `created_at_ms`). Awaitable.
    fn messages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let session = self.session.clone();
        crate::runtime::spawn_py(py, async move {
            let messages = session.messages().await.map_err(agent_error)?;
            Ok(Json(to_json(&messages)))
        })
    }

    /// The messages the model would see on the next turn. Awaitable.
    fn model_history<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let session = self.session.clone();
        crate::runtime::spawn_py(py, async move { Ok(Json(to_json(&session.model_history().await))) })
    }
}

/// One turn running in the background.
#[pyclass(module = "agent_core._native", name = "Run", frozen)]
pub struct NativeRun {
    pub(crate) run: Arc<Run>,
}

#[pymethods]
impl NativeRun {
    /// The run id.
    #[getter]
    fn id(&self) -> String {
        self.run.id().to_owned()
    }

    /// The session id.
    #[getter]
    fn session_id(&self) -> String {
        self.run.session_id().to_string()
    }

    /// A status snapshot dict.
    fn status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &to_json(&self.run.status()))
    }

    /// Asks the run to stop.
    fn cancel(&self) {
        self.run.cancel();
    }

    /// Whether the run has finished.
    fn is_finished(&self) -> bool {
        self.run.is_finished()
    }

    /// The run's events: the first call sees every event from `run_started` on.
    fn events(&self) -> NativeEvents {
        NativeEvents {
            stream: Arc::new(tokio::sync::Mutex::new(self.run.events())),
        }
    }

    /// Waits for the outcome (a dict). Awaitable.
    fn outcome<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let run = self.run.clone();
        crate::runtime::spawn_py(py, async move { Ok(OutcomeObj(run.outcome().await)) })
    }
}

/// An outcome handed to Python: its JSON fields plus `error_source`, the original Python
/// exception when a Python callback caused the error.
pub struct OutcomeObj(pub Outcome);

impl<'py> IntoPyObject<'py> for OutcomeObj {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> Result<Self::Output, Self::Error> {
        let dict = match usual_outcome_dict(py, &self.0)? {
            Some(dict) => dict.into_any(),
            None => json_to_py(py, &to_json(&self.0))?,
        };
        let source = self
            .0
            .error_source
            .as_ref()
            .and_then(|s| s.downcast_ref::<PyErr>())
            .map(|e| e.value(py).clone().into_any());
        dict.set_item("error_source", source)?;
        Ok(dict)
    }
}

/// The dict of an outcome without optional parts ([`Outcome::has_optional_parts`], most of
/// them), built field by field: the same dict as through its JSON value, for about a quarter
/// of the instructions, on the thread that awaits it. `None` for any other outcome.
fn usual_outcome_dict<'py>(py: Python<'py>, o: &Outcome) -> PyResult<Option<Bound<'py, PyDict>>> {
    if o.has_optional_parts() {
        return Ok(None);
    }
    // As JSON gives them: a number that is not finite is null.
    let finite = |n: Option<f64>| n.filter(|n| n.is_finite());
    let usage = PyDict::new(py);
    usage.set_item(intern!(py, "cache_write_tokens"), o.usage.cache_write_tokens)?;
    usage.set_item(intern!(py, "cached_input_tokens"), o.usage.cached_input_tokens)?;
    usage.set_item(intern!(py, "input_tokens"), o.usage.input_tokens)?;
    usage.set_item(intern!(py, "output_tokens"), o.usage.output_tokens)?;
    usage.set_item(intern!(py, "reasoning_tokens"), o.usage.reasoning_tokens)?;
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "cost_usd"), finite(o.cost_usd))?;
    dict.set_item(intern!(py, "error"), o.error.as_deref())?;
    dict.set_item(intern!(py, "error_kind"), o.error_kind.map(|k| k.as_str()))?;
    dict.set_item(intern!(py, "final_text"), o.final_text.as_deref())?;
    dict.set_item(intern!(py, "iterations"), o.iterations)?;
    dict.set_item(intern!(py, "session_cost_usd"), finite(o.session_cost_usd))?;
    dict.set_item(intern!(py, "status"), o.status.as_str())?;
    dict.set_item(intern!(py, "tool_calls"), o.tool_calls)?;
    dict.set_item(intern!(py, "usage"), usage)?;
    Ok(Some(dict))
}

/// An async source of a run's events.
#[pyclass(module = "agent_core._native", name = "RunEvents", frozen)]
pub struct NativeEvents {
    stream: Arc<tokio::sync::Mutex<RunEvents>>,
}

#[pymethods]
impl NativeEvents {
    /// The next event dict, or None after the final one. Awaitable.
    fn next<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let stream = self.stream.clone();
        crate::runtime::spawn_py_eager(py, async move {
            let mut stream = stream.lock().await;
            Ok(stream.next().await.map(|e| Json(to_json(&e))))
        })
    }

    /// Every remaining event at once (a list), once the run ends. Awaitable.
    fn collect<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let stream = self.stream.clone();
        crate::runtime::spawn_py(py, async move {
            let mut stream = stream.lock().await;
            let mut all = Vec::new();
            while let Some(e) = stream.next().await {
                all.push(to_json(&e));
            }
            Ok(Json(serde_json::Value::Array(all)))
        })
    }
}

/// A user message from text or a message dict (`{"role": "user", "content": [...]}`, where a
/// string `content` becomes one text part).
fn user_message(message: &Bound<'_, PyAny>) -> PyResult<agent_core::Message> {
    if let Ok(text) = message.extract::<String>() {
        return Ok(agent_core::Message::user(text));
    }
    let mut value = py_to_json(message)?;
    if let Some(obj) = value.as_object_mut() {
        obj.entry("role").or_insert_with(|| "user".into());
        if let Some(serde_json::Value::String(text)) = obj.get("content").cloned() {
            obj.insert("content".into(), serde_json::json!([{"type": "text", "text": text}]));
        }
    }
    serde_json::from_value(value).map_err(|e| config_error(format!("invalid message: {e}")))
}

/// Maps a clarification error.
pub(crate) fn clarification_error(e: agent_core::ClarificationError) -> PyErr {
    use agent_core::ClarificationError as E;
    let kind = match &e {
        E::NotPending(_) => "clarification.not_pending",
        E::InvalidAnswer(_) => "clarification.invalid_answer",
        E::Expired => "clarification.expired",
        E::Store(s) => return crate::errors::store_error(s),
    };
    crate::errors::new_error("ClarificationError", e.to_string(), Some(kind))
}

/// `agent` offered as the tool `name` to another agent (see `agent_core.agent_tool`); its
/// answers typed by `output` (a schema's name and its JSON Schema) when given.
#[pyfunction]
#[pyo3(signature = (name, description, agent, max_depth, output=None))]
pub fn agent_tool(
    name: String,
    description: String,
    agent: &NativeAgent,
    max_depth: u32,
    output: Option<(String, Bound<'_, PyAny>)>,
) -> PyResult<crate::provider::NativeTool> {
    let mut tool = agent_core::agent_tool(name, description, agent.agent.clone()).max_depth(max_depth);
    if let Some((schema_name, schema)) = output {
        tool = tool.output_schema(agent_core::OutputSchema::new(schema_name, py_to_json(&schema)?));
    }
    Ok(crate::provider::NativeTool::new(Arc::new(tool)))
}
