//! The MCP server: any set of agent tools served to external MCP clients, over stdio or
//! streamable HTTP, with the host's gate in front of gated tools.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use agent_core::{
    Gate, GateDecision, GateRequest, SessionId, Tool, ToolContext, ToolError, ToolSet, ToolSetError, TurnOrigin,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use crate::content;
use crate::error::McpError;
use crate::http_guard::{self, HttpGuard, Origin};

/// How long a cancelled or timed-out tool may take to notice its token before it is dropped.
const CANCEL_GRACE: Duration = Duration::from_secs(2);

/// The HTTP path the MCP endpoint is served at by [`ToolServer::serve_http`].
pub const MCP_PATH: &str = "/mcp";

/// Serves a tool set over MCP.
///
/// Every call goes through one dispatch ([`ToolServer::call`]): the tool must exist, its
/// arguments are validated against its schema by [`ToolSet::validate`], a gated tool asks the
/// host's [`Gate`] (with no gate, gated tools are denied, as in the agent loop), and the call
/// runs with the tool's timeout and a cancellation token that fires when the MCP client sends
/// `notifications/cancelled`. Denials, invalid arguments and tool errors come back as MCP error
/// results (`isError: true`) the client's model can read.
///
/// ```no_run
/// # async fn demo(tools: agent_core::ToolSet) -> Result<(), agent_mcp::McpError> {
/// use agent_mcp::ToolServer;
/// let server = ToolServer::builder(tools).gate(agent_core::AllowAll).name("my-tools").build();
/// let http = server.serve_http("127.0.0.1:0".parse().unwrap()).await?;
/// println!("MCP endpoint: {}", http.url());
/// server.serve_stdio().await?; // or speak MCP on stdin/stdout until the client hangs up
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ToolServer {
    inner: Arc<ServerInner>,
}

impl std::fmt::Debug for ToolServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolServer")
            .field("name", &self.inner.name)
            .field("tools", &self.inner.tools.names())
            .field("gate", &self.inner.gate.is_some())
            .finish()
    }
}

struct ServerInner {
    tools: ToolSet,
    gate: Option<Arc<dyn Gate>>,
    name: String,
    version: String,
    instructions: Option<String>,
    default_timeout: Duration,
    allowed_hosts: Option<Vec<String>>,
    guard: HttpGuard,
}

/// Builds a [`ToolServer`].
pub struct ToolServerBuilder {
    inner: ServerInner,
    origins: Vec<String>,
}

impl std::fmt::Debug for ToolServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolServerBuilder")
            .field("name", &self.inner.name)
            .finish()
    }
}

impl ToolServerBuilder {
    /// The gate asked before every call of a gated tool. Without one, gated tools are denied.
    pub fn gate(self, gate: impl Gate + 'static) -> Self {
        self.gate_arc(Arc::new(gate))
    }

    /// A shared gate (for instance the one the host's agent uses).
    pub fn gate_arc(mut self, gate: Arc<dyn Gate>) -> Self {
        self.inner.gate = Some(gate);
        self
    }

    /// The server's name in the MCP handshake (default `agent-core`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.inner.name = name.into();
        self
    }

    /// The server's version in the MCP handshake (default this crate's version).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.inner.version = version.into();
        self
    }

    /// Instructions sent to clients in the handshake.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.inner.instructions = Some(text.into());
        self
    }

    /// The timeout of tools that set none themselves (default 120 s).
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.inner.default_timeout = timeout;
        self
    }

    /// `Host` header values (`name` or `name:port`) the HTTP transport accepts, replacing the
    /// loopback default (`localhost`, `127.0.0.1`, `::1`). An empty list accepts any host:
    /// only do that behind your own authentication.
    pub fn allowed_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.inner.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// Browser origins (`scheme://host[:port]`, such as `https://app.example.com`) whose pages
    /// may call the HTTP transport. Requests with another `Origin` header get 403. Requests
    /// without one (non-browser clients) and pages of the server's own loopback origin
    /// (`http://127.0.0.1:<port>`, `http://localhost:<port>`, `http://[::1]:<port>`) always
    /// pass; by default no other origin does. Entries that do not parse are refused by
    /// [`ToolServerBuilder::try_build`].
    pub fn allowed_origins<I, S>(mut self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// Requires `Authorization: Bearer <token>` on every HTTP request (401 otherwise; compared
    /// in constant time). [`crate::new_bearer_token`] makes a good one. Without a token, any
    /// local process can call the served tools over HTTP (still through the gate).
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.inner.guard.token = Some(token.into());
        self
    }

    /// The server, after checking the options: an allowed origin must parse, and a bearer
    /// token must be non-empty visible ASCII.
    pub fn try_build(mut self) -> Result<ToolServer, McpError> {
        for text in &self.origins {
            let origin = Origin::parse(text).ok_or_else(|| {
                McpError::Config(format!(
                    "allowed origin {text:?} is not scheme://host[:port] (http or https)"
                ))
            })?;
            self.inner.guard.allowed_origins.push(origin);
        }
        if let Some(token) = &self.inner.guard.token
            && (token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()))
        {
            return Err(McpError::Config(
                "the bearer token must be non-empty visible ASCII".into(),
            ));
        }
        Ok(ToolServer {
            inner: Arc::new(self.inner),
        })
    }

    /// The server. Allowed origins that do not parse are left out (logged), and an unusable
    /// bearer token refuses every request; [`ToolServerBuilder::try_build`] reports both.
    pub fn build(mut self) -> ToolServer {
        for text in std::mem::take(&mut self.origins) {
            match Origin::parse(&text) {
                Some(origin) => self.inner.guard.allowed_origins.push(origin),
                None => tracing::warn!(origin = %text, "ignoring an allowed origin that does not parse"),
            }
        }
        ToolServer {
            inner: Arc::new(self.inner),
        }
    }
}

impl ToolServer {
    /// A builder over a tool set.
    pub fn builder(tools: ToolSet) -> ToolServerBuilder {
        ToolServerBuilder {
            inner: ServerInner {
                tools,
                gate: None,
                name: "agent-core".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                instructions: None,
                default_timeout: Duration::from_secs(120),
                allowed_hosts: None,
                guard: HttpGuard::default(),
            },
            origins: Vec::new(),
        }
    }

    /// A builder over shared tools (the same `Arc`s an agent uses).
    pub fn builder_from_tools(
        tools: impl IntoIterator<Item = Arc<dyn Tool>>,
    ) -> Result<ToolServerBuilder, ToolSetError> {
        let mut set = ToolSet::new();
        for tool in tools {
            set.register_arc(tool)?;
        }
        Ok(Self::builder(set))
    }

    /// The tools served.
    pub fn tools(&self) -> &ToolSet {
        &self.inner.tools
    }

    /// The one dispatch behind every MCP `tools/call`: find, validate, gate, run with timeout
    /// and cancellation, and map the result. `Err` is a protocol error (unknown tool, or a
    /// fatal tool error); everything the calling model should read is an `Ok` result, with
    /// `isError` set for failures.
    pub async fn call(
        &self,
        name: &str,
        args: serde_json::Value,
        session_id: SessionId,
        call_id: String,
        cancel: CancellationToken,
    ) -> Result<CallToolResult, ErrorData> {
        let inner = &self.inner;
        let Some(tool) = inner.tools.get(name).cloned() else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {name:?}; tools/list names the tools this server has"),
                None,
            ));
        };
        if let Err(e) = inner.tools.validate(name, &args) {
            return Ok(content::error_result(e.message));
        }
        let spec = tool.spec();
        if spec.gated {
            let decision = match &inner.gate {
                None => GateDecision::deny("no consent gate is configured, so gated tools never run"),
                Some(gate) => {
                    let request = GateRequest {
                        session_id: session_id.clone(),
                        call_id: call_id.clone(),
                        tool: name.to_owned(),
                        arguments: args.clone(),
                        // No variant names an external MCP client; the host chose to serve
                        // these tools to it, and its gate decides.
                        origin: TurnOrigin::default(),
                        // What the tool says it acts on; the gate decides with it.
                        host: tool.target_host(&args).await,
                    };
                    tokio::select! {
                        decision = gate.check(&request) => decision,
                        _ = cancel.cancelled() => return Err(cancelled()),
                    }
                }
            };
            match decision {
                GateDecision::Allow => {}
                GateDecision::Deny { reason } => {
                    let mut message = format!("denied: the host did not allow this call of {name}");
                    if let Some(reason) = reason {
                        message.push_str(&format!(" ({reason})"));
                    }
                    return Ok(content::error_result(message));
                }
                // An MCP call cannot park until the person answers: it is refused, never run
                // unasked.
                GateDecision::Ask { .. } => {
                    return Ok(content::error_result(format!(
                        "denied: this call of {name} needs the person's approval, which cannot be asked for over MCP"
                    )));
                }
            }
        }
        let timeout = spec.timeout.unwrap_or(inner.default_timeout);
        let cx = ToolContext {
            session_id,
            call_id,
            cancel: cancel.child_token(),
            // The MCP client decides what its model is sent.
            model_takes_images: true,
            depth: 0,
            origin: agent_core::TurnOrigin::Person,
            spent: agent_core::UsageMeter::default(),
        };
        let token = cx.cancel.clone();
        let run = tool.call(args, cx);
        tokio::pin!(run);
        let outcome = tokio::select! {
            biased;
            result = &mut run => result,
            _ = tokio::time::sleep(timeout) => {
                token.cancel();
                // A tool that watches its token gets a moment to stop cleanly.
                let _ = tokio::time::timeout(CANCEL_GRACE, &mut run).await;
                return Ok(content::error_result(format!(
                    "{name} timed out after {} ms and was stopped",
                    timeout.as_millis()
                )));
            }
            _ = cancel.cancelled() => {
                let _ = tokio::time::timeout(CANCEL_GRACE, &mut run).await;
                return Err(cancelled());
            }
        };
        match outcome {
            Ok(output) => Ok(content::to_mcp(output)),
            Err(ToolError::ForModel { message, .. }) => Ok(content::error_result(message)),
            Err(e @ ToolError::Fatal { .. }) => Err(ErrorData::internal_error(format!("{name} failed: {e}"), None)),
        }
    }

    fn handler(&self) -> Handler {
        Handler {
            server: self.clone(),
            session_id: SessionId::new_random(),
        }
    }

    /// Serves MCP over any byte stream pair until the client disconnects.
    pub async fn serve_io<R, W>(&self, read: R, write: W) -> Result<(), McpError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let running = self
            .handler()
            .serve((read, write))
            .await
            .map_err(|e| McpError::Session(e.to_string()))?;
        running.waiting().await.map_err(|e| McpError::Session(e.to_string()))?;
        Ok(())
    }

    /// Serves MCP on this process's stdin and stdout until the client disconnects. Nothing
    /// else may write to stdout meanwhile (log to stderr).
    pub async fn serve_stdio(&self) -> Result<(), McpError> {
        let (stdin, stdout) = rmcp::transport::stdio();
        self.serve_io(stdin, stdout).await
    }

    /// An axum router answering MCP's streamable HTTP at [`MCP_PATH`], to mount in a host's own
    /// HTTP server. Only `Host` headers from [`ToolServerBuilder::allowed_hosts`] are accepted
    /// (loopback names by default: DNS-rebinding protection), only browser pages from allowed
    /// origins ([`ToolServerBuilder::allowed_origins`]), and only requests with the bearer
    /// token when one is set ([`ToolServerBuilder::bearer_token`]); `cancel` ends every session.
    pub fn http_router(&self, cancel: CancellationToken) -> axum::Router {
        let server = self.clone();
        let mut config = StreamableHttpServerConfig::default().with_cancellation_token(cancel);
        if let Some(hosts) = &self.inner.allowed_hosts {
            config = config.with_allowed_hosts(hosts.clone());
        }
        let service = StreamableHttpService::new(
            move || Ok(server.handler()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let guard = Arc::new(self.inner.guard.clone());
        axum::Router::new()
            .nest_service(MCP_PATH, service)
            .layer(axum::middleware::from_fn_with_state(guard, http_guard::check))
    }

    /// Binds `addr` and serves streamable HTTP at `http://addr/mcp` on a background task.
    /// Refuses non-loopback addresses; use [`ToolServer::serve_http_on`] to expose the
    /// server on purpose.
    pub async fn serve_http(&self, addr: SocketAddr) -> Result<HttpServerHandle, McpError> {
        if !addr.ip().is_loopback() {
            return Err(McpError::Config(format!(
                "{addr} is not a loopback address; call serve_http_on to listen on other interfaces on purpose"
            )));
        }
        let listener = tokio::net::TcpListener::bind(addr).await?;
        self.serve_http_on(listener).await
    }

    /// Serves streamable HTTP on a listener the caller bound. Requests must carry a `Host`
    /// header from [`ToolServerBuilder::allowed_hosts`] (loopback names by default), which
    /// guards local servers against DNS rebinding.
    pub async fn serve_http_on(&self, listener: tokio::net::TcpListener) -> Result<HttpServerHandle, McpError> {
        let addr = listener.local_addr()?;
        let cancel = CancellationToken::new();
        let router = self.http_router(cancel.clone());
        let shutdown = cancel.clone();
        let task = tokio::spawn(async move {
            axum::serve(listener, router)
                .with_graceful_shutdown(async move { shutdown.cancelled().await })
                .await
        });
        Ok(HttpServerHandle { addr, cancel, task })
    }
}

fn cancelled() -> ErrorData {
    ErrorData::internal_error("the call was cancelled by the client", None)
}

/// A running streamable HTTP server. Dropping the handle leaves it running; call
/// [`HttpServerHandle::shutdown`] to stop it.
#[derive(Debug)]
pub struct HttpServerHandle {
    addr: SocketAddr,
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl HttpServerHandle {
    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The MCP endpoint URL, such as `http://127.0.0.1:41234/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{MCP_PATH}", self.addr)
    }

    /// Stops accepting connections, ends every session and waits for the server task.
    pub async fn shutdown(self) -> Result<(), McpError> {
        self.cancel.cancel();
        match self.task.await {
            Ok(result) => result.map_err(McpError::Io),
            Err(e) => Err(McpError::Session(e.to_string())),
        }
    }
}

/// One MCP session's view of the server (each session gets its own [`SessionId`], which the
/// gate sees).
#[derive(Clone)]
struct Handler {
    server: ToolServer,
    session_id: SessionId,
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        let inner = &self.server.inner;
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.server_info = Implementation::new(inner.name.clone(), inner.version.clone());
        info.instructions = inner.instructions.clone();
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.server.inner.tools.iter().map(|t| mcp_tool(t.as_ref())).collect(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.server.inner.tools.get(name).map(|t| mcp_tool(t.as_ref()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = serde_json::Value::Object(request.arguments.unwrap_or_default());
        self.server
            .call(
                &request.name,
                args,
                self.session_id.clone(),
                format!("mcp-{}", context.id),
                context.ct.clone(),
            )
            .await
            .map(CallToolResponse::Complete)
    }
}

fn mcp_tool(tool: &dyn Tool) -> rmcp::model::Tool {
    let spec = tool.spec();
    // MCP requires `inputSchema` to be an object schema with `"type": "object"`; a tool that
    // takes any JSON (schema `{}` or `true`) is announced as taking any object.
    let mut schema = match &spec.parameters {
        serde_json::Value::Object(map) => map.clone(),
        _ => serde_json::Map::new(),
    };
    schema.entry("type").or_insert_with(|| "object".into());
    rmcp::model::Tool::new_with_raw(
        spec.name.clone(),
        Some(spec.description.clone().into()),
        Arc::new(schema),
    )
}
