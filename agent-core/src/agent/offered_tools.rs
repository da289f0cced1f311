//! The tool set a turn with external tools offers the model: the agent's tools and the host's,
//! whose calls the loop parks on instead of running (see `external_tools`).

use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::pending_tools::{ExternalTool, ExternalToolError};
use crate::tool::{Tool, ToolContext, ToolError, ToolOutput, ToolSet, ToolSpec};

/// A turn's external tools, checked, with the tool set the model is offered (the agent's
/// tools and these), rebuilt only when the agent's tools are replaced.
pub(crate) struct ExternalSet {
    tools: Arc<[ExternalTool]>,
    /// The agent's tool set the offered one was built from, and the offered one.
    offered: Mutex<Option<(Arc<ToolSet>, Arc<ToolSet>)>>,
}

impl ExternalSet {
    /// Checks `tools` against the agent's own (`agent_tools`): no name clash, valid schemas.
    pub fn new(tools: Vec<ExternalTool>, agent_tools: &Arc<ToolSet>) -> Result<Self, ExternalToolError> {
        let offered = offer(agent_tools, &tools)?;
        Ok(ExternalSet {
            tools: tools.into(),
            offered: Mutex::new(Some((agent_tools.clone(), Arc::new(offered)))),
        })
    }

    /// The external tools of a parked turn, offered again by the turn that continues it.
    pub fn parked(tools: Arc<[ExternalTool]>) -> Self {
        ExternalSet {
            tools,
            offered: Mutex::new(None),
        }
    }

    /// The tools as the host gave them.
    pub fn tools(&self) -> &Arc<[ExternalTool]> {
        &self.tools
    }

    /// Whether `name` is one of them.
    pub fn has(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t.name == name)
    }

    /// The agent's tools (`agent_tools`, the current snapshot) and these. An external tool whose
    /// name the agent took since the turn started is left out: the agent's own wins.
    pub fn offered(&self, agent_tools: Arc<ToolSet>) -> Arc<ToolSet> {
        let Ok(mut cached) = self.offered.lock() else {
            return agent_tools;
        };
        if let Some((base, offered)) = cached.as_ref()
            && Arc::ptr_eq(base, &agent_tools)
        {
            return offered.clone();
        }
        let mut set = ToolSet::clone(&agent_tools);
        for tool in self.tools.iter() {
            if set.has(&tool.name) {
                tracing::warn!(tool = %tool.name, "an external tool's name is now one of the agent's tools: not offered");
                continue;
            }
            if let Err(e) = set.register(HostTool::new(tool)) {
                tracing::warn!(tool = %tool.name, error = %e, "external tool not offered");
            }
        }
        let offered = Arc::new(set);
        *cached = Some((agent_tools, offered.clone()));
        offered
    }
}

/// The agent's tools with `tools` added, or why they cannot be.
fn offer(agent_tools: &ToolSet, tools: &[ExternalTool]) -> Result<ToolSet, ExternalToolError> {
    let mut set = ToolSet::clone(agent_tools);
    for tool in tools {
        if set.has(&tool.name) {
            return Err(ExternalToolError::NameClash(tool.name.clone()));
        }
        set.register(HostTool::new(tool))
            .map_err(|e| ExternalToolError::InvalidSchema {
                name: tool.name.clone(),
                reason: e.to_string(),
            })?;
    }
    Ok(set)
}

/// An external tool as the tool set holds it: its schema, for the model and for checking the
/// arguments. The loop parks on its calls; it never runs.
struct HostTool(ToolSpec);

impl HostTool {
    fn new(tool: &ExternalTool) -> Self {
        HostTool(ToolSpec::new(
            tool.name.clone(),
            tool.description.clone(),
            tool.parameters.clone(),
        ))
    }
}

#[async_trait]
impl Tool for HostTool {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn call(&self, _args: serde_json::Value, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::model(format!(
            "{} runs on the host, not in the agent",
            self.0.name
        )))
    }
}
