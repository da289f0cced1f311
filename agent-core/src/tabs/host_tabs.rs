//! Wiring hub tabs to a browser's own tabs: which browser tab each hub tab's agent works in,
//! and who gets a browser tab an agent opens.
//!
//! The hub knows no browser: a browser tab is the host's id for it, an opaque string. Several
//! browser tabs can belong to one hub tab (tabs its agent opened for itself); one of them is
//! the one its agent works in. The wiring lives in memory only: a browser's tab ids do not
//! outlive the browser, so a restarted host wires its tabs again.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::TabId;

/// A browser tab that a hub tab's agent opened, as the host's [`OpenedTabPolicy`] sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenedTab {
    /// The hub tab whose agent opened it.
    pub opener: TabId,
    /// The host's id for the new browser tab.
    pub host_tab: String,
    /// Its address when it opened (empty for a blank tab).
    pub url: String,
}

/// Who gets a browser tab that a hub tab's agent opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpenedTabOwner {
    /// The agent that opened it, which works in the new tab from then on (the default: an
    /// agent opens a tab to work in it, and nobody else has been told what to do there).
    #[default]
    SameAgent,
    /// A new hub tab with its own agent and session (and the hub's default permissions); the
    /// opener keeps working in its own tab.
    NewAgent,
}

/// The host's choice of who gets a browser tab an agent opened (see
/// [`TabHubBuilder::opened_tab_policy`](super::TabHubBuilder::opened_tab_policy)).
pub type OpenedTabPolicy = Arc<dyn Fn(&OpenedTab) -> OpenedTabOwner + Send + Sync>;

/// The browser tab a hub tab's agent works in.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "state", content = "host_tab", rename_all = "snake_case")]
pub enum HostTab {
    /// No browser tab was ever wired to the hub tab.
    Unwired,
    /// This browser tab, open as far as the host told the hub.
    Open(String),
    /// The browser tab it worked in closed (the host reported it), and no other was chosen.
    Closed(String),
}

impl HostTab {
    /// The open browser tab's id, if there is one.
    pub fn open(&self) -> Option<&str> {
        match self {
            HostTab::Open(id) => Some(id),
            _ => None,
        }
    }
}

/// Every hub tab's browser tabs, and the owner of each browser tab.
#[derive(Default)]
pub(super) struct HostTabIndex {
    owner: HashMap<String, TabId>,
    wired: HashMap<TabId, Wired>,
}

#[derive(Default)]
struct Wired {
    /// The browser tabs that belong to the hub tab, oldest first.
    tabs: Vec<String>,
    current: Option<HostTab>,
}

impl HostTabIndex {
    /// Gives `host_tab` to `tab` (taking it from another hub tab if need be) and makes it the
    /// one `tab`'s agent works in.
    pub(super) fn wire(&mut self, tab: &TabId, host_tab: &str) {
        if let Some(previous) = self.owner.insert(host_tab.to_owned(), tab.clone())
            && previous != *tab
            && let Some(w) = self.wired.get_mut(&previous)
        {
            w.tabs.retain(|t| t != host_tab);
            if w.current.as_ref().and_then(HostTab::open) == Some(host_tab) {
                w.current = None;
            }
        }
        let w = self.wired.entry(tab.clone()).or_default();
        if !w.tabs.iter().any(|t| t == host_tab) {
            w.tabs.push(host_tab.to_owned());
        }
        w.current = Some(HostTab::Open(host_tab.to_owned()));
    }

    /// Forgets a closed browser tab; its hub tab's agent, if it worked there, now has none.
    pub(super) fn closed(&mut self, host_tab: &str) -> Option<TabId> {
        let tab = self.owner.remove(host_tab)?;
        if let Some(w) = self.wired.get_mut(&tab) {
            w.tabs.retain(|t| t != host_tab);
            if w.current.as_ref().and_then(HostTab::open) == Some(host_tab) {
                w.current = Some(HostTab::Closed(host_tab.to_owned()));
            }
        }
        Some(tab)
    }

    pub(super) fn current(&self, tab: &TabId) -> HostTab {
        self.wired
            .get(tab)
            .and_then(|w| w.current.clone())
            .unwrap_or(HostTab::Unwired)
    }

    pub(super) fn tabs(&self, tab: &TabId) -> Vec<String> {
        self.wired.get(tab).map(|w| w.tabs.clone()).unwrap_or_default()
    }

    pub(super) fn owner(&self, host_tab: &str) -> Option<TabId> {
        self.owner.get(host_tab).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_browser_tab_has_one_owner_and_closing_it_is_remembered() {
        let (a, b) = (TabId::new_random(), TabId::new_random());
        let mut index = HostTabIndex::default();
        index.wire(&a, "t1");
        index.wire(&a, "t2");
        assert_eq!(index.current(&a), HostTab::Open("t2".into()));
        assert_eq!(index.tabs(&a), ["t1", "t2"]);
        // Taking t2 over leaves a with no tab to work in, not with the other one.
        index.wire(&b, "t2");
        assert_eq!(index.owner("t2"), Some(b.clone()));
        assert_eq!(index.tabs(&a), ["t1"]);
        assert!(index.current(&a).open().is_none());
        assert_eq!(index.closed("t2"), Some(b.clone()));
        assert_eq!(index.current(&b), HostTab::Closed("t2".into()));
        assert_eq!(index.current(&TabId::new_random()), HostTab::Unwired);
        assert_eq!(index.closed("t2"), None);
    }
}
