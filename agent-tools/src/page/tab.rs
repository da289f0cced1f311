//! Which browser tab a set of page tools works in, and the tabs that belong to its agent.
//!
//! Page tools bound to a tab act there whatever tab the person is looking at, so an agent woken
//! in a background tab reads and clicks its own page. Such an agent owns its tab and the tabs it
//! opened for itself; it can activate and close only those.

use std::sync::Mutex;

use agent_core::ToolError;
use agent_core::tabs::{HostTab, OpenedTab, TabHub, TabId, WeakTabHub};

/// Which browser tab a set of page tools acts on (see [`crate::page_tools_for_tab`]).
#[derive(Debug, Clone)]
pub enum PageTab {
    /// Whichever tab is active when a tool runs (what [`crate::page_tools`] builds).
    Active,
    /// This browser tab, by its host id ([`crate::TabInfo::id`]). A tab the agent opens with
    /// tab_open becomes its own too, and the one it works in.
    Host(String),
    /// The browser tab the hub tab `tab` is wired to ([`TabHub::wire_host_tab`]), looked up on
    /// every call. A tab the agent opens goes to the owner the hub's opened-tab policy chooses
    /// ([`TabHub::adopt_host_tab`]).
    Hub {
        /// The hub (weak: the hub owns the agents that hold these tools).
        hub: WeakTabHub,
        /// The hub tab whose agent gets the tools.
        tab: TabId,
    },
}

impl From<&str> for PageTab {
    fn from(host_tab: &str) -> Self {
        PageTab::Host(host_tab.to_owned())
    }
}

impl From<String> for PageTab {
    fn from(host_tab: String) -> Self {
        PageTab::Host(host_tab)
    }
}

/// Who a browser tab belongs to, as a bound agent sees it.
pub(crate) enum Owner {
    /// This agent (every tab, for tools that act on the active tab).
    Mine,
    /// The agent of another hub tab, by its handle.
    Tab(String),
    /// No agent this one knows of.
    Unknown,
}

/// Where a tab the agent opened went.
pub(crate) enum Adopted {
    /// To this agent, which works in it now.
    Mine,
    /// To a new hub tab's agent, by its handle.
    NewAgent(String),
}

/// The tab state of one set of page tools.
pub(crate) struct Binding {
    tab: PageTab,
    /// For [`PageTab::Host`]: the agent's own tabs (a hub keeps its own record instead).
    own: Mutex<Own>,
}

struct Own {
    tabs: Vec<String>,
    working: HostTab,
}

impl Binding {
    pub(crate) fn new(tab: PageTab) -> Binding {
        let own = match &tab {
            PageTab::Host(id) => Own {
                tabs: vec![id.clone()],
                working: HostTab::Open(id.clone()),
            },
            _ => Own {
                tabs: Vec::new(),
                working: HostTab::Unwired,
            },
        };
        Binding {
            tab,
            own: Mutex::new(own),
        }
    }

    /// Whether the tools act on the active tab rather than an agent's own.
    pub(crate) fn follows_active(&self) -> bool {
        matches!(self.tab, PageTab::Active)
    }

    fn own(&self) -> std::sync::MutexGuard<'_, Own> {
        self.own.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn hub(hub: &WeakTabHub) -> Result<TabHub, ToolError> {
        hub.upgrade()
            .ok_or_else(|| ToolError::fatal("the tab hub this agent belongs to has been dropped"))
    }

    /// The host tab the tools act on now (`None`: the active tab), or why there is none.
    pub(crate) fn working(&self) -> Result<Option<String>, ToolError> {
        let (working, tabs) = match &self.tab {
            PageTab::Active => return Ok(None),
            PageTab::Host(_) => {
                let own = self.own();
                (own.working.clone(), own.tabs.clone())
            }
            PageTab::Hub { hub, tab } => {
                let hub = Self::hub(hub)?;
                if hub.tab(tab).is_none_or(|info| !info.open) {
                    return Err(ToolError::model(
                        "this agent's tab has been closed, so the page tools have no page to act on. Do not retry them: stop here and report what was done.",
                    ));
                }
                (hub.host_tab(tab), hub.host_tabs(tab))
            }
        };
        match working {
            HostTab::Open(id) => Ok(Some(id)),
            HostTab::Closed(id) => Err(ToolError::model(closed_message(&id, &tabs))),
            HostTab::Unwired => Err(ToolError::model(
                "no browser tab is attached to this agent's tab yet, so the page tools have no page to act on. Do not retry them: tell the person the tab has no page attached.",
            )),
        }
    }

    /// The host reports that `host_tab` is gone: the error for the call that found out, and
    /// every later call until the agent works in another tab.
    pub(crate) fn gone(&self, host_tab: &str) -> ToolError {
        self.forget(host_tab);
        match self.working() {
            Err(e) => e,
            Ok(_) => ToolError::model(closed_message(host_tab, &[])),
        }
    }

    fn forget(&self, host_tab: &str) {
        match &self.tab {
            PageTab::Active => {}
            PageTab::Host(_) => {
                let mut own = self.own();
                own.tabs.retain(|t| t != host_tab);
                if own.working.open() == Some(host_tab) {
                    own.working = HostTab::Closed(host_tab.to_owned());
                }
            }
            PageTab::Hub { hub, .. } => {
                if let Some(hub) = hub.upgrade() {
                    hub.host_tab_closed(host_tab);
                }
            }
        }
    }

    /// Who `host_tab` belongs to.
    pub(crate) fn owner(&self, host_tab: &str) -> Owner {
        match &self.tab {
            PageTab::Active => Owner::Mine,
            PageTab::Host(_) if self.own().tabs.iter().any(|t| t == host_tab) => Owner::Mine,
            PageTab::Host(_) => Owner::Unknown,
            PageTab::Hub { hub, tab } => {
                let Some(hub) = hub.upgrade() else {
                    return Owner::Unknown;
                };
                match hub.tab_for_host(host_tab) {
                    Some(owner) if owner == *tab => Owner::Mine,
                    Some(owner) => Owner::Tab(hub.handle(&owner).unwrap_or_else(|| owner.to_string())),
                    None => Owner::Unknown,
                }
            }
        }
    }

    /// This agent's open tabs, oldest first (empty for tools that act on the active tab).
    pub(crate) fn mine(&self) -> Vec<String> {
        match &self.tab {
            PageTab::Active => Vec::new(),
            PageTab::Host(_) => self.own().tabs.clone(),
            PageTab::Hub { hub, tab } => hub.upgrade().map(|h| h.host_tabs(tab)).unwrap_or_default(),
        }
    }

    /// The agent opened `host_tab` (now at `url`): gives it to its owner.
    pub(crate) async fn adopt(&self, host_tab: &str, url: &str) -> Result<Adopted, ToolError> {
        match &self.tab {
            PageTab::Active => Ok(Adopted::Mine),
            PageTab::Host(_) => {
                self.work_in(host_tab)?;
                Ok(Adopted::Mine)
            }
            PageTab::Hub { hub, tab } => {
                let hub = Self::hub(hub)?;
                let opened = OpenedTab {
                    opener: tab.clone(),
                    host_tab: host_tab.to_owned(),
                    url: url.to_owned(),
                };
                let owner = hub
                    .adopt_host_tab(&opened)
                    .await
                    .map_err(|e| ToolError::model(format!("tab {host_tab} opened, but no agent could take it: {e}")))?;
                if owner == *tab {
                    Ok(Adopted::Mine)
                } else {
                    Ok(Adopted::NewAgent(
                        hub.handle(&owner).unwrap_or_else(|| owner.to_string()),
                    ))
                }
            }
        }
    }

    /// Makes `host_tab` (one of this agent's) the tab the tools act on.
    pub(crate) fn work_in(&self, host_tab: &str) -> Result<(), ToolError> {
        match &self.tab {
            PageTab::Active => {}
            PageTab::Host(_) => {
                let mut own = self.own();
                if !own.tabs.iter().any(|t| t == host_tab) {
                    own.tabs.push(host_tab.to_owned());
                }
                own.working = HostTab::Open(host_tab.to_owned());
            }
            PageTab::Hub { hub, tab } => Self::hub(hub)?
                .wire_host_tab(tab, host_tab)
                .map_err(|e| ToolError::model(e.to_string()))?,
        }
        Ok(())
    }

    /// The agent closed its tab `host_tab`. When it worked there and owns another tab, it works
    /// in the newest of those now (returned).
    pub(crate) fn closed_by_agent(&self, host_tab: &str) -> Result<Option<String>, ToolError> {
        let was_working = self.working().ok().flatten().as_deref() == Some(host_tab);
        self.forget(host_tab);
        if !was_working {
            return Ok(None);
        }
        let Some(next) = self.mine().pop() else {
            return Ok(None);
        };
        self.work_in(&next)?;
        Ok(Some(next))
    }
}

/// What a page tool answers once the tab its agent worked in has closed.
fn closed_message(host_tab: &str, others: &[String]) -> String {
    let mut text = format!(
        "this agent's browser tab {host_tab} was closed, so the page tools have no page to act on. Do not retry them: tell the person the tab was closed, or open a new tab with tab_open if the task still needs a page."
    );
    if !others.is_empty() {
        text.push_str(&format!(
            " Your other open tabs: {} (tab_activate one to work in it).",
            others.join(", ")
        ));
    }
    text
}
