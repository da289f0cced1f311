//! The script world the CDP host evaluates in: chromiumoxide's isolated utility world of the
//! tab's main frame, not the page's own. The DOM is shared, but the page's scripts cannot see
//! or change the tools' globals (page.js keeps its refs there), nor patch the built-ins the
//! tools call. chromiumoxide creates that world for every new document, so it follows
//! navigations.

use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::js_protocol::runtime::ExecutionContextId;
use chromiumoxide::error::CdpError;

/// How long to wait for a new document's isolated world to exist.
const WORLD_WAIT: Duration = Duration::from_secs(2);

/// The isolated world's execution context of `page`'s main frame, waiting briefly for a
/// document that was just created; `None` if it never appears (the caller refuses to fall
/// back to the page's own world).
pub(crate) async fn tools_context(page: &Page) -> Result<Option<ExecutionContextId>, CdpError> {
    let deadline = tokio::time::Instant::now() + WORLD_WAIT;
    loop {
        if let Some(context) = page.secondary_execution_context().await? {
            return Ok(Some(context));
        }
        if tokio::time::Instant::now() >= deadline {
            return Ok(None);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
