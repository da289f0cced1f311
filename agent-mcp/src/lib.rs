//! # agent-mcp
//!
//! MCP both ways for agent-core, on the official Rust SDK (`rmcp`):
//!
//! - **Client** ([`McpClient`]): the tools of an external MCP server (a child process over
//!   stdio, or streamable HTTP) become [`agent_core::Tool`]s named `alias__tool`, gated unless
//!   the server marks them read-only and the host trusts that, with a timeout per call, MCP's
//!   cancel notification when a call is cancelled or times out, results mapped to
//!   [`agent_core::ToolOutput`] (text, JSON, images), server errors as errors the model reads,
//!   reconnects with backoff after a crash, and `tools/list_changed` followed.
//!   A server is not trusted: its results reach the model as untrusted data naming it
//!   ([`agent_core::untrusted::Provenance::mcp_server`]), its error texts wrapped likewise, and what it
//!   lists is bounded (time, [`MAX_LIST_PAGES`], [`MAX_TOOLS`], [`MAX_DESCRIPTION_CHARS`]).
//! - **Server** ([`ToolServer`]): any tool set served to external MCP clients over stdio or
//!   streamable HTTP (loopback by default, browser pages only from allowed origins, with an
//!   optional bearer token), through one dispatch with the host's [`agent_core::Gate`] and
//!   argument validation.
//!
//! [`McpClient::tools`] always returns the server's current tools and [`McpClient::changes`]
//! fires when they change; [`McpClient::sync_agent_tools`] keeps an agent's copy of them
//! current (the next model call of every turn sees the new list). Calls to a tool the server
//! has removed come back as errors the model reads.
//!
//! To serve the very tools an agent uses (one catalog, one dispatch), pass the same `Arc`s:
//! `ToolServer::builder_from_tools(agent.tools().iter().cloned())`, with the agent's gate.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use agent_mcp::{McpClient, McpServerConfig, ToolServer};
//!
//! // Client: an MCP server's tools in an agent.
//! let everything = McpClient::connect(
//!     McpServerConfig::stdio("everything", "npx").args(["-y", "@modelcontextprotocol/server-everything"]),
//! )
//! .await?;
//! let mut builder = agent_core::Agent::builder();
//! for tool in everything.tools() {
//!     builder = builder.tool_arc(tool);
//! }
//!
//! // Server: the same kind of tools served to other MCP clients.
//! let server = ToolServer::builder_from_tools(everything.tools())?.gate(agent_core::AllowAll).build();
//! let http = server.serve_http("127.0.0.1:0".parse()?).await?;
//! println!("serving at {}", http.url());
//! # Ok(()) }
//! ```

#![deny(missing_docs)]

mod client;
mod config;
mod content;
mod error;
mod http_guard;
mod listing;
mod names;
mod server;
mod sync;

pub use client::{McpClient, ServerInfo};
pub use config::{McpServerConfig, McpServerEntry, Transport, servers_from_json};
pub use content::{MAX_ERROR_CHARS, OutputCaps};
pub use error::McpError;
pub use http_guard::new_bearer_token;
pub use listing::{
    MAX_DESCRIPTION_CHARS, MAX_INSTRUCTIONS_CHARS, MAX_LIST_PAGES, MAX_REMOTE_NAME, MAX_SCHEMA_CHARS, MAX_TOOLS,
};
pub use names::{MAX_ALIAS, MAX_TOOL_NAME, SEPARATOR, prefixed as prefixed_tool_name};
pub use server::{HttpServerHandle, MCP_PATH, ToolServer, ToolServerBuilder};

/// Re-exported so hosts can name MCP types (results, content blocks) without their own rmcp.
pub use rmcp;
