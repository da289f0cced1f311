//! The tab hub: one agent session per browser tab, short handles, `send_to_tab` / `read_tab`,
//! queueing and the auto-wake budget.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use agent_core::CancellationToken;
use agent_core::tabs::{Delivery, Origin, TabError, TabHub, TabId, TabPermissions};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use tokio::sync::broadcast;

use crate::agent::{NativeAgentBuilder, NativeSession, NativeStore, clarification_error};
use crate::convert::{Json, js};
use crate::error::coded;
use crate::run::NativeRun;
use crate::tab_wiring::NativeTabWiring;

/// A hub failure, with its code; the messages about tab ids say what to do in JS terms.
pub(crate) fn tab_error(e: TabError) -> Error {
    match e {
        TabError::NotFound(id) => coded(
            "tab_not_found",
            format!("tab {id} is not a tab of this hub: use an id that openTab() or openTabForHost() returned"),
        ),
        TabError::Closed(id) => coded(
            "tab_closed",
            format!("tab {id} is closed: reopen it with hub.reopenTab(tab) first"),
        ),
        TabError::Clarification(c) => clarification_error(c),
        TabError::Approval(a) => crate::error::approval_error(a),
        e => {
            let code = match &e {
                TabError::AlreadyExists(_) => "tab_exists",
                TabError::QueueFull { .. } => "tab_queue_full",
                TabError::Store(_) => "store",
                _ => "tab",
            };
            coded(code, e)
        }
    }
}

pub(crate) fn tab_id(id: &str) -> Result<TabId> {
    TabId::parse(id).map_err(|e| coded("invalid_argument", e))
}

#[napi]
impl NativeAgentBuilder {
    /// Builds a tab hub whose tabs' agents are made from this builder's pieces; `wiring` gives
    /// them page tools bound to their browser tabs and says who gets the tabs they open.
    #[napi]
    pub async fn tab_hub(
        &self,
        store: Option<&NativeStore>,
        auto_wake_budget: Option<u32>,
        send_to_tab: Option<bool>,
        read_tab: Option<bool>,
        max_held_messages: Option<u32>,
        wiring: Option<&NativeTabWiring>,
    ) -> Result<NativeTabHub> {
        let recipe = self.recipe.clone();
        let mut b = TabHub::builder().agent_factory(move |_tab| recipe.builder(false));
        if let Some(w) = wiring {
            b = w.apply(b);
        }
        if let Some(s) = store {
            b = b.store(s.inner.clone());
        }
        if let Some(n) = auto_wake_budget {
            b = b.auto_wake_budget(n);
        }
        if let Some(n) = max_held_messages {
            b = b.max_held_messages(n as usize);
        }
        b = b.default_permissions(TabPermissions {
            send_to_tab: send_to_tab.unwrap_or(false),
            read_tab: read_tab.unwrap_or(false),
        });
        let hub = b.build().await.map_err(tab_error)?;
        Ok(NativeTabHub { inner: hub })
    }
}

/// What a delivery did.
#[napi]
pub struct NativeDelivery {
    inner: Delivery,
}

#[napi]
impl NativeDelivery {
    /// `started`, `queued` or `held`.
    #[napi(getter, ts_return_type = "string")]
    pub fn status(&self) -> Json {
        js(&self.inner.status)
    }
    /// Messages waiting in the tab's queue afterwards.
    #[napi(getter)]
    pub fn queue_len(&self) -> u32 {
        self.inner.queue_len as u32
    }
    /// The tab's auto-wake budget afterwards.
    #[napi(getter)]
    pub fn auto_wake_budget(&self) -> u32 {
        self.inner.auto_wake_budget
    }
    /// Held because the tab's turn waits for its person.
    #[napi(getter)]
    pub fn awaiting_user(&self) -> bool {
        self.inner.awaiting_user
    }
    /// The turn that started, for `started`.
    #[napi]
    pub fn run(&self) -> Option<NativeRun> {
        self.inner.run.clone().map(NativeRun::from_arc)
    }
}

/// A tab hub.
#[napi]
pub struct NativeTabHub {
    pub(crate) inner: TabHub,
}

#[napi]
impl NativeTabHub {
    /// Opens a tab; returns its id.
    #[napi]
    pub async fn open_tab(&self, send_to_tab: Option<bool>, read_tab: Option<bool>) -> Result<String> {
        if send_to_tab.is_none() && read_tab.is_none() {
            return Ok(self.inner.open_tab().await.map_err(tab_error)?.to_string());
        }
        let id = TabId::new_random();
        let perms = TabPermissions {
            send_to_tab: send_to_tab.unwrap_or(false),
            read_tab: read_tab.unwrap_or(false),
        };
        self.inner.open_tab_with(id.clone(), perms).await.map_err(tab_error)?;
        Ok(id.to_string())
    }

    /// Closes a tab (its session and queue are kept for `reopenTab`).
    #[napi]
    pub async fn close_tab(&self, tab: String) -> Result<()> {
        self.inner.close_tab(&tab_id(&tab)?).await.map_err(tab_error)
    }

    /// Reopens a closed tab.
    #[napi]
    pub async fn reopen_tab(&self, tab: String) -> Result<()> {
        self.inner.reopen_tab(&tab_id(&tab)?).await.map_err(tab_error)
    }

    /// Delivers a message: an idle tab starts a turn, a busy one queues it. With `schema` (a
    /// JSON Schema named `schema_name`) the turn that reads it is a typed turn of its own;
    /// `strict` asks for the provider's strict schema mode where it has one (OpenAI).
    #[napi]
    pub async fn deliver(
        &self,
        tab: String,
        text: String,
        origin: Option<String>,
        schema_name: Option<String>,
        #[napi(ts_arg_type = "any")] schema: Option<Json>,
        strict: Option<bool>,
    ) -> Result<NativeDelivery> {
        let origin = match origin.as_deref() {
            None | Some("human") => Origin::Human,
            Some("agent") => Origin::Agent,
            Some(o) => {
                return Err(coded(
                    "invalid_argument",
                    format!("origin must be 'human' or 'agent', got {o:?}"),
                ));
            }
        };
        let mut message = agent_core::tabs::DeliveredMessage::from(text);
        if let Some(Json(mut schema)) = schema {
            crate::convert::integral_numbers(&mut schema);
            let name = schema_name.as_deref().unwrap_or("answer");
            let schema = agent_core::OutputSchema::new(name, schema).with_strict(strict.unwrap_or(false));
            message = message.expecting(schema);
        }
        let d = self
            .inner
            .deliver(&tab_id(&tab)?, message, origin)
            .await
            .map_err(tab_error)?;
        Ok(NativeDelivery { inner: d })
    }

    /// Resolves a handle or id prefix.
    #[napi(ts_return_type = "any")]
    pub fn resolve(&self, input: String) -> Json {
        js(&self.inner.resolve(&input))
    }

    /// A tab's handle.
    #[napi]
    pub fn handle(&self, tab: String) -> Result<Option<String>> {
        Ok(self.inner.handle(&tab_id(&tab)?))
    }

    /// Every tab, open and closed.
    #[napi(ts_return_type = "any[]")]
    pub fn tabs(&self) -> Json {
        js(&self.inner.tabs())
    }

    /// One tab, or null.
    #[napi(ts_return_type = "any")]
    pub fn tab(&self, tab: String) -> Result<Option<Json>> {
        Ok(self.inner.tab(&tab_id(&tab)?).map(|t| js(&t)))
    }

    /// Changes which tab tools a tab's agent gets.
    #[napi]
    pub async fn set_permissions(&self, tab: String, send_to_tab: bool, read_tab: bool) -> Result<()> {
        let perms = TabPermissions { send_to_tab, read_tab };
        self.inner
            .set_permissions(&tab_id(&tab)?, perms)
            .await
            .map_err(tab_error)
    }

    /// What `read_tab` returns for a tab.
    #[napi(ts_return_type = "Promise<any>")]
    pub async fn read(&self, tab: String) -> Result<Json> {
        Ok(js(&self.inner.read(&tab_id(&tab)?).await.map_err(tab_error)?))
    }

    /// The session a tab owns.
    #[napi]
    pub async fn session(&self, tab: String) -> Result<NativeSession> {
        let s = self.inner.session(&tab_id(&tab)?).await.map_err(tab_error)?;
        Ok(NativeSession::detached(
            s,
            CancellationToken::new(),
            Arc::new(AtomicBool::new(false)),
        ))
    }

    /// Cancels a tab's running turn.
    #[napi]
    pub async fn cancel(&self, tab: String) -> Result<()> {
        self.inner.cancel(&tab_id(&tab)?).await.map_err(tab_error)
    }

    /// Answers the question the tab's turn is parked on; the turn goes on in a new run, and
    /// queued messages follow when it ends.
    #[napi]
    pub async fn answer_clarification(
        &self,
        tab: String,
        clarification_id: String,
        answer: String,
    ) -> Result<NativeRun> {
        let run = self
            .inner
            .answer_clarification(&tab_id(&tab)?, &clarification_id, &answer)
            .await
            .map_err(tab_error)?;
        Ok(NativeRun::from_arc(run))
    }

    /// Dismisses the question the tab's turn is parked on, without a turn; messages held only
    /// for the person then start one, within the auto-wake budget.
    #[napi]
    pub async fn dismiss_clarification(&self, tab: String, clarification_id: String) -> Result<()> {
        self.inner
            .dismiss_clarification(&tab_id(&tab)?, &clarification_id)
            .await
            .map_err(tab_error)
    }

    /// Waits until a tab is idle (its queue drained); returns its info.
    #[napi(ts_return_type = "Promise<any>")]
    pub async fn wait_idle(&self, tab: String) -> Result<Json> {
        Ok(js(&self.inner.wait_idle(&tab_id(&tab)?).await.map_err(tab_error)?))
    }

    /// Waits until every tab is idle.
    #[napi]
    pub async fn wait_all_idle(&self) {
        self.inner.wait_all_idle().await;
    }

    /// The hub's events (tab opened/closed, state changes, every agent event, notices).
    #[napi]
    pub fn events(&self) -> NativeTabEvents {
        NativeTabEvents {
            inner: Arc::new(tokio::sync::Mutex::new(Some(self.inner.subscribe()))),
        }
    }
}

/// A hub's event stream.
#[napi]
pub struct NativeTabEvents {
    inner: Arc<tokio::sync::Mutex<Option<broadcast::Receiver<agent_core::tabs::TabEvent>>>>,
}

#[napi]
impl NativeTabEvents {
    /// The next events (at least one), or null once closed.
    #[napi(ts_return_type = "Promise<any[] | null>")]
    pub async fn next(&self) -> Result<Option<Vec<Json>>> {
        let inner = self.inner.clone();
        let mut guard = inner.lock().await;
        let Some(rx) = guard.as_mut() else { return Ok(None) };
        let mut batch = Vec::new();
        loop {
            match rx.recv().await {
                Ok(ev) => {
                    batch.push(js(&ev));
                    break;
                }
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => {
                    *guard = None;
                    return Ok(None);
                }
            }
        }
        while batch.len() < 256 {
            match rx.try_recv() {
                Ok(ev) => batch.push(js(&ev)),
                Err(broadcast::error::TryRecvError::Lagged(_)) => continue,
                Err(_) => break,
            }
        }
        Ok(Some(batch))
    }

    /// Stops the stream.
    #[napi]
    pub fn close(&self) {
        if let Ok(mut g) = self.inner.try_lock() {
            *g = None;
        }
    }
}
