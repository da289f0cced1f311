//! How to reach an MCP server, and the policy for its tools.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::content::OutputCaps;
use crate::error::McpError;

/// The variables a stdio server inherits from the host unless told to inherit everything
/// (the same list shell commands get).
pub(crate) use agent_core::SAFE_ENV_VARS;

/// How the client reaches the server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Transport {
    /// A child process speaking MCP over its stdin and stdout. It runs in its own process
    /// group, which is killed when the connection ends.
    Stdio {
        /// The program to run (looked up on `PATH` when it has no slash).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables set for the child, on top of what it inherits.
        env: Vec<(String, String)>,
        /// Whether the child inherits the host's whole environment. When `false` (the
        /// default) it inherits only [`SAFE_ENV_VARS`], so API keys in the host's environment
        /// do not leak to third-party servers; pass what a server needs with
        /// [`McpServerConfig::env`].
        inherit_env: bool,
        /// Its working directory (the host's when `None`).
        cwd: Option<PathBuf>,
    },
    /// A server speaking MCP's streamable HTTP transport.
    Http {
        /// The endpoint, such as `http://127.0.0.1:3001/mcp`.
        url: String,
        /// Headers sent with every request (for example `Authorization`).
        headers: Vec<(String, String)>,
    },
}

/// One MCP server to take tools from: where it is, what to call it, and how to treat its tools.
///
/// ```
/// use std::time::Duration;
/// use agent_mcp::McpServerConfig;
///
/// let files = McpServerConfig::stdio("files", "npx")
///     .args(["-y", "@modelcontextprotocol/server-filesystem", "/srv/data"])
///     .env("NODE_ENV", "production")
///     .call_timeout(Duration::from_secs(30));
/// let jira = McpServerConfig::http("jira", "http://127.0.0.1:3100/mcp")
///     .header("Authorization", "Bearer secret")
///     .trust_read_only_hints(true);
/// # let _ = (files, jira);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerConfig {
    /// Prefix of every tool name (`alias__tool`): 1 to 32 of `[a-zA-Z0-9_-]`, without `__`.
    pub alias: String,
    /// How to reach the server.
    pub transport: Transport,
    /// Longest a tool call may take (default 60 s). On expiry the call is cancelled on the
    /// server too (MCP's `notifications/cancelled`).
    pub call_timeout: Duration,
    /// Longest the start and handshake (`initialize`) may take (default 30 s).
    pub connect_timeout: Duration,
    /// Longest a `tools/list`, all its pages together, may take (default 30 s): at connect,
    /// after `tools/list_changed` and after a reconnect. A server that never answers makes
    /// [`crate::McpClient::connect`] fail after `connect_timeout` plus at most this.
    pub request_timeout: Duration,
    /// Whether a tool the server marks `readOnlyHint: true` may run without asking the gate
    /// (default `false`: every remote tool is gated). MCP calls annotations hints from a
    /// server that may not be trusted; turn this on only for servers you trust.
    pub trust_read_only_hints: bool,
    /// Caps on what a tool returns.
    pub caps: OutputCaps,
    /// Wait before the second reconnect attempt after a failure (default 500 ms); it doubles
    /// with each failure in a row, up to `backoff_max`. The first attempt after a crash is
    /// immediate.
    pub backoff_initial: Duration,
    /// The longest wait between reconnect attempts (default 30 s).
    pub backoff_max: Duration,
    /// Roots (`file://` URIs) offered to servers that ask for them; when empty, the client
    /// does not declare the roots capability.
    pub roots: Vec<String>,
}

impl McpServerConfig {
    fn new(alias: impl Into<String>, transport: Transport) -> Self {
        McpServerConfig {
            alias: alias.into(),
            transport,
            call_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(30),
            trust_read_only_hints: false,
            caps: OutputCaps::default(),
            backoff_initial: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
            roots: Vec::new(),
        }
    }

    /// A server started as a child process, speaking MCP over stdio.
    pub fn stdio(alias: impl Into<String>, command: impl Into<String>) -> Self {
        Self::new(
            alias,
            Transport::Stdio {
                command: command.into(),
                args: Vec::new(),
                env: Vec::new(),
                inherit_env: false,
                cwd: None,
            },
        )
    }

    /// A server reached over streamable HTTP.
    pub fn http(alias: impl Into<String>, url: impl Into<String>) -> Self {
        Self::new(
            alias,
            Transport::Http {
                url: url.into(),
                headers: Vec::new(),
            },
        )
    }

    /// Adds one argument (stdio only; ignored for HTTP).
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        if let Transport::Stdio { args, .. } = &mut self.transport {
            args.push(arg.into());
        }
        self
    }

    /// Adds arguments (stdio only; ignored for HTTP).
    pub fn args<I, S>(mut self, more: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        if let Transport::Stdio { args, .. } = &mut self.transport {
            args.extend(more.into_iter().map(Into::into));
        }
        self
    }

    /// Sets an environment variable for the child (stdio only; ignored for HTTP).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let Transport::Stdio { env, .. } = &mut self.transport {
            env.push((key.into(), value.into()));
        }
        self
    }

    /// Lets the child inherit the host's whole environment instead of [`SAFE_ENV_VARS`]
    /// (stdio only; ignored for HTTP).
    pub fn inherit_env(mut self, inherit: bool) -> Self {
        if let Transport::Stdio { inherit_env, .. } = &mut self.transport {
            *inherit_env = inherit;
        }
        self
    }

    /// Sets the child's working directory (stdio only; ignored for HTTP).
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        if let Transport::Stdio { cwd, .. } = &mut self.transport {
            *cwd = Some(dir.into());
        }
        self
    }

    /// Adds an HTTP header sent with every request (HTTP only; ignored for stdio).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Transport::Http { headers, .. } = &mut self.transport {
            headers.push((name.into(), value.into()));
        }
        self
    }

    /// Sets the per-call timeout.
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// Sets the start and handshake timeout.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets the timeout of `tools/list` (all pages together).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Lets tools the server marks read-only run without the gate.
    pub fn trust_read_only_hints(mut self, trust: bool) -> Self {
        self.trust_read_only_hints = trust;
        self
    }

    /// Sets the output caps.
    pub fn caps(mut self, caps: OutputCaps) -> Self {
        self.caps = caps;
        self
    }

    /// Sets the reconnect backoff (first wait, longest wait).
    pub fn backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.backoff_initial = initial;
        self.backoff_max = max.max(initial);
        self
    }

    /// Offers a root (a `file://` URI) to the server.
    pub fn root(mut self, uri: impl Into<String>) -> Self {
        self.roots.push(uri.into());
        self
    }

    /// Reads one server entry: the `mcpServers` JSON most MCP hosts use, in the
    /// [options format](agent_core::options) ([`McpServerEntry`]):
    /// `{"command": "npx", "args": [...], "env": {...}, "cwd": "..."}` for stdio, or
    /// `{"url": "http://...", "headers": {...}}` (also `"type": "http"` or `"streamable-http"`)
    /// for streamable HTTP. The deprecated SSE transport is refused, and so is an unknown key.
    ///
    /// ```
    /// let config = agent_mcp::McpServerConfig::from_json(
    ///     "everything",
    ///     &serde_json::json!({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]}),
    /// )
    /// .unwrap();
    /// assert_eq!(config.alias, "everything");
    /// ```
    pub fn from_json(alias: &str, entry: &Value) -> Result<Self, McpError> {
        let entry: McpServerEntry =
            serde_json::from_value(entry.clone()).map_err(|e| McpError::Config(format!("server {alias:?}: {e}")))?;
        entry.into_config(alias)
    }

    /// The wait before the next attempt after `failures` failed attempts in a row.
    pub(crate) fn backoff_after(&self, failures: u32) -> Duration {
        if failures == 0 {
            return Duration::ZERO;
        }
        let factor = 1u32.checked_shl(failures.saturating_sub(1).min(20)).unwrap_or(u32::MAX);
        self.backoff_initial
            .checked_mul(factor)
            .unwrap_or(self.backoff_max)
            .min(self.backoff_max)
    }

    /// A one-line description for messages (`npx -y server` or the URL).
    pub(crate) fn endpoint(&self) -> String {
        match &self.transport {
            Transport::Stdio { command, args, .. } => {
                let mut line = command.clone();
                for a in args {
                    line.push(' ');
                    line.push_str(a);
                }
                line
            }
            Transport::Http { url, .. } => url.clone(),
        }
    }
}

/// One MCP server as data: an entry of the `mcpServers` JSON that most MCP hosts write, in the
/// [options format](agent_core::options). Keys are `snake_case`; the `camelCase` spellings
/// other hosts write (`callTimeoutMs`, `serverUrl`, `inheritEnv`, ...) are read too, and the
/// keys other hosts add for themselves (`autoApprove`, `alwaysAllow`, `description`) are
/// accepted and ignored (every remote tool stays gated). See [`McpServerConfig`] for what each
/// setting means and its default.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct McpServerEntry {
    /// `stdio` or `http` (also `streamable-http`); inferred from `command` or `url` when absent.
    #[serde(rename = "type", alias = "transport", alias = "serverType", alias = "server_type")]
    pub kind: Option<String>,
    /// The program of a stdio server.
    pub command: Option<String>,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables set for the child.
    #[serde(with = "agent_core::options::string_pairs")]
    #[schemars(schema_with = "agent_core::options::string_pairs_schema")]
    pub env: Vec<(String, String)>,
    /// Whether the child inherits the host's whole environment (default `false`).
    #[serde(alias = "inheritEnv")]
    pub inherit_env: bool,
    /// The child's working directory.
    pub cwd: Option<PathBuf>,
    /// The endpoint of a streamable HTTP server.
    #[serde(alias = "serverUrl", alias = "server_url")]
    pub url: Option<String>,
    /// Headers sent with every HTTP request.
    #[serde(with = "agent_core::options::string_pairs")]
    #[schemars(schema_with = "agent_core::options::string_pairs_schema")]
    pub headers: Vec<(String, String)>,
    /// Longest a tool call may take (default 60 000).
    #[serde(alias = "callTimeoutMs", with = "agent_core::options::option_duration_ms")]
    #[schemars(schema_with = "agent_core::options::option_millis_schema")]
    pub call_timeout_ms: Option<Duration>,
    /// Longest the start and handshake may take (default 30 000).
    #[serde(alias = "connectTimeoutMs", with = "agent_core::options::option_duration_ms")]
    #[schemars(schema_with = "agent_core::options::option_millis_schema")]
    pub connect_timeout_ms: Option<Duration>,
    /// Longest a `tools/list`, all pages together, may take (default 30 000).
    #[serde(alias = "requestTimeoutMs", with = "agent_core::options::option_duration_ms")]
    #[schemars(schema_with = "agent_core::options::option_millis_schema")]
    pub request_timeout_ms: Option<Duration>,
    /// Let tools the server marks read-only run without the gate (default `false`).
    #[serde(alias = "trustReadOnlyHints")]
    pub trust_read_only_hints: bool,
    /// Caps on what a tool returns.
    pub caps: Option<OutputCaps>,
    /// First reconnect wait (default 500).
    #[serde(alias = "backoffInitialMs", with = "agent_core::options::option_duration_ms")]
    #[schemars(schema_with = "agent_core::options::option_millis_schema")]
    pub backoff_initial_ms: Option<Duration>,
    /// Longest reconnect wait (default 30 000).
    #[serde(alias = "backoffMaxMs", with = "agent_core::options::option_duration_ms")]
    #[schemars(schema_with = "agent_core::options::option_millis_schema")]
    pub backoff_max_ms: Option<Duration>,
    /// Roots (`file://` URIs) offered to the server.
    pub roots: Vec<String>,
    /// Leave this server out of [`servers_from_json`].
    pub disabled: bool,
    /// Other hosts' auto-approval list; ignored (every remote tool is gated here).
    #[serde(
        rename = "autoApprove",
        alias = "alwaysAllow",
        alias = "auto_approve",
        alias = "always_allow",
        skip_serializing
    )]
    #[schemars(skip)]
    pub foreign_auto_approve: Option<Value>,
    /// Other hosts' description of the server; ignored.
    #[serde(skip_serializing)]
    #[schemars(skip)]
    pub description: Option<Value>,
}

impl McpServerEntry {
    /// The server configuration this entry describes, named `alias`.
    pub fn into_config(self, alias: &str) -> Result<McpServerConfig, McpError> {
        let bad = |what: &str| McpError::Config(format!("server {alias:?}: {what}"));
        if self.disabled {
            return Err(bad(
                "the entry is marked \"disabled\": true; remove that to connect to it",
            ));
        }
        if self.command.is_some() && self.url.is_some() {
            return Err(bad(
                "give either \"command\" (stdio) or \"url\" (streamable HTTP), not both",
            ));
        }
        // A setting of the other transport would be silently unused: say so instead.
        let stdio_only = [
            ("args", !self.args.is_empty()),
            ("env", !self.env.is_empty()),
            ("cwd", self.cwd.is_some()),
            ("inherit_env", self.inherit_env),
        ];
        if self.url.is_some()
            && let Some((key, _)) = stdio_only.iter().find(|(_, set)| *set)
        {
            return Err(bad(&format!(
                "\"{key}\" is for stdio servers (\"command\"), not for \"url\""
            )));
        }
        if self.command.is_some() && !self.headers.is_empty() {
            return Err(bad(
                "\"headers\" is for streamable HTTP servers (\"url\"), not for \"command\"",
            ));
        }
        let kind = self.kind.as_deref().map(str::to_ascii_lowercase);
        let mut config = match (kind.as_deref(), self.command, self.url) {
            (Some("sse"), ..) => {
                return Err(bad(
                    "the SSE transport is deprecated and not supported; use streamable HTTP",
                ));
            }
            (Some(other), ..)
                if !matches!(
                    other,
                    "stdio" | "http" | "streamable-http" | "streamable_http" | "streamablehttp"
                ) =>
            {
                return Err(bad(&format!("unknown transport type {other:?}")));
            }
            (Some("stdio") | None, Some(command), _) => {
                let mut config = McpServerConfig::stdio(alias, command)
                    .args(self.args)
                    .inherit_env(self.inherit_env);
                for (k, v) in self.env {
                    config = config.env(k, v);
                }
                if let Some(cwd) = self.cwd {
                    config = config.cwd(cwd);
                }
                config
            }
            (Some(_) | None, None, Some(url)) if kind.as_deref() != Some("stdio") => {
                let mut config = McpServerConfig::http(alias, url);
                for (k, v) in self.headers {
                    config = config.header(k, v);
                }
                config
            }
            _ => return Err(bad("give \"command\" (stdio) or \"url\" (streamable HTTP)")),
        };
        if let Some(t) = self.call_timeout_ms {
            config = config.call_timeout(t);
        }
        if let Some(t) = self.connect_timeout_ms {
            config = config.connect_timeout(t);
        }
        if let Some(t) = self.request_timeout_ms {
            config = config.request_timeout(t);
        }
        if let Some(caps) = self.caps {
            config = config.caps(caps);
        }
        let initial = self.backoff_initial_ms.unwrap_or(config.backoff_initial);
        let max = self.backoff_max_ms.unwrap_or(config.backoff_max);
        config = config
            .backoff(initial, max)
            .trust_read_only_hints(self.trust_read_only_hints);
        for root in self.roots {
            config = config.root(root);
        }
        Ok(config)
    }
}

/// Reads every server of an `{"mcpServers": {"alias": {...}, ...}}` document (or of the bare
/// map); see [`McpServerConfig::from_json`] for one entry. Entries marked `"disabled": true`
/// are left out.
pub fn servers_from_json(doc: &Value) -> Result<Vec<McpServerConfig>, McpError> {
    let map = doc
        .get("mcpServers")
        .unwrap_or(doc)
        .as_object()
        .ok_or_else(|| McpError::Config("expected {\"mcpServers\": {\"alias\": {...}}}".into()))?;
    map.iter()
        .filter(|(_, entry)| entry.get("disabled").and_then(Value::as_bool) != Some(true))
        .map(|(alias, entry)| McpServerConfig::from_json(alias, entry))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_common_mcp_servers_json() {
        let doc = json!({"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "server-fs", "/data"], "env": {"A": "1"}, "cwd": "/tmp"},
            "jira": {"type": "streamable-http", "url": "http://127.0.0.1:3100/mcp",
                     "headers": {"Authorization": "Bearer t"}, "callTimeoutMs": 5000, "trustReadOnlyHints": true,
                     "connectTimeoutMs": 2000, "requestTimeoutMs": 1500},
            "sphere": {"serverUrl": "http://127.0.0.1:3200/mcp", "serverType": "streamable-http"}
        }});
        let servers = servers_from_json(&doc).unwrap();
        assert_eq!(servers.len(), 3);
        let files = servers.iter().find(|s| s.alias == "files").unwrap();
        assert_eq!(
            files.transport,
            Transport::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "server-fs".into(), "/data".into()],
                env: vec![("A".into(), "1".into())],
                inherit_env: false,
                cwd: Some("/tmp".into())
            }
        );
        let jira = servers.iter().find(|s| s.alias == "jira").unwrap();
        assert_eq!(jira.call_timeout, Duration::from_secs(5));
        assert_eq!(jira.connect_timeout, Duration::from_secs(2));
        assert_eq!(jira.request_timeout, Duration::from_millis(1500));
        assert_eq!(files.request_timeout, Duration::from_secs(30), "the default");
        assert!(jira.trust_read_only_hints);
        assert_eq!(
            jira.transport,
            Transport::Http {
                url: "http://127.0.0.1:3100/mcp".into(),
                headers: vec![("Authorization".into(), "Bearer t".into())]
            }
        );
        assert!(matches!(
            servers.iter().find(|s| s.alias == "sphere").unwrap().transport,
            Transport::Http { .. }
        ));
    }

    #[test]
    fn reads_the_options_format_and_refuses_unknown_keys() {
        let doc = json!({"mcpServers": {
            "files": {"command": "srv", "call_timeout_ms": 1500, "caps": {"max_text_chars": 10},
                      "backoff_initial_ms": 100, "backoff_max_ms": 200, "autoApprove": ["x"], "description": "d"},
            "off": {"command": "never", "disabled": true}
        }});
        let servers = servers_from_json(&doc).unwrap();
        assert_eq!(servers.len(), 1, "the disabled server is left out");
        let files = &servers[0];
        assert_eq!(files.call_timeout, Duration::from_millis(1500));
        assert_eq!(files.caps.max_text_chars, 10);
        assert_eq!(
            (files.backoff_initial, files.backoff_max),
            (Duration::from_millis(100), Duration::from_millis(200))
        );

        // What the Node binding makes of camelCase keys (snake_case) is read too.
        let snake = json!({"server_type": "http", "server_url": "http://127.0.0.1:1/mcp", "auto_approve": []});
        assert!(McpServerConfig::from_json("a", &snake).is_ok());
        let err = McpServerConfig::from_json("a", &json!({"command": "srv", "call_timeout": 5})).unwrap_err();
        assert!(err.to_string().contains("unknown field `call_timeout`"), "{err}");
        for (entry, says) in [
            (json!({"command": "srv", "url": "http://127.0.0.1:1/mcp"}), "not both"),
            (
                json!({"url": "http://127.0.0.1:1/mcp", "env": {"A": "1"}}),
                "\"env\" is for stdio",
            ),
            (
                json!({"command": "srv", "headers": {"A": "1"}}),
                "\"headers\" is for streamable HTTP",
            ),
            (json!({"command": "srv", "disabled": true}), "disabled"),
        ] {
            let err = McpServerConfig::from_json("a", &entry).unwrap_err().to_string();
            assert!(err.contains(says), "{entry}: {err}");
        }
    }

    #[test]
    fn refuses_what_it_cannot_run() {
        assert!(McpServerConfig::from_json("a", &json!({"type": "sse", "url": "http://x"})).is_err());
        assert!(McpServerConfig::from_json("a", &json!({"args": []})).is_err());
        assert!(McpServerConfig::from_json("a", &json!({"command": "x", "args": [1]})).is_err());
        assert!(McpServerConfig::from_json("a", &json!({"type": "carrier-pigeon", "url": "http://x"})).is_err());
        assert!(servers_from_json(&json!([1])).is_err());
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let c = McpServerConfig::stdio("s", "x").backoff(Duration::from_millis(100), Duration::from_millis(700));
        assert_eq!(c.backoff_after(0), Duration::ZERO);
        assert_eq!(c.backoff_after(1), Duration::from_millis(100));
        assert_eq!(c.backoff_after(2), Duration::from_millis(200));
        assert_eq!(c.backoff_after(3), Duration::from_millis(400));
        assert_eq!(c.backoff_after(4), Duration::from_millis(700));
        assert_eq!(c.backoff_after(60), Duration::from_millis(700));
    }

    #[test]
    fn builders_fill_the_right_transport() {
        let c = McpServerConfig::stdio("s", "node")
            .args(["a", "b"])
            .env("K", "V")
            .header("X", "1");
        assert_eq!(
            c.transport,
            Transport::Stdio {
                command: "node".into(),
                args: vec!["a".into(), "b".into()],
                env: vec![("K".into(), "V".into())],
                inherit_env: false,
                cwd: None
            }
        );
        assert_eq!(c.endpoint(), "node a b");
        let h = McpServerConfig::http("h", "http://127.0.0.1:1/mcp")
            .header("X", "1")
            .arg("ignored");
        assert_eq!(
            h.transport,
            Transport::Http {
                url: "http://127.0.0.1:1/mcp".into(),
                headers: vec![("X".into(), "1".into())]
            }
        );
    }
}
