//! The tab hub: tabs with short handles, deliver (start or queue), permissions, events.

use std::sync::Arc;

use agent_core::tabs::{OpenedTab, Origin, TabError, TabEvent, TabHub, TabId, TabPermissions};
use agent_tools::PageToolsConfig;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tokio::sync::broadcast;

use crate::agent::{NativeAgentParts, NativeRun, NativeSession, runtime};
use crate::convert::{Json, json_to_py, py_to_json, to_json};
use crate::errors::{agent_error, config_error, new_error, store_error};
use crate::hub_browser;

fn tab_error(e: TabError) -> PyErr {
    match e {
        TabError::Agent(a) => agent_error(a),
        TabError::Store(s) => store_error(&s),
        TabError::NoAgentFactory | TabError::NoRuntime => config_error(e.to_string()),
        TabError::NotFound(_) => new_error("TabNotFoundError", e.to_string(), Some("tab.not_found")),
        TabError::Closed(_) => new_error("TabError", e.to_string(), Some("tab.closed")),
        TabError::AlreadyExists(_) => new_error("TabError", e.to_string(), Some("tab.already_exists")),
        TabError::QueueFull { .. } => new_error("TabQueueFullError", e.to_string(), Some("tab.queue_full")),
        TabError::Clarification(c) => crate::agent::clarification_error(c),
        TabError::Approval(a) => crate::approvals::approval_error(a),
    }
}

fn tab_id(text: &str) -> PyResult<TabId> {
    TabId::parse(text).map_err(|e| new_error("TabError", e.to_string(), Some("tab.invalid_id")))
}

fn permissions(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<TabPermissions>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    serde_json::from_value(py_to_json(value)?)
        .map(Some)
        .map_err(|e| config_error(format!("invalid tab permissions: {e}")))
}

/// The tab hub.
#[pyclass(module = "agent_core._native", name = "TabHub", frozen)]
pub struct NativeTabHub {
    hub: TabHub,
    loops: Arc<crate::pyloop::Loops>,
}

#[pymethods]
impl NativeTabHub {
    /// Builds a hub whose tabs each get an agent made from these settings (as for `Agent`).
    /// With `page_tools_host` (a `CdpHost` or a Python browser host) every tab's agent also
    /// gets page tools bound to the browser tab its hub tab is wired to, configured by
    /// `page_tools_config` (a PageToolsConfig dict); `opened_tab_policy` (`"same_agent"`,
    /// `"new_agent"` or a callable) decides who gets a browser tab an agent opens. Awaitable
    /// (returns the hub).
    #[staticmethod]
    #[pyo3(signature = (
        parts,
        default_permissions=None,
        auto_wake_budget=None,
        max_held_messages=None,
        page_tools_host=None,
        page_tools_config=None,
        opened_tab_policy=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn build<'py>(
        py: Python<'py>,
        parts: &NativeAgentParts,
        default_permissions: Option<Bound<'py, PyAny>>,
        auto_wake_budget: Option<u32>,
        max_held_messages: Option<usize>,
        page_tools_host: Option<Bound<'py, PyAny>>,
        page_tools_config: Option<Bound<'py, PyAny>>,
        opened_tab_policy: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let parts = &parts.parts;
        let permissions = permissions(default_permissions.as_ref())?;
        let loops = parts.loops.clone();
        let store = parts.store();
        let factory_parts = parts.clone();
        let mut builder = TabHub::builder().agent_factory(move |_tab| factory_parts.builder(false));
        if let Some(store) = store {
            builder = builder.store(store);
        }
        if let Some(p) = permissions {
            builder = builder.default_permissions(p);
        }
        if let Some(b) = auto_wake_budget {
            builder = builder.auto_wake_budget(b);
        }
        if let Some(n) = max_held_messages {
            builder = builder.max_held_messages(n);
        }
        match page_tools_host.filter(|h| !h.is_none()) {
            Some(host) => {
                let cfg = crate::convert::options::<PageToolsConfig>("PageToolsConfig", page_tools_config.as_ref())?;
                builder = hub_browser::with_page_tools(builder, crate::host::browser_host(py, &host)?, cfg);
            }
            None if page_tools_config.as_ref().is_some_and(|c| !c.is_none()) => {
                return Err(config_error(
                    "page_tools_config was given without page_tools: pass the browser host as page_tools=... too",
                ));
            }
            None => {}
        }
        if let Some(policy) = opened_tab_policy.filter(|p| !p.is_none()) {
            builder = hub_browser::with_opened_tab_policy(builder, &policy)?;
        }
        crate::runtime::spawn_py(py, async move {
            let hub = runtime()
                .spawn(builder.build())
                .await
                .map_err(|e| config_error(format!("building the tab hub failed: {e}")))?
                .map_err(tab_error)?;
            Ok(NativeTabHub { hub, loops })
        })
    }

    /// Opens a tab (a new random id, or `id`) and returns its id. Awaitable.
    #[pyo3(signature = (id=None, permissions=None))]
    fn open_tab<'py>(
        &self,
        py: Python<'py>,
        id: Option<String>,
        permissions: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let hub = self.hub.clone();
        let id = id.map(|i| tab_id(&i)).transpose()?;
        let permissions = self::permissions(permissions.as_ref())?;
        crate::runtime::spawn_py(py, async move {
            let id = match (id, permissions) {
                (None, None) => hub.open_tab().await.map_err(tab_error)?,
                (id, p) => {
                    let id = id.unwrap_or_else(TabId::new_random);
                    hub.open_tab_with(id.clone(), p.unwrap_or_default())
                        .await
                        .map_err(tab_error)?;
                    id
                }
            };
            Ok(id.to_string())
        })
    }

    /// Closes a tab. Awaitable.
    fn close_tab<'py>(&self, py: Python<'py>, tab: String) -> PyResult<Bound<'py, PyAny>> {
        let hub = self.hub.clone();
        let tab = tab_id(&tab)?;
        crate::runtime::spawn_py(py, async move { hub.close_tab(&tab).await.map_err(tab_error) })
    }

    /// Reopens a closed tab. Awaitable.
    fn reopen_tab<'py>(&self, py: Python<'py>, tab: String) -> PyResult<Bound<'py, PyAny>> {
        let hub = self.hub.clone();
        let tab = tab_id(&tab)?;
        crate::runtime::spawn_py(py, async move { hub.reopen_tab(&tab).await.map_err(tab_error) })
    }

    /// Delivers a message: starts a turn in an idle tab, queues it for a busy one. Returns a
    /// dict (`status`, `queue_len`, `auto_wake_budget`, `awaiting_user`, `run`). With
    /// `schema` (a JSON Schema dict named `schema_name`) the turn that reads the message is a
    /// typed turn, of its own. Awaitable.
    #[pyo3(signature = (tab, message, origin="human", schema_name=None, schema=None, strict=false))]
    #[allow(clippy::too_many_arguments)]
    fn deliver<'py>(
        &self,
        py: Python<'py>,
        tab: String,
        message: String,
        origin: &str,
        schema_name: Option<&str>,
        schema: Option<&Bound<'py, PyAny>>,
        strict: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let origin = match origin {
            "human" => Origin::Human,
            "agent" => Origin::Agent,
            other => {
                return Err(config_error(format!(
                    "origin must be \"human\" or \"agent\", not {other:?}"
                )));
            }
        };
        let mut delivered = agent_core::tabs::DeliveredMessage::from(message);
        if let Some(schema) = schema {
            let name = schema_name.unwrap_or("answer");
            let schema = agent_core::OutputSchema::new(name, py_to_json(schema)?).with_strict(strict);
            delivered = delivered.expecting(schema);
        }
        self.loops.remember_current(py);
        let hub = self.hub.clone();
        let tab = tab_id(&tab)?;
        crate::runtime::spawn_py(py, async move {
            let d = hub.deliver(&tab, delivered, origin).await.map_err(tab_error)?;
            Ok(DeliveryObj(d))
        })
    }

    /// Resolves a handle (or any prefix of a tab id) against the open tabs: a dict with
    /// `status` = `ok` | `none` | `ambiguous` | `invalid`.
    fn resolve<'py>(&self, py: Python<'py>, input: &str) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &to_json(&self.hub.resolve(input)))
    }

    /// A tab's current handle (None when closed or unknown).
    fn handle(&self, tab: &str) -> PyResult<Option<String>> {
        Ok(self.hub.handle(&tab_id(tab)?))
    }

    /// `(tab id, handle)` of every open tab.
    fn handles(&self) -> Vec<(String, String)> {
        self.hub
            .handles()
            .into_iter()
            .map(|(t, h)| (t.to_string(), h))
            .collect()
    }

    /// A tab's info dict (None when unknown).
    fn tab<'py>(&self, py: Python<'py>, tab: &str) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &to_json(&self.hub.tab(&tab_id(tab)?)))
    }

    /// Every tab's info dict.
    fn tabs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &to_json(&self.hub.tabs()))
    }

    /// Sets which tab tools a tab's agent has (`{"send_to_tab": bool, "read_tab": bool}`). Awaitable.
    fn set_permissions<'py>(
        &self,
        py: Python<'py>,
        tab: String,
        permissions: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let hub = self.hub.clone();
        let tab = tab_id(&tab)?;
        let p = self::permissions(Some(&permissions))?.unwrap_or_default();
        crate::runtime::spawn_py(py, async move { hub.set_permissions(&tab, p).await.map_err(tab_error) })
    }

    /// What `read_tab` sees of a tab (a dict). Awaitable.
    fn read<'py>(&self, py: Python<'py>, tab: String) -> PyResult<Bound<'py, PyAny>> {
        let hub = self.hub.clone();
        let tab = tab_id(&tab)?;
        crate::runtime::spawn_py(py, async move {
            Ok(Json(to_json(&hub.read(&tab).await.map_err(tab_error)?)))
        })
    }

    /// The tab's session. Awaitable.
    fn session<'py>(&self, py: Python<'py>, tab: String) -> PyResult<Bound<'py, PyAny>> {
        let hub = self.hub.clone();
        let loops = self.loops.clone();
        let tab = tab_id(&tab)?;
        crate::runtime::spawn_py(py, async move {
            let session = hub.session(&tab).await.map_err(tab_error)?;
            Ok(NativeSession { session, loops })
        })
    }

    /// Cancels the tab's running turn. Awaitable.
    fn cancel<'py>(&self, py: Python<'py>, tab: String) -> PyResult<Bound<'py, PyAny>> {
        let hub = self.hub.clone();
        let tab = tab_id(&tab)?;
        crate::runtime::spawn_py(py, async move { hub.cancel(&tab).await.map_err(tab_error) })
    }

    /// Answers the question the tab's turn is parked on; returns the run that continues it.
    /// Awaitable.
    fn answer_clarification<'py>(
        &self,
        py: Python<'py>,
        tab: String,
        clarification_id: String,
        answer: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.loops.remember_current(py);
        let hub = self.hub.clone();
        let tab = tab_id(&tab)?;
        crate::runtime::spawn_py(py, async move {
            let run = hub
                .answer_clarification(&tab, &clarification_id, &answer)
                .await
                .map_err(tab_error)?;
            Ok(NativeRun { run })
        })
    }

    /// Answers the approval the tab's turn is parked on; returns the run that continues it.
    /// Awaitable.
    fn resolve_approval<'py>(
        &self,
        py: Python<'py>,
        tab: String,
        approval_id: String,
        decisions: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let decisions = crate::approvals::decisions(decisions)?;
        self.loops.remember_current(py);
        let hub = self.hub.clone();
        let tab = tab_id(&tab)?;
        crate::runtime::spawn_py(py, async move {
            let run = hub
                .resolve_approval(&tab, &approval_id, decisions)
                .await
                .map_err(tab_error)?;
            Ok(NativeRun { run })
        })
    }

    /// Dismisses the approval the tab's turn is parked on; its calls do not run. Awaitable.
    fn dismiss_approval<'py>(&self, py: Python<'py>, tab: String, approval_id: String) -> PyResult<Bound<'py, PyAny>> {
        let hub = self.hub.clone();
        let tab = tab_id(&tab)?;
        crate::runtime::spawn_py(py, async move {
            hub.dismiss_approval(&tab, &approval_id).await.map_err(tab_error)
        })
    }

    /// Removes and returns the tab's queued messages (dicts). Awaitable.
    fn take_queue<'py>(&self, py: Python<'py>, tab: String) -> PyResult<Bound<'py, PyAny>> {
        let hub = self.hub.clone();
        let tab = tab_id(&tab)?;
        crate::runtime::spawn_py(py, async move {
            Ok(Json(to_json(&hub.take_queue(&tab).await.map_err(tab_error)?)))
        })
    }

    /// Waits until the tab is idle (its queue drained); returns its info. Awaitable.
    fn wait_idle<'py>(&self, py: Python<'py>, tab: String) -> PyResult<Bound<'py, PyAny>> {
        let hub = self.hub.clone();
        let tab = tab_id(&tab)?;
        crate::runtime::spawn_py(py, async move {
            Ok(Json(to_json(&hub.wait_idle(&tab).await.map_err(tab_error)?)))
        })
    }

    /// Waits until every tab is idle. Awaitable.
    fn wait_all_idle<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let hub = self.hub.clone();
        crate::runtime::spawn_py(py, async move {
            hub.wait_all_idle().await;
            Ok(())
        })
    }

    /// Opens a new tab wired to the host's browser tab `host_tab` and returns its id. Awaitable.
    fn open_tab_for_host<'py>(&self, py: Python<'py>, host_tab: String) -> PyResult<Bound<'py, PyAny>> {
        let hub = self.hub.clone();
        crate::runtime::spawn_py(py, async move {
            Ok(hub.open_tab_for_host(host_tab).await.map_err(tab_error)?.to_string())
        })
    }

    /// Wires the browser tab `host_tab` to the tab `tab`: its agent works there from its next
    /// page tool call.
    fn wire_host_tab(&self, tab: &str, host_tab: String) -> PyResult<()> {
        self.hub.wire_host_tab(&tab_id(tab)?, host_tab).map_err(tab_error)
    }

    /// The host closed the browser tab `host_tab`: returns the tab it belonged to, if any.
    fn host_tab_closed(&self, host_tab: &str) -> Option<String> {
        self.hub.host_tab_closed(host_tab).map(|t| t.to_string())
    }

    /// The browser tab the tab's agent works in: `{"state": "unwired" | "open" | "closed",
    /// "host_tab": id}` (no `host_tab` when unwired).
    fn host_tab<'py>(&self, py: Python<'py>, tab: &str) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &to_json(&self.hub.host_tab(&tab_id(tab)?)))
    }

    /// Every open browser tab that belongs to the tab, oldest first.
    fn host_tabs(&self, tab: &str) -> PyResult<Vec<String>> {
        Ok(self.hub.host_tabs(&tab_id(tab)?))
    }

    /// The tab a browser tab belongs to.
    fn tab_for_host(&self, host_tab: &str) -> Option<String> {
        self.hub.tab_for_host(host_tab).map(|t| t.to_string())
    }

    /// Hands the browser tab `host_tab` that the agent of `opener` opened (now at `url`) to
    /// the owner the opened-tab policy chooses; returns the tab that got it. Awaitable.
    fn adopt_host_tab<'py>(
        &self,
        py: Python<'py>,
        opener: String,
        host_tab: String,
        url: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let hub = self.hub.clone();
        let opened = OpenedTab {
            opener: tab_id(&opener)?,
            host_tab,
            url,
        };
        crate::runtime::spawn_py(py, async move {
            Ok(hub.adopt_host_tab(&opened).await.map_err(tab_error)?.to_string())
        })
    }

    /// Dismisses the question the tab's turn is parked on, without answering it. Awaitable.
    fn dismiss_clarification<'py>(
        &self,
        py: Python<'py>,
        tab: String,
        clarification_id: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let hub = self.hub.clone();
        let tab = tab_id(&tab)?;
        crate::runtime::spawn_py(py, async move {
            hub.dismiss_clarification(&tab, &clarification_id)
                .await
                .map_err(tab_error)
        })
    }

    /// A subscription to the hub's events from now on.
    fn subscribe(&self) -> NativeTabEvents {
        NativeTabEvents {
            receiver: Arc::new(tokio::sync::Mutex::new(self.hub.subscribe())),
        }
    }
}

/// A delivery handed to Python.
struct DeliveryObj(agent_core::tabs::Delivery);

impl<'py> IntoPyObject<'py> for DeliveryObj {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> Result<Self::Output, Self::Error> {
        let d = self.0;
        let dict = PyDict::new(py);
        dict.set_item("status", d.status.as_str())?;
        dict.set_item("queue_len", d.queue_len)?;
        dict.set_item("auto_wake_budget", d.auto_wake_budget)?;
        dict.set_item("awaiting_user", d.awaiting_user)?;
        dict.set_item("run", d.run.map(|run| NativeRun { run }))?;
        Ok(dict.into_any())
    }
}

/// Hub events as they happen.
#[pyclass(module = "agent_core._native", name = "TabEvents", frozen)]
pub struct NativeTabEvents {
    receiver: Arc<tokio::sync::Mutex<broadcast::Receiver<TabEvent>>>,
}

#[pymethods]
impl NativeTabEvents {
    /// The next event dict (None once the hub is gone). Awaitable.
    fn next<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let receiver = self.receiver.clone();
        crate::runtime::spawn_py_eager(py, async move {
            let mut receiver = receiver.lock().await;
            loop {
                match receiver.recv().await {
                    Ok(e) => return Ok(Some(Json(to_json(&e)))),
                    Err(broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!(skipped = n, "tab event subscriber fell behind; events skipped");
                    }
                    Err(broadcast::error::RecvError::Closed) => return Ok(None),
                }
            }
        })
    }
}
