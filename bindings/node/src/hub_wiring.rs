//! The tab hub's wiring methods: which browser tab of the host each hub tab works in
//! (`openTabForHost`, `wireHostTab`, `hostTabClosed`, `hostTab`, `hostTabs`, `tabForHost`) and
//! who gets a browser tab an agent opened (`adoptHostTab`).

use agent_core::tabs::{OpenedTab, TabError, TabId};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::convert::{Json, js};
use crate::tabs::{NativeTabHub, tab_error, tab_id};

#[napi]
impl NativeTabHub {
    /// Opens a hub tab wired to the host's browser tab `hostTab`; returns its id.
    #[napi]
    pub async fn open_tab_for_host(&self, host_tab: String) -> Result<String> {
        let id = self.inner.open_tab_for_host(host_tab).await.map_err(tab_error)?;
        Ok(id.to_string())
    }

    /// Wires the browser tab `hostTab` to the hub tab `tab` (taking it from another hub tab)
    /// and makes it the one that tab's agent works in.
    #[napi]
    pub fn wire_host_tab(&self, tab: String, host_tab: String) -> Result<()> {
        self.inner.wire_host_tab(&tab_id(&tab)?, host_tab).map_err(tab_error)
    }

    /// The host reports that a browser tab closed; returns the hub tab it belonged to.
    #[napi]
    pub fn host_tab_closed(&self, host_tab: String) -> Option<String> {
        self.inner.host_tab_closed(&host_tab).map(|t| t.to_string())
    }

    /// The browser tab the hub tab's agent works in: `{ state: 'unwired' }`, or `open` /
    /// `closed` with `hostTab`.
    #[napi(ts_return_type = "any")]
    pub fn host_tab(&self, tab: String) -> Result<Json> {
        let id = self.known(&tab)?;
        Ok(js(&self.inner.host_tab(&id)))
    }

    /// Every open browser tab that belongs to the hub tab, oldest first.
    #[napi]
    pub fn host_tabs(&self, tab: String) -> Result<Vec<String>> {
        let id = self.known(&tab)?;
        Ok(self.inner.host_tabs(&id))
    }

    /// The hub tab a browser tab belongs to.
    #[napi]
    pub fn tab_for_host(&self, host_tab: String) -> Option<String> {
        self.inner.tab_for_host(&host_tab).map(|t| t.to_string())
    }

    /// Hands a browser tab the agent of `opener` opened (outside tab_open: a popup, say) to
    /// its owner, as the hub's opened-tab policy decides; returns the hub tab that got it.
    #[napi]
    pub async fn adopt_host_tab(&self, opener: String, host_tab: String, url: Option<String>) -> Result<String> {
        let opened = OpenedTab {
            opener: tab_id(&opener)?,
            host_tab,
            url: url.unwrap_or_default(),
        };
        let owner = self.inner.adopt_host_tab(&opened).await.map_err(tab_error)?;
        Ok(owner.to_string())
    }
}

impl NativeTabHub {
    /// The id of one of the hub's tabs, or an error saying it is none of them (the wiring
    /// lookups would otherwise answer "unwired" for a mistyped id).
    fn known(&self, tab: &str) -> Result<TabId> {
        let id = tab_id(tab)?;
        if self.inner.tab(&id).is_none() {
            return Err(tab_error(TabError::NotFound(id)));
        }
        Ok(id)
    }
}
