//! Changing whether a tool is gated.

use std::sync::Arc;

use agent_core::{SessionId, Tool, ToolContext, ToolError, ToolOutput, ToolSpec, async_trait};

/// A tool with its `gated` flag overridden.
struct Regated {
    inner: Arc<dyn Tool>,
    spec: ToolSpec,
}

#[async_trait]
impl Tool for Regated {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: serde_json::Value, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        self.inner.call(args, cx).await
    }

    async fn turn_ended(&self, session_id: &SessionId) {
        self.inner.turn_ended(session_id).await;
    }

    async fn target_host(&self, args: &serde_json::Value) -> Option<String> {
        self.inner.target_host(args).await
    }
}

/// Returns `tool` with its gating set to `gated` (for example to let a trusted host's
/// fs_write run without asking).
///
/// ```
/// use agent_tools::{FsPolicy, fs_tools, with_gated};
/// let tools: Vec<_> = fs_tools(FsPolicy::root("/tmp"))
///     .into_iter()
///     .map(|t| if t.spec().name == "fs_write" { with_gated(t, false) } else { t })
///     .collect();
/// assert!(tools.iter().all(|t| t.spec().name != "fs_write" || !t.spec().gated));
/// ```
pub fn with_gated(tool: Arc<dyn Tool>, gated: bool) -> Arc<dyn Tool> {
    let mut spec = tool.spec().clone();
    spec.gated = gated;
    Arc::new(Regated { inner: tool, spec })
}
