//! Agents, sessions, runs and their events.

use std::sync::Arc;

use agent_core::{
    Agent, AgentBuilder, AgentConfig, AgentEvent, DenialPolicy, Gate, Outcome, Provider, Run, RunEvents, Session,
    SessionId, Store, Tool,
};
use futures::StreamExt;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tokio::sync::mpsc;

use crate::convert::{Json, json_to_py, py_to_json, to_json};
use crate::errors::{agent_error, config_error, invalid_id};
use crate::provider::{NativeProvider, NativeStore, NativeTool};
use crate::pyloop::{Loops, run_blocking};
use crate::tool::{PyGate, PyTool, seconds};

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

/// The keyword arguments `AgentParts` accepts.
const PART_NAMES: &[&str] = &[
    "provider",
    "tools",
    "native_tools",
    "store",
    "gate",
    "gate_is_async",
    "system_prompt",
    "config",
    "on_event",
    "clarification",
];

#[pymethods]
impl NativeAgentParts {
    #[new]
    #[pyo3(signature = (**parts))]
    fn new(py: Python<'_>, parts: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let empty = PyDict::new(py);
        let parts = parts.unwrap_or(&empty);
        for key in parts.keys() {
            let key: String = key.extract()?;
            if !PART_NAMES.contains(&key.as_str()) {
                return Err(PyTypeError::new_err(format!(
                    "AgentParts() got an unexpected keyword argument {key:?} (expected one of {})",
                    PART_NAMES.join(", ")
                )));
            }
        }
        let part =
            |name: &str| -> PyResult<Option<Bound<'_, PyAny>>> { Ok(parts.get_item(name)?.filter(|v| !v.is_none())) };
        let provider = part("provider")?
            .ok_or_else(|| PyTypeError::new_err("AgentParts() missing required keyword argument 'provider'"))?;
        let provider = provider.cast::<NativeProvider>()?.get().inner.clone();

        let loops = Arc::new(Loops::default());
        loops.remember_current(py);
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        if let Some(list) = part("tools")? {
            for tool in list.try_iter()? {
                tools.push(Arc::new(PyTool::from_py(&tool?, loops.clone())?));
            }
        }
        if let Some(list) = part("native_tools")? {
            for tool in list.try_iter()? {
                tools.push(tool?.extract::<PyRef<'_, NativeTool>>()?.inner.clone());
            }
        }
        let store = match part("store")? {
            Some(s) => Some(s.extract::<PyRef<'_, NativeStore>>()?.inner.clone()),
            None => None,
        };
        let gate_is_async = match part("gate_is_async")? {
            Some(v) => v.extract::<bool>()?,
            None => false,
        };
        let gate =
            part("gate")?.map(|g| Arc::new(PyGate::new(g.unbind(), gate_is_async, loops.clone())) as Arc<dyn Gate>);
        let system_prompt = part("system_prompt")?.map(|p| p.extract::<String>()).transpose()?;
        let config = match part("config")? {
            Some(c) => parse_config(c.cast::<PyDict>()?)?,
            None => AgentConfig::default(),
        };
        let on_event =
            part("on_event")?.map(|callback| Arc::new(event_forwarder(callback.unbind(), loops.clone())) as Observer);
        let clarification = match part("clarification")? {
            Some(v) => v.extract::<bool>()?,
            None => false,
        };
        Ok(NativeAgentParts {
            parts: AgentParts {
                provider,
                tools,
                store,
                gate,
                system_prompt,
                config,
                on_event,
                clarification,
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

    /// Creates a session (with `id`, or a random one). Awaitable.
    #[pyo3(signature = (id=None))]
    fn create_session<'py>(&self, py: Python<'py>, id: Option<String>) -> PyResult<Bound<'py, PyAny>> {
        let id = id.map(|i| SessionId::parse(&i)).transpose().map_err(invalid_id)?;
        let agent = self.agent.clone();
        let loops = self.loops.clone();
        crate::runtime::spawn_py(py, async move {
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

    /// The configuration as a dict (durations in seconds).
    fn config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let c = self.agent.config();
        let value = serde_json::json!({
            "max_iterations": c.max_iterations,
            "max_tool_calls": c.max_tool_calls,
            "model_timeout": c.model_timeout.as_secs_f64(),
            "tool_timeout": c.tool_timeout.as_secs_f64(),
            "max_parallel_tools": c.max_parallel_tools,
            "result_cap_chars": c.result_cap_chars,
            "on_denial": c.on_denial,
            "event_buffer": c.event_buffer,
            "max_output_tokens": c.max_output_tokens,
            "temperature": c.temperature,
            "compression": c.compression,
            "clarification_ttl": c.clarification_ttl.as_secs_f64(),
        });
        json_to_py(py, &value)
    }
}

fn parse_config(dict: &Bound<'_, PyDict>) -> PyResult<AgentConfig> {
    let mut c = AgentConfig::default();
    for (key, value) in dict.iter() {
        let key: String = key.extract()?;
        if value.is_none() && key != "max_tool_calls" {
            continue;
        }
        match key.as_str() {
            "max_iterations" => c.max_iterations = value.extract()?,
            "max_tool_calls" => c.max_tool_calls = value.extract()?,
            "model_timeout" => c.model_timeout = seconds(value.extract()?)?,
            "tool_timeout" => c.tool_timeout = seconds(value.extract()?)?,
            "clarification_ttl" => c.clarification_ttl = seconds(value.extract()?)?,
            "max_parallel_tools" => c.max_parallel_tools = value.extract()?,
            "result_cap_chars" => c.result_cap_chars = value.extract()?,
            "event_buffer" => c.event_buffer = value.extract()?,
            "max_output_tokens" => c.max_output_tokens = value.extract()?,
            "temperature" => c.temperature = value.extract()?,
            "on_denial" => {
                c.on_denial = match value.extract::<String>()?.as_str() {
                    "end_turn" => DenialPolicy::EndTurn,
                    "tell_model" => DenialPolicy::TellModel,
                    other => {
                        return Err(config_error(format!(
                            "on_denial must be \"end_turn\" or \"tell_model\", not {other:?}"
                        )));
                    }
                }
            }
            "compression" => {
                let mut merged = to_json(&c.compression);
                if let (Some(base), serde_json::Value::Object(over)) = (merged.as_object_mut(), py_to_json(&value)?) {
                    base.extend(over);
                }
                c.compression = serde_json::from_value(merged)
                    .map_err(|e| config_error(format!("invalid compression settings: {e}")))?;
            }
            other => return Err(config_error(format!("unknown agent config setting {other:?}"))),
        }
    }
    Ok(c)
}

/// Forwards events to a Python callback in order, without making the loop wait for the GIL:
/// events queue on a channel that a task drains, calling the callback on the session's asyncio
/// loop (`call_soon_threadsafe`) or, without a loop, on a blocking thread.
fn event_forwarder(callback: Py<PyAny>, loops: Arc<Loops>) -> impl Fn(&AgentEvent) + Send + Sync + 'static {
    let (tx, mut rx) = mpsc::unbounded_channel::<AgentEvent>();
    let callback = Arc::new(callback);
    runtime().spawn(async move {
        let mut batch = Vec::new();
        while rx.recv_many(&mut batch, 256).await > 0 {
            let events = std::mem::take(&mut batch);
            let targets: Vec<_> = events.iter().map(|e| loops.for_session(&e.session_id)).collect();
            let callback = callback.clone();
            let _ = run_blocking(move |py| {
                for (event, target) in events.iter().zip(targets) {
                    let delivered = json_to_py(py, &to_json(event)).and_then(|ev| match &target {
                        Some(l) if !l.bind(py).call_method0("is_closed")?.extract::<bool>()? => l
                            .bind(py)
                            .call_method1("call_soon_threadsafe", (callback.bind(py), ev))
                            .map(drop),
                        _ => callback.bind(py).call1((ev,)).map(drop),
                    });
                    if let Err(e) = delivered {
                        e.print(py);
                    }
                }
            })
            .await;
        }
    });
    move |event: &AgentEvent| {
        let _ = tx.send(event.clone());
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
        self.loops.remember(py, self.session.id());
        let run = if let Ok(text) = message.extract::<String>() {
            self.session.send(text)
        } else {
            let mut value = py_to_json(message)?;
            if let Some(obj) = value.as_object_mut() {
                obj.entry("role").or_insert_with(|| "user".into());
                if let Some(serde_json::Value::String(text)) = obj.get("content").cloned() {
                    obj.insert("content".into(), serde_json::json!([{"type": "text", "text": text}]));
                }
            }
            let message = serde_json::from_value(value).map_err(|e| config_error(format!("invalid message: {e}")))?;
            self.session.send_message(message)
        };
        Ok(NativeRun { run: Arc::new(run) })
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
        let dict = json_to_py(py, &to_json(&self.0))?;
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
        crate::runtime::spawn_py(py, async move {
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
