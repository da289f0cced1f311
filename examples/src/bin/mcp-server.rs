//! Serves agent-tools' filesystem and shell tools (fs_read, fs_write, fs_list, fs_mkdir,
//! fs_delete, shell_exec) to any MCP client, confined to one root directory.
//!
//! ```sh
//! cargo run -p agent-examples --bin mcp-server -- --root DIR                  # stdio, ask on the terminal
//! cargo run -p agent-examples --bin mcp-server -- --root DIR --allow fs_write # allow only fs_write
//! cargo run -p agent-examples --bin mcp-server -- --root DIR --http 127.0.0.1:8931
//! ```
//!
//! Over HTTP, clients must send `Authorization: Bearer <token>`: the token comes from
//! `MCP_SERVER_TOKEN`, or a fresh one is made and printed to stderr. `--no-token` serves without
//! one (any local process may then connect), which `--allow` refuses: allowed tools run without
//! asking anyone. Browser pages from other origins are refused unless named with `--allow-origin`.
//!
//! Gated tools (fs_write, fs_delete, shell_exec) ask for consent before each call: with
//! `--allow` only the listed tools run (every other gated call is denied); without it, each call
//! is put to the person at the terminal (`/dev/tty`, or the terminal stderr is attached to, since
//! stdin and stdout carry MCP), and denied when there is no terminal. Logs go to stderr.

use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use agent_core::{Gate, GateDecision, GateRequest, async_trait};
use agent_mcp::ToolServer;
use agent_tools::{FsPolicy, fs_tools};

const USAGE: &str =
    "usage: mcp-server --root DIR [--allow TOOL[,TOOL...]]... [--http ADDR [--no-token] [--allow-origin ORIGIN]...]

Serves fs_read, fs_write, fs_list, fs_mkdir, fs_delete and shell_exec over MCP, confined to DIR.
  --root DIR     the directory the tools may touch (required)
  --allow TOOLS  gated tools that may run without asking; other gated calls are denied
                 (without --allow, each gated call is asked on the terminal)
  --http ADDR    serve streamable HTTP at http://ADDR/mcp (a loopback address) instead of stdio;
                 clients must send Authorization: Bearer TOKEN, with TOKEN from $MCP_SERVER_TOKEN
                 or made up and printed at start
  --no-token     over HTTP, require no token (refused together with --allow)
  --allow-origin ORIGIN
                 a browser origin (https://app.example) whose pages may call the HTTP server";

/// The environment variable a fixed bearer token is read from.
const TOKEN_VAR: &str = "MCP_SERVER_TOKEN";

struct Args {
    root: PathBuf,
    allow: Option<Vec<String>>,
    http: Option<SocketAddr>,
    no_token: bool,
    origins: Vec<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut root = None;
    let mut allow: Option<Vec<String>> = None;
    let mut http = None;
    let mut no_token = false;
    let mut origins = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--root" => root = Some(PathBuf::from(value("--root")?)),
            "--allow" => allow.get_or_insert_with(Vec::new).extend(
                value("--allow")?
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned),
            ),
            "--http" => {
                let addr = value("--http")?;
                http = Some(addr.parse().map_err(|e| format!("--http {addr}: {e}"))?);
            }
            "--no-token" => no_token = true,
            "--allow-origin" => origins.push(value("--allow-origin")?),
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let root = root.ok_or("--root DIR is required")?;
    let root = root
        .canonicalize()
        .map_err(|e| format!("--root {}: {e}", root.display()))?;
    if !root.is_dir() {
        return Err(format!("--root {} is not a directory", root.display()));
    }
    if http.is_some() && no_token && allow.as_ref().is_some_and(|a| !a.is_empty()) {
        return Err(
            "--allow over HTTP needs the bearer token: the allowed tools run without asking anyone, \
                    so without a token any local process could run them. Drop --no-token"
                .into(),
        );
    }
    if http.is_none() && (no_token || !origins.is_empty()) {
        return Err("--no-token and --allow-origin apply to --http only".into());
    }
    Ok(Args {
        root,
        allow,
        http,
        no_token,
        origins,
    })
}

/// The bearer token HTTP clients must send: `MCP_SERVER_TOKEN`, or a fresh random one.
fn bearer_token() -> Result<String, String> {
    match std::env::var(TOKEN_VAR) {
        Ok(token) if !token.trim().is_empty() => Ok(token.trim().to_owned()),
        _ => agent_mcp::new_bearer_token().map_err(|e| format!("could not make a token: {e}")),
    }
}

/// Allows the gated tools named on the command line and denies the rest.
struct AllowList(Vec<String>);

#[async_trait]
impl Gate for AllowList {
    async fn check(&self, request: &GateRequest) -> GateDecision {
        if self.0.iter().any(|t| t == &request.tool) {
            GateDecision::Allow
        } else {
            GateDecision::deny(format!("{} is not in this server's --allow list", request.tool))
        }
    }
}

/// Asks the person at the terminal. One question at a time.
struct TerminalPrompt {
    lock: tokio::sync::Mutex<()>,
}

#[async_trait]
impl Gate for TerminalPrompt {
    async fn check(&self, request: &GateRequest) -> GateDecision {
        let _one_at_a_time = self.lock.lock().await;
        let request = request.clone();
        tokio::task::spawn_blocking(move || ask_tty(&request))
            .await
            .unwrap_or_else(|e| GateDecision::deny(format!("the consent prompt failed: {e}")))
    }
}

/// The person's terminal: the controlling one, or else the one stderr is attached to (MCP
/// clients often start servers in a new session, without a controlling terminal, but pass
/// their own stderr through).
fn open_terminal() -> std::io::Result<std::fs::File> {
    let open = |path: &std::path::Path| std::fs::OpenOptions::new().read(true).write(true).open(path);
    match open(std::path::Path::new("/dev/tty")) {
        Ok(tty) => Ok(tty),
        Err(e) if std::io::stderr().is_terminal() => match std::fs::read_link("/proc/self/fd/2") {
            Ok(path) => open(&path),
            Err(_) => Err(e),
        },
        Err(e) => Err(e),
    }
}

fn ask_tty(request: &GateRequest) -> GateDecision {
    let tty = match open_terminal() {
        Ok(tty) => tty,
        Err(e) => return GateDecision::deny(format!("no terminal to ask for consent ({e}); use --allow")),
    };
    let mut out = match tty.try_clone() {
        Ok(out) => out,
        Err(e) => return GateDecision::deny(format!("no terminal to ask for consent ({e})")),
    };
    let args = serde_json::to_string_pretty(&request.arguments).unwrap_or_default();
    if write!(
        out,
        "\nMCP client wants to run {} with\n{args}\nAllow? [y/N] ",
        request.tool
    )
    .is_err()
    {
        return GateDecision::deny("the terminal could not be written");
    }
    let _ = out.flush();
    let mut answer = String::new();
    if BufReader::new(tty).read_line(&mut answer).is_err() {
        return GateDecision::deny("the terminal could not be read");
    }
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => GateDecision::Allow,
        _ => GateDecision::deny("the person at the terminal said no"),
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("mcp-server: {message}\n");
            }
            eprintln!("{USAGE}");
            return std::process::ExitCode::from(2);
        }
    };
    let gate: Arc<dyn Gate> = match &args.allow {
        Some(list) => Arc::new(AllowList(list.clone())),
        None => Arc::new(TerminalPrompt {
            lock: tokio::sync::Mutex::new(()),
        }),
    };
    let builder = match ToolServer::builder_from_tools(fs_tools(FsPolicy::root(&args.root))) {
        Ok(builder) => builder,
        Err(e) => {
            eprintln!("mcp-server: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let mut builder = builder
        .gate_arc(gate)
        .name("agent-core-fs")
        .instructions(format!(
            "Filesystem and shell tools confined to {}. Paths are relative to it.",
            args.root.display()
        ))
        .allowed_origins(args.origins.clone());
    let token = match (args.http, args.no_token) {
        (Some(_), false) => match bearer_token() {
            Ok(token) => Some(token),
            Err(e) => {
                eprintln!("mcp-server: {e}");
                return std::process::ExitCode::FAILURE;
            }
        },
        _ => None,
    };
    if let Some(token) = &token {
        builder = builder.bearer_token(token);
    }
    let server = match builder.try_build() {
        Ok(server) => server,
        Err(e) => {
            eprintln!("mcp-server: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let result = match args.http {
        Some(addr) => match server.serve_http(addr).await {
            Ok(handle) => {
                eprintln!("mcp-server: serving {} at {}", args.root.display(), handle.url());
                match &token {
                    Some(token) => eprintln!(
                        "mcp-server: clients must send the header\n  Authorization: Bearer {token}\n\
                         for example in an mcpServers entry: {{\"url\": \"{}\", \"headers\": {{\"Authorization\": \"Bearer {token}\"}}}}\n\
                         (set {TOKEN_VAR} to choose the token)",
                        handle.url()
                    ),
                    None => eprintln!("mcp-server: --no-token: any local process may connect"),
                }
                let _ = tokio::signal::ctrl_c().await;
                handle.shutdown().await
            }
            Err(e) => Err(e),
        },
        None => {
            eprintln!("mcp-server: serving {} over stdio", args.root.display());
            server.serve_stdio().await
        }
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-server: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
