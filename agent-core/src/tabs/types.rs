//! The tab hub's public data: errors, delivery results, snapshots and events.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{DeliveryStatus, TabId, TabPermissions, TabState};
use crate::agent::{AgentBuilder, AgentError, ApprovalError, ClarificationError, Run};
use crate::event::AgentEvent;
use crate::session::SessionId;
use crate::store::StoreError;

/// Makes the agent of a tab: a fresh [`AgentBuilder`] (provider, other tools, system prompt,
/// config) for the given tab. The hub adds its store and the tab tools the tab's permissions
/// allow, then builds it. Called when a tab opens, when a restored tab is first used, and
/// when a tab's permissions change.
pub type AgentFactory = Arc<dyn Fn(&TabId) -> AgentBuilder + Send + Sync>;

/// A tab hub failure.
#[derive(Debug, thiserror::Error)]
pub enum TabError {
    /// No tab has this id.
    #[error("tab {0} not found")]
    NotFound(TabId),
    /// The tab is closed; reopen it first.
    #[error("tab {0} is closed; reopen it with TabHub::reopen_tab")]
    Closed(TabId),
    /// A tab with this id exists already.
    #[error("tab {0} already exists")]
    AlreadyExists(TabId),
    /// [`TabHubBuilder::build`](super::TabHubBuilder::build) was called without an agent factory.
    #[error("no agent factory: call TabHubBuilder::agent_factory(...) before build()")]
    NoAgentFactory,
    /// No Tokio runtime to watch turns on.
    #[error("no Tokio runtime: build the tab hub inside a Tokio runtime")]
    NoRuntime,
    /// The tab's agent could not be built or its session opened.
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The tab already holds the most messages from other tabs' agents it may; this one was
    /// not queued (the older ones are kept).
    #[error(
        "tab {tab} already holds {limit} messages from other tabs' agents; this one was not queued (raise TabHubBuilder::max_held_messages to hold more)"
    )]
    QueueFull {
        /// The target tab.
        tab: TabId,
        /// The limit.
        limit: usize,
    },
    /// A clarification answer or dismissal was refused (not pending, expired, or the wrong
    /// kind of answer).
    #[error(transparent)]
    Clarification(#[from] ClarificationError),
    /// An answer to a pending approval, or its dismissal, was refused (not pending, expired,
    /// a call without a decision, edited arguments the schema refuses).
    #[error(transparent)]
    Approval(#[from] ApprovalError),
}

/// What [`TabHub::deliver`](super::TabHub::deliver) did.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// Started, queued or held.
    pub status: DeliveryStatus,
    /// Messages waiting in the tab's queue afterwards.
    pub queue_len: usize,
    /// The tab's auto-wake budget afterwards.
    pub auto_wake_budget: u32,
    /// For `held`: whether the tab is held because its turn is parked on a question to its
    /// person (rather than because its budget is spent).
    pub awaiting_user: bool,
    /// The turn that started, for `started`. The hub reads its events first (they are
    /// forwarded to [`TabHub::subscribe`](super::TabHub::subscribe)); `.outcome()` works as usual.
    pub run: Option<Arc<Run>>,
}

/// A snapshot of a tab.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TabInfo {
    /// The tab's id.
    pub id: TabId,
    /// Its current handle (`None` when the tab is closed).
    pub handle: Option<String>,
    /// The session it owns.
    pub session_id: SessionId,
    /// Whether it is open.
    pub open: bool,
    /// What its agent is doing.
    pub state: TabState,
    /// Messages waiting for its next turn.
    pub queue_len: usize,
    /// Agent wakes left.
    pub auto_wake_budget: u32,
    /// Messages are waiting but will not start a turn by themselves (budget spent, or the
    /// last turn is parked on a question to the person); the next human message releases them.
    pub held: bool,
    /// The last turn ended parked on a question to the person.
    pub awaiting_user: bool,
    /// Which tab tools its agent has.
    pub permissions: TabPermissions,
}

/// What `read_tab` sees of a tab: its last completed assistant turn and its state. Reading it
/// never waits for a running turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TabSnapshot {
    /// The tab.
    pub tab_id: TabId,
    /// Its handle (`None` when closed).
    pub handle: Option<String>,
    /// What its agent is doing.
    pub state: TabState,
    /// The text of the last completed turn's final assistant message. While a turn runs, this
    /// is the turn before it. `None` when no turn has completed yet.
    pub last_response: Option<String>,
}

/// An event of the hub, tagged with its tab.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TabEvent {
    /// The tab.
    pub tab_id: TabId,
    /// What happened.
    #[serde(flatten)]
    pub kind: TabEventKind,
}

/// What happened in a tab. Serialized with a `type` field.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TabEventKind {
    /// The tab opened (or reopened).
    TabOpened {
        /// Its handle at that moment.
        handle: String,
    },
    /// The tab closed.
    TabClosed,
    /// The tab's agent state changed.
    StateChanged {
        /// The new state.
        state: TabState,
    },
    /// An event of one of the tab's turns, or `message_queued` when a message for a busy tab
    /// was queued.
    Agent {
        /// The event.
        event: Box<AgentEvent>,
    },
    /// Something the person should know, such as agent messages held because the auto-wake
    /// budget is spent (`code` = `auto_wake_budget_spent`), held while a question to the person
    /// is pending (`awaiting_user`), or a queued turn that failed to start (`start_failed`).
    Notice {
        /// A stable code.
        code: String,
        /// A sentence for the person.
        message: String,
        /// Messages waiting in the queue.
        queue_len: usize,
    },
}
