//! One agent turn against a real model: the provider comes from the `LLM_*` environment
//! (`LLM_PROVIDER`, `LLM_MODEL`, `LLM_API_KEY`, `LLM_BASE_URL`), the tools are agent-tools'
//! filesystem and shell tools confined to a directory. Answer text streams to stdout; each tool
//! call and each result is printed on one line.
//!
//! ```text
//! LLM_PROVIDER=openai-compatible LLM_MODEL=qwen2.5 LLM_API_KEY= LLM_BASE_URL=http://127.0.0.1:8080/v1 \
//!   cargo run -p agent-examples --bin chat -- "List the files here and read the README"
//! ```
//!
//! Options: `--root DIR` (the directory the tools may touch; default: the current directory),
//! `--yes` (allow the gated tools, fs_write, fs_delete and shell_exec, without asking; without
//! it they are asked about on a terminal and denied otherwise), `--system TEXT`.
//! Exit status: 0 when the turn is done, 1 when it ends otherwise (provider error, denied,
//! capped, cancelled), 2 on a usage or configuration error.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agent_core::{Agent, AgentConfig, DenialPolicy, EventKind, GateDecision, GateRequest, OutcomeStatus, gate_fn};
use agent_tools::{FsPolicy, fs_tools};
use futures::StreamExt;

const USAGE: &str = "usage: chat [--root DIR] [--yes] [--system TEXT] \"<message>\"";

struct Args {
    message: String,
    root: PathBuf,
    yes: bool,
    system: String,
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let mut message = Vec::new();
    let mut root = None;
    let mut yes = false;
    let mut system = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--root" => root = Some(PathBuf::from(args.next().ok_or("--root needs a directory")?)),
            "--yes" | "-y" => yes = true,
            "--system" => system = Some(args.next().ok_or("--system needs a text")?),
            "--help" | "-h" => return Err(USAGE.into()),
            other if other.starts_with("--") => return Err(format!("unknown option {other}; {USAGE}")),
            _ => message.push(arg),
        }
    }
    if message.is_empty() {
        return Err(USAGE.into());
    }
    let root = match root {
        Some(r) => r,
        None => std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?,
    };
    Ok(Args {
        message: message.join(" "),
        root,
        yes,
        system: system.unwrap_or_else(|| {
            "You are a helpful assistant with filesystem and shell tools confined to one directory. \
             Use them when they help, then answer briefly."
                .into()
        }),
    })
}

/// One line, at most `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let flat = flat.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > max {
        format!("{}…", flat.chars().take(max).collect::<String>())
    } else {
        flat
    }
}

fn fail(message: &str, code: i32) -> ! {
    eprintln!("chat: {}", one_line(message, 400));
    std::process::exit(code)
}

async fn ask(request: &GateRequest) -> GateDecision {
    let question = format!(
        "allow {} {}? [y/N] ",
        request.tool,
        one_line(&request.arguments.to_string(), 200)
    );
    let answer = tokio::task::spawn_blocking(move || {
        eprint!("{question}");
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map(|_| line)
    })
    .await;
    match answer {
        Ok(Ok(line)) if matches!(line.trim(), "y" | "Y" | "yes") => GateDecision::Allow,
        _ => GateDecision::deny("the person said no"),
    }
}

#[tokio::main]
async fn main() {
    let args = parse_args().unwrap_or_else(|e| fail(&e, 2));
    let provider = agent_providers::from_env().unwrap_or_else(|e| fail(&e.to_string(), 2));
    let interactive = std::io::stdin().is_terminal();
    let yes = args.yes;
    let gate = gate_fn(move |request: &GateRequest| {
        let request = request.clone();
        async move {
            if yes {
                GateDecision::Allow
            } else if interactive {
                ask(&request).await
            } else {
                GateDecision::deny(format!(
                    "{} needs consent: run chat with --yes to allow it",
                    request.tool
                ))
            }
        }
    });
    let mut builder = Agent::builder()
        .provider_arc(provider)
        .gate(gate)
        .system_prompt(args.system)
        .config(AgentConfig {
            on_denial: DenialPolicy::TellModel,
            ..AgentConfig::default()
        });
    for tool in fs_tools(FsPolicy::root(&args.root)) {
        builder = builder.tool_arc(tool);
    }
    let agent = builder.build().unwrap_or_else(|e| fail(&e.to_string(), 2));
    let session = agent.create_session().await.unwrap_or_else(|e| fail(&e.to_string(), 1));
    let run = session.send(args.message);
    let mut events = run.events();
    let mid_line = Arc::new(AtomicBool::new(false));
    let mut stdout = std::io::stdout();
    let end_line = |stdout: &mut std::io::Stdout| {
        if mid_line.swap(false, Ordering::Relaxed) {
            let _ = writeln!(stdout);
        }
    };
    while let Some(event) = events.next().await {
        match &event.kind {
            EventKind::ContentToken { text } => {
                let _ = write!(stdout, "{text}");
                let _ = stdout.flush();
                mid_line.store(!text.ends_with('\n'), Ordering::Relaxed);
            }
            EventKind::ModelRouted { provider, model } => {
                end_line(&mut stdout);
                let _ = writeln!(stdout, "· model {provider}/{model}");
            }
            EventKind::ToolCallStarted { name, arguments, .. } => {
                end_line(&mut stdout);
                let _ = writeln!(stdout, "→ {name} {}", one_line(&arguments.to_string(), 200));
            }
            EventKind::ToolCallSucceeded {
                name,
                output,
                duration_ms,
                ..
            } => {
                end_line(&mut stdout);
                let _ = writeln!(stdout, "← {name} ({duration_ms} ms): {}", one_line(output, 200));
            }
            EventKind::ToolCallFailed { name, error, .. } => {
                end_line(&mut stdout);
                let _ = writeln!(stdout, "✗ {name} failed: {}", one_line(error, 200));
            }
            EventKind::ToolCallDenied { name, reason, .. } => {
                end_line(&mut stdout);
                let _ = writeln!(stdout, "✗ {name} denied: {}", one_line(reason, 200));
            }
            _ => {}
        }
    }
    let outcome = run.await;
    end_line(&mut stdout);
    if outcome.status != OutcomeStatus::Done {
        let reason = outcome.error.unwrap_or_else(|| outcome.final_text.unwrap_or_default());
        fail(&format!("turn ended {}: {reason}", outcome.status.as_str()), 1);
    }
}
