//! The MCP client: an external server's tools as [`agent_core::Tool`]s.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex as StdMutex, Weak};
use std::time::Duration;

use agent_core::untrusted::{Provenance, one_line, wrap_untrusted};
use agent_core::{Tool, ToolContext, ToolError, ToolOutput, ToolSet, ToolSetError, ToolSpec};
use async_trait::async_trait;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
#[allow(deprecated)] // Roots are deprecated by the newest MCP revision but most servers still use them.
use rmcp::model::{ListRootsResult, Root};
use rmcp::service::{NotificationContext, RequestContext, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, ServiceError, ServiceExt};
use tokio::io::AsyncReadExt;
use tokio::sync::{Mutex, watch};
use tokio::time::Instant;

use crate::config::{McpServerConfig, Transport};
use crate::content;
use crate::error::McpError;
use crate::listing::{self, MAX_INSTRUCTIONS_CHARS};
use crate::names;

/// Bytes of a stdio server's stderr kept for error messages.
const STDERR_TAIL: usize = 2048;

/// What an MCP server said about itself in the handshake.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerInfo {
    /// The implementation's name, when given.
    pub name: Option<String>,
    /// The implementation's version, when given.
    pub version: Option<String>,
    /// The negotiated protocol version.
    pub protocol_version: String,
    /// How to use the server, written for a model, when given.
    pub instructions: Option<String>,
}

/// A connection to one MCP server, and the server's tools as agent tools.
///
/// Cheap to clone; clones share the connection. The tools it hands out keep the connection
/// alive. A call to a server that crashed or disconnected fails with a clear, retryable error
/// for the model, and the next call starts (or reconnects to) the server again, waiting
/// longer after each failed attempt in a row (see [`McpServerConfig::backoff`]).
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use agent_mcp::{McpClient, McpServerConfig};
///
/// let client = McpClient::connect(McpServerConfig::stdio("everything", "npx")
///     .args(["-y", "@modelcontextprotocol/server-everything"])).await?;
/// let mut tools = agent_core::ToolSet::new();
/// client.register_into(&mut tools)?; // everything__echo, everything__get-sum, ...
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct McpClient {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("alias", &self.inner.config.alias)
            .field("endpoint", &self.inner.config.endpoint())
            .finish()
    }
}

pub(crate) struct Inner {
    config: McpServerConfig,
    state: Mutex<ConnState>,
    catalog: StdMutex<Arc<Vec<RemoteTool>>>,
    generation: watch::Sender<u64>,
    closed: tokio_util::sync::CancellationToken,
}

#[derive(Default)]
struct ConnState {
    current: Option<Arc<Connection>>,
    failures: u32,
    retry_at: Option<Instant>,
    next_id: u64,
}

struct Connection {
    id: u64,
    service: RunningService<RoleClient, Handler>,
    pid: Option<u32>,
    stderr: Arc<StdMutex<Vec<u8>>>,
}

impl Connection {
    fn alive(&self) -> bool {
        !self.service.is_closed() && !self.service.peer().is_transport_closed()
    }

    fn stderr_tail(&self) -> String {
        tail_text(&self.stderr)
    }
}

fn tail_text(buf: &StdMutex<Vec<u8>>) -> String {
    let bytes = buf.lock().map(|b| b.clone()).unwrap_or_default();
    String::from_utf8_lossy(&bytes).trim().to_owned()
}

#[derive(Debug, Clone, PartialEq)]
struct RemoteTool {
    remote: String,
    spec: ToolSpec,
}

/// The MCP client handler: answers roots requests and follows `tools/list_changed`.
struct Handler {
    inner: Weak<Inner>,
    roots: Vec<String>,
}

#[allow(deprecated)] // Roots are deprecated by the newest MCP revision but used by most servers.
impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.roots.is_empty() {
            ClientCapabilities::default()
        } else {
            ClientCapabilities::builder().enable_roots().build()
        };
        ClientConfig::new(
            capabilities,
            Implementation::new("agent-mcp", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn list_roots(&self, _context: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        Ok(ListRootsResult::new(self.roots.iter().map(Root::new).collect()))
    }

    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let alias = self.inner.upgrade().map(|i| i.config.alias.clone()).unwrap_or_default();
        tracing::info!(alias = %alias, level = ?params.level, logger = ?params.logger, data = %params.data, "MCP server log");
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let Some(inner) = self.inner.upgrade() else {
            return;
        };
        // Listing from inside the notification handler could wait on the service loop that
        // runs this handler: do it on its own task.
        tokio::spawn(async move {
            if let Err(e) = inner.refresh().await {
                tracing::warn!(alias = %inner.config.alias, error = %e, "refreshing MCP tools after list_changed failed");
            }
        });
    }
}

impl McpClient {
    /// Starts (or connects to) the server, completes the MCP handshake and lists its tools.
    pub async fn connect(config: McpServerConfig) -> Result<McpClient, McpError> {
        if !names::valid_alias(&config.alias) {
            return Err(McpError::Config(format!(
                "alias {:?} must be 1 to {} of [a-zA-Z0-9_-] without \"__\"",
                config.alias,
                names::MAX_ALIAS
            )));
        }
        if let Transport::Stdio { command, .. } = &config.transport
            && command.trim().is_empty()
        {
            return Err(McpError::Config("the stdio command is empty".into()));
        }
        let (generation, _) = watch::channel(0);
        let inner = Arc::new(Inner {
            config,
            state: Mutex::new(ConnState::default()),
            catalog: StdMutex::new(Arc::new(Vec::new())),
            generation,
            closed: tokio_util::sync::CancellationToken::new(),
        });
        {
            let mut state = inner.state.lock().await;
            let conn = inner.open(&mut state).await?;
            state.current = Some(conn.clone());
            drop(state);
            inner.refresh_on(&conn).await?;
        }
        Ok(McpClient { inner })
    }

    /// The server's alias (the prefix of its tool names).
    pub fn alias(&self) -> &str {
        &self.inner.config.alias
    }

    /// The configuration this client was made with.
    pub fn config(&self) -> &McpServerConfig {
        &self.inner.config
    }

    /// The server's current tools as agent tools, in the server's order. Each call builds the
    /// list anew from the latest `tools/list`.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.inner
            .catalog()
            .iter()
            .map(|t| {
                Arc::new(McpTool {
                    inner: self.inner.clone(),
                    remote: t.remote.clone(),
                    spec: t.spec.clone(),
                }) as Arc<dyn Tool>
            })
            .collect()
    }

    /// The current tools' (prefixed) names.
    pub fn tool_names(&self) -> Vec<String> {
        self.inner.catalog().iter().map(|t| t.spec.name.clone()).collect()
    }

    /// The remote (unprefixed) name behind a prefixed tool name.
    pub fn remote_name(&self, prefixed: &str) -> Option<String> {
        self.inner
            .catalog()
            .iter()
            .find(|t| t.spec.name == prefixed)
            .map(|t| t.remote.clone())
    }

    /// Registers the current tools into a tool set.
    pub fn register_into(&self, set: &mut ToolSet) -> Result<(), ToolSetError> {
        for tool in self.tools() {
            set.register_arc(tool)?;
        }
        Ok(())
    }

    /// A receiver that changes each time the tool list changes (after `tools/list_changed`,
    /// a reconnect, or [`McpClient::refresh_tools`]); read [`McpClient::tools`] again then.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.inner.generation.subscribe()
    }

    /// Lists the server's tools again now (connecting first if needed).
    pub async fn refresh_tools(&self) -> Result<(), McpError> {
        let conn = self.inner.connection().await.map_err(|e| McpError::Request {
            alias: self.alias().to_owned(),
            message: e.to_string(),
        })?;
        self.inner.refresh_on(&conn).await
    }

    /// What the server said about itself in the handshake: its name, version, protocol
    /// version and instructions (hosts often add the instructions to the system prompt).
    pub async fn server_info(&self) -> Option<ServerInfo> {
        let state = self.inner.state.lock().await;
        let info = state.current.as_ref()?.service.peer().peer_info()?;
        // All of it is the server's own text: bounded, since hosts show it or prompt with it.
        Some(ServerInfo {
            name: info.server_info.as_ref().map(|i| one_line(&i.name, 200)),
            version: info.server_info.as_ref().map(|i| one_line(&i.version, 200)),
            protocol_version: one_line(&info.protocol_version.to_string(), 200),
            instructions: info
                .instructions
                .as_deref()
                .map(|text| listing::bounded_text(text, MAX_INSTRUCTIONS_CHARS)),
        })
    }

    /// The process id of the running stdio server, if there is one.
    pub async fn server_pid(&self) -> Option<u32> {
        let state = self.inner.state.lock().await;
        state.current.as_ref().filter(|c| c.alive()).and_then(|c| c.pid)
    }

    /// Whether the connection is up right now (a dead one is replaced on the next call).
    pub async fn is_connected(&self) -> bool {
        let state = self.inner.state.lock().await;
        state.current.as_ref().is_some_and(|c| c.alive())
    }

    /// Closes the connection (and stops a stdio server). Later calls of this client's tools
    /// fail with an error for the model.
    pub async fn close(&self) {
        self.inner.closed.cancel();
        let conn = self.inner.state.lock().await.current.take();
        if let Some(conn) = conn {
            conn.service.cancellation_token().cancel();
        }
    }
}

impl Inner {
    fn catalog(&self) -> Arc<Vec<RemoteTool>> {
        self.catalog.lock().map(|c| c.clone()).unwrap_or_default()
    }

    fn alias(&self) -> &str {
        &self.config.alias
    }

    /// The live connection, reconnecting (after the backoff) when the last one died.
    async fn connection(self: &Arc<Self>) -> Result<Arc<Connection>, ToolError> {
        let mut state = self.state.lock().await;
        if self.closed.is_cancelled() {
            return Err(ToolError::model(format!(
                "the MCP client for server {:?} was closed by the host",
                self.alias()
            )));
        }
        if let Some(conn) = &state.current {
            if conn.alive() {
                return Ok(conn.clone());
            }
            let tail = conn.stderr_tail();
            tracing::warn!(alias = %self.alias(), stderr = %tail, "MCP server connection lost; reconnecting");
            state.current = None;
        }
        if let Some(at) = state.retry_at {
            tokio::time::sleep_until(at).await;
        }
        let conn = match self.open(&mut state).await {
            Ok(conn) => conn,
            Err(e) => {
                return Err(ToolError::retryable(format!(
                    "{e}; the next attempt waits {} ms",
                    self.config.backoff_after(state.failures).as_millis()
                )));
            }
        };
        state.current = Some(conn.clone());
        drop(state);
        // The tool list may differ after a restart.
        if let Err(e) = self.refresh_on(&conn).await {
            tracing::warn!(alias = %self.alias(), error = %e, "listing tools after reconnect failed");
        }
        Ok(conn)
    }

    /// One connection attempt; updates the failure count and the backoff.
    async fn open(self: &Arc<Self>, state: &mut ConnState) -> Result<Arc<Connection>, McpError> {
        state.next_id += 1;
        let id = state.next_id;
        match tokio::time::timeout(self.config.connect_timeout, self.start(id)).await {
            Ok(Ok(conn)) => {
                state.failures = 0;
                state.retry_at = None;
                Ok(Arc::new(conn))
            }
            Ok(Err(e)) => {
                state.failures += 1;
                state.retry_at = Some(Instant::now() + self.config.backoff_after(state.failures));
                Err(e)
            }
            Err(_) => {
                state.failures += 1;
                state.retry_at = Some(Instant::now() + self.config.backoff_after(state.failures));
                Err(McpError::Handshake {
                    alias: self.alias().to_owned(),
                    message: format!(
                        "no answer within {} ms ({})",
                        self.config.connect_timeout.as_millis(),
                        self.config.endpoint()
                    ),
                })
            }
        }
    }

    async fn start(self: &Arc<Self>, id: u64) -> Result<Connection, McpError> {
        let handler = Handler {
            inner: Arc::downgrade(self),
            roots: self.config.roots.clone(),
        };
        let stderr_buf = Arc::new(StdMutex::new(Vec::new()));
        let handshake = |e: &dyn std::fmt::Display, tail: String| McpError::Handshake {
            alias: self.alias().to_owned(),
            message: if tail.is_empty() {
                e.to_string()
            } else {
                // The server wrote it, and it reaches the model when a reconnect fails.
                let stderr = Provenance::new(format!("stderr of MCP server {:?}", self.alias()));
                format!(
                    "{e}; the server's stderr ends with:\n{}",
                    wrap_untrusted(&stderr, &tail)
                )
            },
        };
        match &self.config.transport {
            Transport::Stdio {
                command,
                args,
                env,
                inherit_env,
                cwd,
            } => {
                let mut cmd = tokio::process::Command::new(command);
                cmd.args(args);
                if !inherit_env {
                    cmd.env_clear();
                    for (key, value) in std::env::vars_os() {
                        if key.to_str().is_some_and(|k| crate::config::SAFE_ENV_VARS.contains(&k)) {
                            cmd.env(key, value);
                        }
                    }
                }
                for (k, v) in env {
                    cmd.env(k, v);
                }
                if let Some(dir) = cwd {
                    cmd.current_dir(dir);
                }
                let mut wrapped = process_wrap::tokio::CommandWrap::from(cmd);
                wrapped.wrap(process_wrap::tokio::KillOnDrop);
                #[cfg(unix)]
                wrapped.wrap(process_wrap::tokio::ProcessGroup::leader());
                let (child, stderr) = TokioChildProcess::builder(wrapped)
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(|source| McpError::Spawn {
                        alias: self.alias().to_owned(),
                        command: self.config.endpoint(),
                        source,
                    })?;
                let pid = child.id();
                if let Some(mut stderr) = stderr {
                    let buf = stderr_buf.clone();
                    let alias = self.alias().to_owned();
                    tokio::spawn(async move {
                        let mut chunk = [0u8; 1024];
                        while let Ok(n) = stderr.read(&mut chunk).await {
                            if n == 0 {
                                break;
                            }
                            tracing::debug!(alias = %alias, "server stderr: {}", String::from_utf8_lossy(&chunk[..n]).trim_end());
                            if let Ok(mut b) = buf.lock() {
                                b.extend_from_slice(&chunk[..n]);
                                let excess = b.len().saturating_sub(STDERR_TAIL);
                                b.drain(..excess);
                            }
                        }
                    });
                }
                match handler.serve(child).await {
                    Ok(service) => Ok(Connection {
                        id,
                        service,
                        pid,
                        stderr: stderr_buf,
                    }),
                    Err(e) => {
                        // Give the stderr reader a moment to catch the server's last words.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        Err(handshake(&e, tail_text(&stderr_buf)))
                    }
                }
            }
            Transport::Http { url, headers } => {
                let mut map = HashMap::new();
                for (name, value) in headers {
                    let name = http::HeaderName::try_from(name.as_str())
                        .map_err(|e| McpError::Config(format!("header name {name:?}: {e}")))?;
                    let value = http::HeaderValue::try_from(value.as_str())
                        .map_err(|e| McpError::Config(format!("value of header {name}: {e}")))?;
                    map.insert(name, value);
                }
                let transport = StreamableHttpClientTransport::from_config(
                    StreamableHttpClientTransportConfig::with_uri(url.as_str())
                        .custom_headers(map)
                        .reinit_on_expired_session(true),
                );
                let service = handler
                    .serve(transport)
                    .await
                    .map_err(|e| handshake(&e, String::new()))?;
                Ok(Connection {
                    id,
                    service,
                    pid: None,
                    stderr: stderr_buf,
                })
            }
        }
    }

    /// Lists tools on the current connection, if it is up.
    async fn refresh(self: &Arc<Self>) -> Result<(), McpError> {
        let conn = self.state.lock().await.current.clone();
        match conn {
            Some(conn) if conn.alive() => self.refresh_on(&conn).await,
            _ => Ok(()),
        }
    }

    async fn refresh_on(&self, conn: &Connection) -> Result<(), McpError> {
        let tools = listing::list_tools(conn.service.peer(), self.alias(), self.config.request_timeout).await?;
        self.install(tools);
        Ok(())
    }

    fn install(&self, tools: Vec<rmcp::model::Tool>) {
        let remote: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
        let assigned = names::assign(self.alias(), &remote);
        let mut catalog = Vec::with_capacity(tools.len());
        let mut seen = std::collections::HashSet::new();
        for tool in tools {
            let Some(name) = assigned.get(tool.name.as_ref()) else {
                continue;
            };
            // A name listed twice would register twice and fail the host's whole tool set.
            if !seen.insert(tool.name.clone()) {
                tracing::warn!(alias = %self.alias(), tool = %one_line(&tool.name, 80), "skipping an MCP tool listed twice");
                continue;
            }
            let spec = match listing::spec_for(&tool, name.clone(), &self.config) {
                Ok(spec) => spec,
                Err(why) => {
                    tracing::warn!(alias = %self.alias(), tool = %one_line(&tool.name, 80), "skipping an MCP tool: {why}");
                    continue;
                }
            };
            catalog.push(RemoteTool {
                remote: tool.name.to_string(),
                spec,
            });
        }
        let changed = {
            let Ok(mut current) = self.catalog.lock() else {
                return;
            };
            if **current == catalog {
                false
            } else {
                *current = Arc::new(catalog);
                true
            }
        };
        if changed {
            self.generation.send_modify(|g| *g += 1);
        }
    }

    fn forget(&self, state: &mut ConnState, conn: &Connection) {
        if state.current.as_ref().is_some_and(|c| c.id == conn.id) {
            state.current = None;
        }
    }

    async fn call(self: &Arc<Self>, remote: &str, args: serde_json::Value) -> Result<ToolOutput, ToolError> {
        let source = Provenance::mcp_server(self.alias(), remote);
        // The server chose the name: one line in messages.
        let shown = one_line(remote, 128);
        let arguments = match args {
            serde_json::Value::Object(map) => map,
            serde_json::Value::Null => serde_json::Map::new(),
            other => {
                return Err(ToolError::model(format!(
                    "arguments must be a JSON object, got {other}"
                )));
            }
        };
        let conn = self.connection().await?;
        let request = CallToolRequestParams::new(remote.to_owned()).with_arguments(arguments);
        match conn.service.peer().call_tool(request).await {
            Ok(result) => content::from_mcp(result, &self.config.caps, &source),
            Err(ServiceError::McpError(e)) => Err(ToolError::model(format!(
                "MCP server {:?} refused the call to {shown} (code {}):\n{}",
                self.alias(),
                e.code.0,
                content::wrap_error_text(&source, &e.message)
            ))),
            Err(e @ (ServiceError::TransportClosed | ServiceError::TransportSend(_))) => {
                // Let the reader see the server's last words before reporting.
                tokio::time::sleep(Duration::from_millis(50)).await;
                let tail = conn.stderr_tail();
                let mut state = self.state.lock().await;
                self.forget(&mut state, &conn);
                drop(state);
                let what = match &self.config.transport {
                    Transport::Stdio { .. } => "exited or closed its pipes",
                    Transport::Http { .. } => "disconnected",
                };
                let mut message = format!(
                    "MCP server {:?} {what} during the call to {shown} ({}); the call may not have finished. \
                     The server will be restarted or reconnected on the next call",
                    self.alias(),
                    root_cause(&e)
                );
                if !tail.is_empty() {
                    let stderr = Provenance::new(format!("stderr of MCP server {:?}", self.alias()));
                    message.push_str(&format!(". Its stderr ends with:\n{}", wrap_untrusted(&stderr, &tail)));
                }
                Err(ToolError::retryable(message))
            }
            Err(ServiceError::Timeout { timeout }) => Err(ToolError::retryable(format!(
                "MCP server {:?} did not answer {shown} within {} ms",
                self.alias(),
                timeout.as_millis()
            ))),
            Err(e) => Err(ToolError::model(format!(
                "calling {shown} on MCP server {:?} failed: {e}",
                self.alias()
            ))),
        }
    }
}

/// The innermost cause of an error ("Connection refused (os error 111)"), which reads better
/// for a model than the transport's type names.
fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

/// One tool of an MCP server, callable as an agent tool.
struct McpTool {
    inner: Arc<Inner>,
    remote: String,
    spec: ToolSpec,
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: serde_json::Value, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let timeout = self.inner.config.call_timeout;
        // Dropping the call future (on cancel or timeout) makes rmcp send
        // `notifications/cancelled` for the request in flight.
        tokio::select! {
            biased;
            _ = cx.cancel.cancelled() => Err(ToolError::model(format!(
                "{} was cancelled; the MCP server was told to stop", self.spec.name
            ))),
            result = tokio::time::timeout(timeout, self.inner.call(&self.remote, args)) => match result {
                Ok(result) => result,
                Err(_) => Err(ToolError::retryable(format!(
                    "{} timed out after {} ms; the MCP server was told to stop",
                    self.spec.name,
                    timeout.as_millis()
                ))),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use rmcp::model::ToolAnnotations;
    use serde_json::json;

    fn inner(config: McpServerConfig) -> Arc<Inner> {
        let (generation, _) = watch::channel(0);
        Arc::new(Inner {
            config,
            state: Mutex::new(ConnState::default()),
            catalog: StdMutex::new(Arc::new(Vec::new())),
            generation,
            closed: tokio_util::sync::CancellationToken::new(),
        })
    }

    fn remote(name: &str, schema: serde_json::Value) -> rmcp::model::Tool {
        let serde_json::Value::Object(map) = schema else {
            unreachable!()
        };
        rmcp::model::Tool::new_with_raw(name.to_owned(), Some("d".into()), Arc::new(map))
    }

    #[test]
    fn install_maps_names_schemas_and_gating() {
        let inner = inner(McpServerConfig::stdio("srv", "x").trust_read_only_hints(true));
        let mut changes = inner.generation.subscribe();
        let read_only =
            remote("look", json!({"type": "object"})).with_annotations(ToolAnnotations::new().read_only(true));
        inner.install(vec![
            read_only,
            remote("touch.it", json!({"properties": {"a": {"type": "string"}}})),
            remote("broken", json!({"type": 12})),
        ]);
        let catalog = inner.catalog();
        let names: Vec<_> = catalog.iter().map(|t| t.spec.name.as_str()).collect();
        assert_eq!(names, ["srv__look", "srv__touch_it"], "the invalid schema is left out");
        assert!(!catalog[0].spec.gated && catalog[0].spec.parallel_safe);
        assert!(catalog[1].spec.gated && !catalog[1].spec.parallel_safe);
        assert_eq!(catalog[1].remote, "touch.it");
        assert_eq!(catalog[1].spec.parameters["type"], "object");
        assert!(changes.has_changed().unwrap());
        changes.mark_unchanged();
        // The same list again is not a change.
        inner.install(vec![
            remote("look", json!({"type": "object"})).with_annotations(ToolAnnotations::new().read_only(true)),
            remote("touch.it", json!({"properties": {"a": {"type": "string"}}})),
        ]);
        assert!(!changes.has_changed().unwrap());
    }

    #[test]
    fn read_only_hints_are_ignored_unless_trusted() {
        let inner = inner(McpServerConfig::stdio("srv", "x"));
        inner.install(vec![
            remote("look", json!({"type": "object"})).with_annotations(ToolAnnotations::new().read_only(true)),
        ]);
        assert!(inner.catalog()[0].spec.gated);
    }
}
