//! shell_exec: `sh -c` in its own process group, killed as a whole on timeout, cancel, drop,
//! and when the shell exits (background processes do not outlive the call).

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use agent_core::untrusted::{Provenance, one_line, wrap_untrusted};
use agent_core::{Tool, ToolContext, ToolError, ToolOutput, tool_fn};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt};

use super::policy::FsPolicy;

/// Default `timeout_ms` of shell_exec.
pub const DEFAULT_SHELL_TIMEOUT_MS: u64 = 30_000;
/// The largest `timeout_ms` a call may ask for.
pub const MAX_SHELL_TIMEOUT_MS: u64 = 600_000;
/// Characters of the command kept in the provenance label of its output.
const COMMAND_LABEL_CHARS: usize = 200;

/// Arguments of shell_exec.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ShellArgs {
    /// The command line, run with `sh -c`.
    pub command: String,
    /// How long the command may run, in milliseconds (default 30000, at most 600000). On
    /// timeout the command and everything it started are killed.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// Kills a process group when dropped (the loop drops a call's future on timeout or cancel).
struct GroupGuard(Option<Pid>);

impl GroupGuard {
    fn kill(&mut self) {
        if let Some(pgid) = self.0.take() {
            let _ = killpg(pgid, Signal::SIGKILL);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

async fn read_capped(mut r: impl AsyncRead + Unpin, cap: usize) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    let mut truncated = false;
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = cap.saturating_sub(out.len());
                if n > room {
                    truncated = true;
                }
                out.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    (out, truncated)
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs one command.
pub(crate) async fn shell_exec(policy: &FsPolicy, args: ShellArgs, cx: &ToolContext) -> Result<ToolOutput, ToolError> {
    if args.command.trim().is_empty() {
        return Err(ToolError::model("refused: the command is empty"));
    }
    let timeout_ms = args
        .timeout_ms
        .unwrap_or(DEFAULT_SHELL_TIMEOUT_MS)
        .clamp(1, MAX_SHELL_TIMEOUT_MS);
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(&args.command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(root) = policy.root_dir() {
        cmd.current_dir(root);
    }
    // The one place the host's environment is read: a command gets the filtered copy, so
    // secrets in the host's environment stay there unless the host opted in.
    if let Some(vars) = policy.shell_env.filter(std::env::vars_os()) {
        cmd.env_clear().envs(vars);
    }
    cmd.envs(policy.shell_env.set.iter().map(|(k, v)| (k, v)));
    let mut child = cmd
        .spawn()
        .map_err(|e| ToolError::model(format!("could not start sh: {e}")))?;
    let mut guard = GroupGuard(child.id().map(|id| Pid::from_raw(id as i32)));
    let cap = policy.max_shell_output;
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let out_task = tokio::spawn(async move {
        match stdout {
            Some(s) => read_capped(s, cap).await,
            None => (Vec::new(), false),
        }
    });
    let err_task = tokio::spawn(async move {
        match stderr {
            Some(s) => read_capped(s, cap).await,
            None => (Vec::new(), false),
        }
    });

    enum End {
        Exited(Option<i32>),
        TimedOut,
        Cancelled,
    }
    let end = tokio::select! {
        status = child.wait() => End::Exited(status.ok().and_then(|s| {
            use std::os::unix::process::ExitStatusExt;
            s.code().or_else(|| s.signal().map(|sig| 128 + sig))
        })),
        _ = tokio::time::sleep(Duration::from_millis(timeout_ms)) => End::TimedOut,
        _ = cx.cancel.cancelled() => End::Cancelled,
    };
    // Whatever happened, nothing the command started keeps running.
    guard.kill();
    let _ = child.wait().await;
    let grace = Duration::from_millis(500);
    let (out, out_cut) = tokio::time::timeout(grace, out_task)
        .await
        .ok()
        .and_then(|r| r.ok())
        .unwrap_or_default();
    let (err, err_cut) = tokio::time::timeout(grace, err_task)
        .await
        .ok()
        .and_then(|r| r.ok())
        .unwrap_or_default();
    let truncated = out_cut || err_cut;
    // What a command prints is untrusted (it may cat a hostile file); the label keeps the
    // command short and on one line.
    let source = Provenance::command(&one_line(&args.command, COMMAND_LABEL_CHARS));
    match end {
        // An error carries no provenance for the loop to wrap, so the partial output is
        // wrapped here.
        End::Cancelled => Err(ToolError::model(format!(
            "cancelled: the command was stopped and its process group killed; partial stdout:\n{}",
            wrap_untrusted(&source, &lossy(&out))
        ))),
        End::TimedOut => Ok(ToolOutput::json(json!({
            "exit_code": null,
            "timed_out": true,
            "note": format!("timed out after {timeout_ms} ms; the command and everything it started were killed"),
            "stdout": lossy(&out),
            "stderr": lossy(&err),
            "truncated": truncated,
        }))
        .with_truncated(truncated)
        .with_provenance(source)),
        End::Exited(code) => Ok(ToolOutput::json(json!({
            "exit_code": code,
            "stdout": lossy(&out),
            "stderr": lossy(&err),
            "truncated": truncated,
        }))
        .with_truncated(truncated)
        .with_provenance(source)),
    }
}

/// The shell_exec tool (gated). With a root, the command runs there.
pub fn shell_tool(policy: FsPolicy) -> Arc<dyn Tool> {
    let p = Arc::new(policy);
    Arc::new(
        tool_fn(
            "shell_exec",
            "Run a shell command (sh -c) and return its stdout, stderr and exit code. timeout_ms defaults to 30000; on timeout the command and everything it started are killed. Background processes do not outlive the call.",
            move |a: ShellArgs, cx: ToolContext| {
                let p = p.clone();
                async move { shell_exec(&p, a, &cx).await }
            },
        )
        .gated(true)
        .timeout(Duration::from_millis(MAX_SHELL_TIMEOUT_MS + 5_000)),
    )
}
