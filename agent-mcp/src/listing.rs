//! What the client takes from a server's `tools/list`. The server may be hostile: the listing is
//! bounded in time, pages and tools, and each tool's name, description and schema are bounded
//! before a model sees them (a description reaches the model on every turn, unwrapped).

use std::time::Duration;

use agent_core::ToolSpec;
use agent_core::untrusted::neutralize_markers;
use rmcp::model::PaginatedRequestParams;
use rmcp::service::{Peer, RoleClient};

use crate::config::McpServerConfig;
use crate::error::McpError;

/// Pages of `tools/list` read from one server; a server still sending `nextCursor` after these
/// is cut off (its tools so far are kept, and a warning is logged).
pub const MAX_LIST_PAGES: usize = 100;

/// Tools taken from one server; the server's first ones are kept (more are far beyond what a
/// model can choose from anyway).
pub const MAX_TOOLS: usize = 1_000;

/// Characters kept of a tool's description (longer ones are cut with a note).
pub const MAX_DESCRIPTION_CHARS: usize = 4_000;

/// Longest remote tool name accepted, in bytes (MCP recommends at most 128 characters); a tool
/// with a longer name is left out.
pub const MAX_REMOTE_NAME: usize = 256;

/// Longest input schema accepted, in characters of JSON; a tool with a larger one is left out.
pub const MAX_SCHEMA_CHARS: usize = 50_000;

/// Characters kept of the instructions a server sends in the handshake.
pub const MAX_INSTRUCTIONS_CHARS: usize = 8_000;

/// Lists every page of the server's tools within `timeout`, up to [`MAX_LIST_PAGES`] pages
/// and [`MAX_TOOLS`] tools.
pub(crate) async fn list_tools(
    peer: &Peer<RoleClient>,
    alias: &str,
    timeout: Duration,
) -> Result<Vec<rmcp::model::Tool>, McpError> {
    let pages = async {
        let mut tools = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_LIST_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor.take());
            let page = peer.list_tools(Some(params)).await.map_err(|e| McpError::Request {
                alias: alias.to_owned(),
                message: format!("tools/list failed: {e}"),
            })?;
            tools.extend(page.tools);
            if tools.len() > MAX_TOOLS {
                tracing::warn!(
                    alias,
                    "MCP server lists more than {MAX_TOOLS} tools; keeping the first {MAX_TOOLS}"
                );
                tools.truncate(MAX_TOOLS);
                return Ok(tools);
            }
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(tools),
            }
        }
        tracing::warn!(
            alias,
            "MCP server's tools/list goes on past {MAX_LIST_PAGES} pages; keeping the tools so far"
        );
        Ok(tools)
    };
    tokio::time::timeout(timeout, pages).await.unwrap_or_else(|_| {
        Err(McpError::Request {
            alias: alias.to_owned(),
            message: format!("tools/list got no complete answer within {} ms", timeout.as_millis()),
        })
    })
}

/// The agent tool spec for one remote tool, named `name`, or why it is left out.
pub(crate) fn spec_for(tool: &rmcp::model::Tool, name: String, config: &McpServerConfig) -> Result<ToolSpec, String> {
    if tool.name.len() > MAX_REMOTE_NAME {
        return Err(format!(
            "its name is {} bytes long (at most {MAX_REMOTE_NAME})",
            tool.name.len()
        ));
    }
    let mut parameters = serde_json::Value::Object((*tool.input_schema).clone());
    let schema_chars = parameters.to_string().chars().count();
    if schema_chars > MAX_SCHEMA_CHARS {
        return Err(format!(
            "its inputSchema is {schema_chars} characters of JSON (at most {MAX_SCHEMA_CHARS})"
        ));
    }
    if let Some(obj) = parameters.as_object_mut()
        && !obj.contains_key("type")
    {
        obj.insert("type".into(), "object".into());
    }
    // A schema the validator cannot compile would make the whole tool set fail to register.
    if let Err(e) = jsonschema::validator_for(&parameters) {
        return Err(format!("its inputSchema is invalid: {e}"));
    }
    let read_only = tool.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true);
    let free = config.trust_read_only_hints && read_only;
    let description = tool
        .description
        .as_deref()
        .or(tool.title.as_deref())
        .unwrap_or_default();
    Ok(
        ToolSpec::new(name, bounded_text(description, MAX_DESCRIPTION_CHARS), parameters)
            .gated(!free)
            .parallel_safe(free)
            .timeout(config.call_timeout),
    )
}

/// Server text shown to a model outside untrusted-content markers (a description, the
/// handshake's instructions): marker text neutralised, at most `max_chars` characters.
pub(crate) fn bounded_text(text: &str, max_chars: usize) -> String {
    let text = neutralize_markers(text);
    match text.char_indices().nth(max_chars) {
        None => text.into_owned(),
        Some((end, _)) => format!(
            "{}\n[cut: the MCP server sent {} characters]",
            &text[..end],
            text.chars().count()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_text_cuts_on_characters_and_neutralises_markers() {
        assert_eq!(bounded_text("short", 10), "short");
        assert_eq!(
            bounded_text("研究开发", 2),
            "研究\n[cut: the MCP server sent 4 characters]"
        );
        assert_eq!(bounded_text("a</untrusted-content>", 100), "a</[marker removed]>");
    }
}
