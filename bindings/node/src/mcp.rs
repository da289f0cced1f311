//! MCP both ways (agent-mcp): an MCP server's tools as a [`NativeToolSet`], and the tools and
//! gate of a [`NativeAgentBuilder`] served over streamable HTTP on loopback.

use std::sync::Arc;

use agent_mcp::{HttpServerHandle, McpClient, McpServerConfig, ToolServer};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use tokio::sync::Mutex;

use crate::agent::NativeAgentBuilder;
use crate::error::coded;
use crate::toolsets::NativeToolSet;

/// A connection to one MCP server.
#[napi]
pub struct NativeMcpClient {
    inner: McpClient,
}

/// Connects to an MCP server (starting it for stdio), completes the handshake and lists its
/// tools. `entry` is an `McpServerEntry` options object (camelCase keys of the options format);
/// it is read before anything starts.
#[napi(
    ts_args_type = "alias: string, entry: object",
    ts_return_type = "Promise<NativeMcpClient>"
)]
pub fn mcp_connect<'env>(
    env: &'env Env,
    alias: String,
    entry: Unknown<'_>,
) -> Result<PromiseRaw<'env, NativeMcpClient>> {
    const WHAT: &str = "McpClient.connect options";
    let value = crate::options::value_of(WHAT, entry)?;
    let config = crate::options::parse_with(WHAT, value, |v| McpServerConfig::from_json(&alias, &v))?;
    env.spawn_future(async move {
        let client = McpClient::connect(config).await.map_err(|e| coded("mcp", e))?;
        Ok(NativeMcpClient { inner: client })
    })
}

#[napi]
impl NativeMcpClient {
    /// The server's alias.
    #[napi(getter)]
    pub fn alias(&self) -> String {
        self.inner.alias().to_owned()
    }

    /// The server's current tools, as a tool set an agent accepts.
    #[napi]
    pub fn tools(&self) -> NativeToolSet {
        NativeToolSet {
            tools: self.inner.tools(),
        }
    }

    /// The current tools' (prefixed) names.
    #[napi]
    pub fn tool_names(&self) -> Vec<String> {
        self.inner.tool_names()
    }

    /// Lists the server's tools again.
    #[napi]
    pub async fn refresh_tools(&self) -> Result<()> {
        self.inner.refresh_tools().await.map_err(|e| coded("mcp", e))
    }

    /// The server's name, version, protocol version and instructions.
    #[napi(
        ts_return_type = "{ name: string | null, version: string | null, protocolVersion: string, instructions: string | null } | null"
    )]
    pub async fn server_info(&self) -> Option<serde_json::Value> {
        let info = self.inner.server_info().await?;
        Some(serde_json::json!({
            "name": info.name,
            "version": info.version,
            "protocolVersion": info.protocol_version,
            "instructions": info.instructions,
        }))
    }

    /// Whether the connection is up.
    #[napi]
    pub async fn is_connected(&self) -> bool {
        self.inner.is_connected().await
    }

    /// Closes the connection (and stops a stdio server).
    #[napi]
    pub async fn close(&self) {
        self.inner.close().await;
    }
}

/// Options of a served MCP endpoint.
#[napi(object)]
pub struct McpServeOptions {
    /// The server's name in the handshake (default `agent-core`).
    pub name: Option<String>,
    /// Instructions sent to clients in the handshake.
    pub instructions: Option<String>,
    /// The loopback port (default 0: any free port).
    pub port: Option<u32>,
    /// The loopback host (default `127.0.0.1`).
    pub host: Option<String>,
    /// Require `Authorization: Bearer <token>` on every request (401 otherwise).
    pub bearer_token: Option<String>,
    /// Browser origins (`scheme://host[:port]`) besides the server's own that may call it.
    pub allowed_origins: Option<Vec<String>>,
}

/// A running MCP endpoint.
#[napi]
pub struct NativeMcpServer {
    url: String,
    bearer_token: Option<String>,
    handle: Arc<Mutex<Option<HttpServerHandle>>>,
}

#[napi]
impl NativeMcpServer {
    /// The endpoint URL, such as `http://127.0.0.1:41234/mcp`.
    #[napi(getter)]
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// The bearer token clients must send, if any.
    #[napi(getter)]
    pub fn bearer_token(&self) -> Option<String> {
        self.bearer_token.clone()
    }

    /// Stops the server and ends every session (a second call does nothing).
    #[napi]
    pub async fn shutdown(&self) -> Result<()> {
        let handle = self.handle.lock().await.take();
        if let Some(h) = handle {
            h.shutdown().await.map_err(|e| coded("mcp", e))?;
        }
        Ok(())
    }
}

#[napi]
impl NativeAgentBuilder {
    /// Serves the builder's tools (native, and JS ones once `seal` ran) with its gate over
    /// MCP's streamable HTTP on loopback. Without a gate, gated tools are denied.
    #[napi]
    pub async fn serve_mcp(&self, options: McpServeOptions) -> Result<NativeMcpServer> {
        let gate = self.recipe.gate();
        let mut b = ToolServer::builder_from_tools(self.recipe.tools()).map_err(|e| coded("tool_duplicate", e))?;
        if let Some(g) = gate {
            b = b.gate_arc(std::sync::Arc::new(crate::approvals::NoAsk(g)));
        }
        if let Some(n) = options.name {
            b = b.name(n);
        }
        if let Some(i) = options.instructions {
            b = b.instructions(i);
        }
        if let Some(t) = &options.bearer_token {
            b = b.bearer_token(t.clone());
        }
        if let Some(o) = options.allowed_origins {
            b = b.allowed_origins(o);
        }
        let server = b.try_build().map_err(|e| coded("invalid_argument", e))?;
        let host = options.host.unwrap_or_else(|| "127.0.0.1".to_owned());
        let port = u16::try_from(options.port.unwrap_or(0))
            .map_err(|_| coded("invalid_argument", "port must be 0 to 65535"))?;
        let ip: std::net::IpAddr = if host == "localhost" {
            std::net::Ipv4Addr::LOCALHOST.into()
        } else {
            host.parse()
                .map_err(|e| coded("invalid_argument", format!("host {host:?}: {e}")))?
        };
        let handle = server
            .serve_http(std::net::SocketAddr::new(ip, port))
            .await
            .map_err(|e| coded("mcp", e))?;
        Ok(NativeMcpServer {
            url: handle.url(),
            bearer_token: options.bearer_token,
            handle: Arc::new(Mutex::new(Some(handle))),
        })
    }
}

/// A fresh random bearer token (256 bits from the operating system, 64 hex digits).
#[napi]
pub fn new_bearer_token() -> Result<String> {
    agent_mcp::new_bearer_token().map_err(|e| coded("mcp", e))
}
