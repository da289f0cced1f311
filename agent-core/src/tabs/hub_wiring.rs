//! The hub's side of wiring hub tabs to a host's browser tabs (see `host_tabs`): the host
//! opens and wires tabs, reports closed ones, and hands over the tabs agents open.

use super::TabId;
use super::host_tabs::{HostTab, OpenedTab, OpenedTabOwner};
use super::hub::TabHub;
use super::hub_inner::{read, write};
use super::types::TabError;

impl TabHub {
    /// Opens a new hub tab (random id, default permissions, a new session) wired to the host's
    /// browser tab `host_tab`: its agent works in that tab. The wiring is in place before the
    /// agent is built.
    pub async fn open_tab_for_host(&self, host_tab: impl Into<String>) -> Result<TabId, TabError> {
        let host_tab = host_tab.into();
        let id = TabId::new_random();
        write(&self.inner.host_tabs).wire(&id, &host_tab);
        if let Err(e) = self.open_tab_with(id.clone(), self.inner.default_permissions).await {
            write(&self.inner.host_tabs).closed(&host_tab);
            return Err(e);
        }
        Ok(id)
    }

    /// Wires the host's browser tab `host_tab` to the hub tab `tab` and makes it the one that
    /// tab's agent works in (its page tools act there from their next call). A browser tab
    /// wired to another hub tab is taken from it.
    pub fn wire_host_tab(&self, tab: &TabId, host_tab: impl Into<String>) -> Result<(), TabError> {
        if !read(&self.inner.slots).contains_key(tab) {
            return Err(TabError::NotFound(tab.clone()));
        }
        write(&self.inner.host_tabs).wire(tab, &host_tab.into());
        Ok(())
    }

    /// Tells the hub that a browser tab closed. Returns the hub tab it belonged to; that tab's
    /// agent, if it worked there, has no browser tab until one is wired again, and its page
    /// tools say so. The hub tab stays open: close it with [`TabHub::close_tab`] when it has
    /// nothing left to do.
    pub fn host_tab_closed(&self, host_tab: &str) -> Option<TabId> {
        write(&self.inner.host_tabs).closed(host_tab)
    }

    /// The browser tab the hub tab's agent works in.
    pub fn host_tab(&self, tab: &TabId) -> HostTab {
        read(&self.inner.host_tabs).current(tab)
    }

    /// Every open browser tab that belongs to the hub tab, oldest first.
    pub fn host_tabs(&self, tab: &TabId) -> Vec<String> {
        read(&self.inner.host_tabs).tabs(tab)
    }

    /// The hub tab a browser tab belongs to.
    pub fn tab_for_host(&self, host_tab: &str) -> Option<TabId> {
        read(&self.inner.host_tabs).owner(host_tab)
    }

    /// Hands a browser tab that the agent of `opened.opener` opened to its owner, as the hub's
    /// [`OpenedTabPolicy`](super::OpenedTabPolicy) decides: wired to the opener (which then works in it), or to a new
    /// hub tab with its own agent. Returns the hub tab that got it.
    pub async fn adopt_host_tab(&self, opened: &OpenedTab) -> Result<TabId, TabError> {
        match (self.inner.opened_tab_policy)(opened) {
            OpenedTabOwner::SameAgent => {
                self.wire_host_tab(&opened.opener, opened.host_tab.clone())?;
                Ok(opened.opener.clone())
            }
            OpenedTabOwner::NewAgent => self.open_tab_for_host(opened.host_tab.clone()).await,
        }
    }
}
