//! Tab messaging: the tab hub, git-style short handles, `send_to_tab` / `read_tab` and the
//! auto-wake budget.
//!
//! A [`TabHub`] owns one [`Session`](crate::Session) per tab and is the one place that decides
//! what happens to an incoming message: [`TabHub::deliver`] starts a turn when the tab is idle
//! (or in error) and queues the message when a turn is running. A message queued during a turn
//! starts a new turn when that turn ends; it is never stranded. The host's "the person typed
//! in tab X" path goes through the same `deliver`, with [`Origin::Human`].
//!
//! Each tab is shown by its **handle**, the shortest unique prefix of its UUID among the open
//! tabs (at least 4 characters, see [`HandleIndex`]). Agents address each other by handle with
//! the [`SEND_TO_TAB`] and [`READ_TAB`] tools, which the hub gives to a tab's agent only when
//! the tab's [`TabPermissions`] allow them (both are off by default).
//!
//! A host **wires** each hub tab to its own browser tab by the host's tab id
//! ([`TabHub::open_tab_for_host`], [`TabHub::wire_host_tab`]) and gives every tab's agent tools
//! made for its tab ([`TabHubBuilder::tab_tools`]), such as page tools that act on that browser
//! tab whatever tab is active. A browser tab an agent opens goes to that agent or to a new hub
//! tab, as the host's [`TabHubBuilder::opened_tab_policy`] decides ([`OpenedTabOwner`]).
//!
//! Agent-originated messages that wake an idle tab spend its **auto-wake budget** (6 by
//! default). At zero, agent messages are still queued but no longer wake the tab: the sender is
//! told the target is held, and a [`TabEventKind::Notice`] is emitted. Any human delivery refills
//! the budget. Messages are never dropped.
//!
//! ```
//! use agent_core::tabs::{DeliveryStatus, Origin, TabHub, TabPermissions, TabState};
//! use agent_core::{Agent, ScriptStep, ScriptedProvider, ScriptedReply};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Each tab gets its own agent from this factory; the hub adds the store and the tab tools.
//! // ScriptedProvider replays a script; it is not a model.
//! let hub = TabHub::builder()
//!     .agent_factory(|_tab| {
//!         Agent::builder().provider(ScriptedProvider::from_fn(|req| {
//!             let last = req.messages.last().map(|m| m.text()).unwrap_or_default();
//!             if last.starts_with("[message from tab") || last.contains("<tab_response") {
//!                 ScriptStep::Reply(ScriptedReply::text("Noted."))
//!             } else if last.starts_with("Delivered") {
//!                 ScriptStep::Reply(ScriptedReply::text("Sent it."))
//!             } else {
//!                 ScriptStep::Reply(ScriptedReply::text("Hello from a tab."))
//!             }
//!         }))
//!     })
//!     .default_permissions(TabPermissions::all())
//!     .build()
//!     .await?;
//! let a = hub.open_tab().await?;
//! let b = hub.open_tab().await?;
//! println!("tab handles: {} {}", hub.handle(&a).unwrap_or_default(), hub.handle(&b).unwrap_or_default());
//!
//! // The person types in tab a: an idle tab starts a turn.
//! let delivery = hub.deliver(&a, "Hi!", Origin::Human).await?;
//! assert_eq!(delivery.status, DeliveryStatus::Started);
//! hub.wait_all_idle().await;
//!
//! // read_tab's snapshot: the last completed assistant turn and the tab's state.
//! let snapshot = hub.read(&a).await?;
//! assert_eq!(snapshot.state, TabState::Idle);
//! assert_eq!(snapshot.last_response.as_deref(), Some("Hello from a tab."));
//! # Ok(()) }
//! ```

mod delivery;
mod handles;
mod host_tabs;
mod hub;
mod hub_inner;
mod hub_wiring;
mod parked;
mod store;
mod tools;
mod types;

use std::borrow::Borrow;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Internal: public only for the handle fuzz target; not part of the API.
#[doc(hidden)]
pub use handles::normalize_prefix;
pub use handles::{HandleIndex, MAX_LISTED_HANDLES, MIN_HANDLE_LEN, Resolution};
pub use host_tabs::{HostTab, OpenedTab, OpenedTabOwner, OpenedTabPolicy};
pub use hub::{DeliveredMessage, TabHub, TabHubBuilder, TabToolsFactory, WeakTabHub};
pub use store::{MemoryTabStore, QueuedMessage, TabRecord, TabStore};
pub use tools::{READ_TAB, SEND_TO_TAB};
pub use types::{AgentFactory, Delivery, TabError, TabEvent, TabEventKind, TabInfo, TabSnapshot};

/// The auto-wake budget a tab starts with and a human delivery refills.
pub const DEFAULT_AUTO_WAKE_BUDGET: u32 = 6;

/// Messages from other tabs' agents one tab holds at most by default.
pub const DEFAULT_MAX_HELD_MESSAGES: usize = 32;

/// A tab's id: a lowercase UUID. Cheap to clone. Its handle is derived from it (see
/// [`HandleIndex`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct TabId(Arc<str>);

impl TabId {
    /// A fresh random id (UUID v4).
    pub fn new_random() -> Self {
        TabId(uuid::Uuid::new_v4().to_string().into())
    }

    /// Parses an id, normalising it to the lowercase hyphenated form. Fails unless it is a UUID.
    pub fn parse(text: &str) -> Result<Self, InvalidTabId> {
        let uuid = uuid::Uuid::parse_str(text.trim()).map_err(|_| InvalidTabId(text.to_owned()))?;
        Ok(TabId(uuid.hyphenated().to_string().into()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TabId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Borrow<str> for TabId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for TabId {
    type Error = InvalidTabId;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        TabId::parse(&value)
    }
}

impl From<TabId> for String {
    fn from(id: TabId) -> Self {
        id.0.to_string()
    }
}

/// A tab id that is not a UUID.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid tab id {0:?}: expected a UUID such as 6fe8c5a2-2b1d-4c7e-9a6f-1d2e3f4a5b6c")]
pub struct InvalidTabId(pub String);

/// Who a delivered message comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A person (the host's "user typed in this tab" path). Refills the auto-wake budget.
    Human,
    /// Another tab's agent (`send_to_tab`). Waking an idle tab spends its auto-wake budget.
    Agent,
}

impl Origin {
    /// `human` or `agent`.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Human => "human",
            Origin::Agent => "agent",
        }
    }
}

/// What a tab's agent is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TabState {
    /// No turn is running.
    Idle,
    /// A turn is running.
    Running,
    /// The last turn ended with an error. A new message starts a turn as for `idle`.
    Error,
}

impl TabState {
    /// `idle`, `running` or `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            TabState::Idle => "idle",
            TabState::Running => "running",
            TabState::Error => "error",
        }
    }
}

/// What [`TabHub::deliver`] did with a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    /// The tab was idle (or in error): a new turn started with the message.
    Started,
    /// A turn is running: the message is queued and starts a new turn when this one ends.
    Queued,
    /// The message is queued, but the tab's auto-wake budget is spent: it waits for the next
    /// human message to that tab. Do not keep resending.
    Held,
}

impl DeliveryStatus {
    /// `started`, `queued` or `held`.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Started => "started",
            DeliveryStatus::Queued => "queued",
            DeliveryStatus::Held => "held",
        }
    }
}

/// Which tab tools a tab's agent gets. Both are off by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct TabPermissions {
    /// `send_to_tab`: message (and possibly wake) other tabs.
    pub send_to_tab: bool,
    /// `read_tab`: read other tabs' last answers and status.
    pub read_tab: bool,
}

impl TabPermissions {
    /// Neither tool (the default).
    pub fn none() -> Self {
        Self::default()
    }

    /// Both tools.
    pub fn all() -> Self {
        TabPermissions {
            send_to_tab: true,
            read_tab: true,
        }
    }
}
