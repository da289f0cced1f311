//! MCP both ways (agent-mcp): an MCP server's tools as native tools, and a tool set served over
//! streamable HTTP on loopback.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use agent_core::{Gate, Tool};
use agent_mcp::{HttpServerHandle, McpClient, McpError, McpServerConfig, ToolServer};
use pyo3::prelude::*;

use crate::convert::options_json;
use crate::errors::{config_error, new_error};
use crate::provider::NativeTool;
use crate::pyloop::Loops;
use crate::runtime::spawn_py;
use crate::tool::{PyGate, PyTool};

/// Maps an MCP error: configuration problems are `ConfigError`, anything else `McpError`.
pub fn mcp_error(e: McpError) -> PyErr {
    let kind = match &e {
        McpError::Config(_) => return config_error(e.to_string()),
        McpError::Spawn { .. } => "mcp.spawn",
        McpError::Handshake { .. } => "mcp.handshake",
        McpError::Request { .. } => "mcp.request",
        McpError::Io(_) => "mcp.io",
        McpError::Session(_) => "mcp.session",
        _ => "mcp",
    };
    new_error("McpError", e.to_string(), Some(kind))
}

/// A connection to one MCP server (a child process over stdio, or streamable HTTP).
#[pyclass(module = "agent_core._native", name = "McpClient", frozen)]
pub struct NativeMcpClient {
    inner: McpClient,
}

#[pymethods]
impl NativeMcpClient {
    /// Connects to the server an McpServerEntry dict describes (`command`, `args`, `env`, ...
    /// for stdio; `url`, `headers` for streamable HTTP; timeouts in `_ms` keys). Awaitable.
    #[staticmethod]
    #[pyo3(signature = (alias, entry=None))]
    fn connect<'py>(py: Python<'py>, alias: String, entry: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let entry = options_json(entry)?;
        let config = McpServerConfig::from_json(&alias, &entry).map_err(mcp_error)?;
        spawn_py(py, async move {
            let inner = McpClient::connect(config).await.map_err(mcp_error)?;
            Ok(NativeMcpClient { inner })
        })
    }

    /// The server's current tools, named `alias__tool`.
    fn tools(&self) -> Vec<NativeTool> {
        self.inner.tools().into_iter().map(NativeTool::new).collect()
    }

    /// The current tools' names (`alias__tool`).
    fn tool_names(&self) -> Vec<String> {
        self.inner.tool_names()
    }

    /// The prefix of every tool name.
    #[getter]
    fn alias(&self) -> String {
        self.inner.alias().to_string()
    }

    /// Lists the server's tools again. Awaitable.
    fn refresh_tools<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let inner = self.inner.clone();
        spawn_py(py, async move { inner.refresh_tools().await.map_err(mcp_error) })
    }

    /// Whether the connection is up. Awaitable.
    fn is_connected<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let inner = self.inner.clone();
        spawn_py(py, async move { Ok(inner.is_connected().await) })
    }

    /// The server's name, version, protocol version and instructions from the handshake (None
    /// while disconnected). Awaitable.
    fn server_info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let inner = self.inner.clone();
        spawn_py(py, async move {
            Ok(inner
                .server_info()
                .await
                .map(|i| (i.name, i.version, i.protocol_version, i.instructions)))
        })
    }

    /// Ends the connection (and stops a stdio server). Awaitable.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let inner = self.inner.clone();
        spawn_py(py, async move {
            inner.close().await;
            Ok(())
        })
    }
}

/// A tool set served over MCP's streamable HTTP transport.
#[pyclass(module = "agent_core._native", name = "McpHttpServer", frozen)]
pub struct NativeMcpHttpServer {
    url: String,
    bearer_token: Option<String>,
    handle: Arc<Mutex<Option<HttpServerHandle>>>,
    // The asyncio loops the Python tools and gate run on (kept alive with the server).
    _loops: Arc<Loops>,
}

#[pymethods]
impl NativeMcpHttpServer {
    /// Serves `tools` (Python tools) and `native_tools` at `http://host:port/mcp` (host
    /// 127.0.0.1 when None), gated tools through `gate`. `bearer_token` (a string, or True for
    /// a fresh random one) is required on every request; `allowed_origins` are the browser
    /// origins besides the server's own that may call it. Awaitable.
    #[staticmethod]
    #[pyo3(signature = (tools, native_tools, gate=None, gate_is_async=false, host=None, port=0, name=None, allowed_hosts=None, bearer_token=None, allowed_origins=None))]
    #[allow(clippy::too_many_arguments)]
    fn serve<'py>(
        py: Python<'py>,
        tools: Vec<Bound<'py, PyAny>>,
        native_tools: Vec<PyRef<'py, NativeTool>>,
        gate: Option<Py<PyAny>>,
        gate_is_async: bool,
        host: Option<String>,
        port: u16,
        name: Option<String>,
        allowed_hosts: Option<Vec<String>>,
        bearer_token: Option<Bound<'py, PyAny>>,
        allowed_origins: Option<Vec<String>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let bearer_token = match bearer_token {
            None => None,
            Some(t) if t.is_instance_of::<pyo3::types::PyBool>() => {
                if t.extract::<bool>()? {
                    Some(agent_mcp::new_bearer_token().map_err(mcp_error)?)
                } else {
                    None
                }
            }
            Some(t) => Some(
                t.extract::<String>()
                    .map_err(|_| config_error("bearer_token= takes a string, True (generate one) or None"))?,
            ),
        };
        let loops = Arc::new(Loops::default());
        loops.remember_current(py);
        let mut all: Vec<Arc<dyn Tool>> = Vec::new();
        for tool in &tools {
            all.push(Arc::new(PyTool::from_py(tool, loops.clone())?));
        }
        for tool in &native_tools {
            all.push(tool.inner.clone());
        }
        let host = host.unwrap_or_else(|| "127.0.0.1".to_string());
        let ip: std::net::IpAddr = host
            .parse()
            .map_err(|_| config_error(format!("invalid host {host:?}: give an IP address such as 127.0.0.1")))?;
        let addr = SocketAddr::new(ip, port);
        let mut builder = ToolServer::builder_from_tools(all).map_err(|e| config_error(e.to_string()))?;
        if let Some(g) = gate {
            builder = builder.gate_arc(Arc::new(PyGate::new(g, gate_is_async, loops.clone())) as Arc<dyn Gate>);
        }
        if let Some(n) = name {
            builder = builder.name(n);
        }
        if let Some(h) = allowed_hosts {
            builder = builder.allowed_hosts(h);
        }
        if let Some(t) = &bearer_token {
            builder = builder.bearer_token(t.clone());
        }
        if let Some(o) = allowed_origins {
            builder = builder.allowed_origins(o);
        }
        let server = builder.try_build().map_err(mcp_error)?;
        spawn_py(py, async move {
            let handle = server.serve_http(addr).await.map_err(mcp_error)?;
            Ok(NativeMcpHttpServer {
                url: handle.url(),
                bearer_token,
                handle: Arc::new(Mutex::new(Some(handle))),
                _loops: loops,
            })
        })
    }

    /// The MCP endpoint, such as `http://127.0.0.1:41234/mcp`.
    #[getter]
    fn url(&self) -> String {
        self.url.clone()
    }

    /// The bearer token clients must send (`Authorization: Bearer <token>`), if any.
    #[getter]
    fn bearer_token(&self) -> Option<String> {
        self.bearer_token.clone()
    }

    /// Whether the server still runs (shutdown not called yet).
    fn is_running(&self) -> bool {
        self.handle.lock().map(|h| h.is_some()).unwrap_or(false)
    }

    /// Stops the server and ends every session; safe to call more than once. Awaitable.
    fn shutdown<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let handle = self.handle.lock().ok().and_then(|mut h| h.take());
        spawn_py(py, async move {
            match handle {
                Some(h) => h.shutdown().await.map_err(mcp_error),
                None => Ok(()),
            }
        })
    }
}

/// A fresh random bearer token (256 bits from the operating system, 64 hex digits).
#[pyfunction]
pub fn new_bearer_token() -> PyResult<String> {
    agent_mcp::new_bearer_token().map_err(mcp_error)
}
