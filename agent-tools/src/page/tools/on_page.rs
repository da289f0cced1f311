//! The page a page tool acts on, as the gate sees it: every page tool names the host of its
//! tab's page ([`Tool::target_host`]), so a person can approve a tool for the pages of one site.

use std::sync::Arc;

use agent_core::{SessionId, Tool, ToolContext, ToolError, ToolOutput, ToolSpec, async_trait};
use serde_json::Value;

use super::shared::Shared;

/// A page tool that names its page's host.
struct OnPage {
    inner: Arc<dyn Tool>,
    shared: Arc<Shared>,
}

#[async_trait]
impl Tool for OnPage {
    fn spec(&self) -> &ToolSpec {
        self.inner.spec()
    }

    async fn call(&self, args: Value, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        self.inner.call(args, cx).await
    }

    async fn turn_ended(&self, session_id: &SessionId) {
        self.inner.turn_ended(session_id).await;
    }

    async fn target_host(&self, _args: &Value) -> Option<String> {
        self.shared.page_host().await
    }
}

/// `tool`, naming the host of the page in the tab the set works in.
pub(crate) fn on_page(sh: &Arc<Shared>, tool: Arc<dyn Tool>) -> Arc<dyn Tool> {
    Arc::new(OnPage {
        inner: tool,
        shared: sh.clone(),
    })
}

impl Shared {
    /// The host of the page in the tab the tools work in (`None`: no tab, or an address
    /// without a host such as `about:blank`). From the browser's record of the tab's address
    /// ([`crate::BrowserHost::tabs`]), never from the page's own scripts or text: a page can
    /// change its path with the history API, not its host.
    pub(crate) async fn page_host(&self) -> Option<String> {
        let tab = self.working().ok()?;
        let tabs = self.host.tabs().await.ok()?;
        let info = match tab {
            Some(id) => tabs.into_iter().find(|t| t.id == id)?,
            None => tabs.into_iter().find(|t| t.active)?,
        };
        let url = url::Url::parse(&info.url).ok()?;
        url.host_str().map(str::to_owned)
    }
}
