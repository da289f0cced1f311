//! Keeping an agent's tool set in step with a server's changing tool list.

use std::sync::{Arc, Weak};

use agent_core::{Agent, ToolSet};
use tokio::task::JoinHandle;

use crate::client::{Inner, McpClient};
use crate::names::SEPARATOR;

impl McpClient {
    /// Puts this server's current tools into `agent` now, and again each time the server's
    /// tool list changes (`tools/list_changed`, a reconnect, a refresh): the agent's other tools
    /// stay, this server's `alias__*` tools are replaced. The next model call of every turn
    /// sees the new list.
    ///
    /// The task ends when the client is closed or dropped, or when abort is called on the
    /// returned handle.
    pub fn sync_agent_tools(&self, agent: &Agent) -> Result<JoinHandle<()>, agent_core::ToolSetError> {
        replace_server_tools(self, agent)?;
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let mut changes = self.changes();
        let agent = agent.clone();
        Ok(tokio::spawn(async move {
            while changes.changed().await.is_ok() {
                let Some(inner) = weak.upgrade() else { return };
                let client = McpClient { inner };
                if let Err(e) = replace_server_tools(&client, &agent) {
                    tracing::warn!(alias = client.alias(), error = %e, "could not update the agent's MCP tools");
                }
            }
        }))
    }
}

fn replace_server_tools(client: &McpClient, agent: &Agent) -> Result<(), agent_core::ToolSetError> {
    let prefix = format!("{}{SEPARATOR}", client.alias());
    let mut next = ToolSet::new();
    for tool in agent.tools().iter() {
        if !tool.spec().name.starts_with(&prefix) {
            next.register_arc(tool.clone())?;
        }
    }
    client.register_into(&mut next)?;
    agent.replace_tools(next)
}
