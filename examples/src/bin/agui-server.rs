//! An AG-UI server: `POST /` takes AG-UI's `RunAgentInput` and streams the run's events over
//! SSE (agent-agui). The model is the `LLM_*` provider (`LLM_PROVIDER`, `LLM_MODEL`,
//! `LLM_API_KEY`, `LLM_BASE_URL`); without those variables it is an offline scripted model
//! (not an LLM) that lists files for "list", asks a question for "ask", reasons for "think" and
//! streams without end for "slow" (until the client aborts). The tools are agent-tools'
//! filesystem tools rooted in the current directory (`--root DIR` for another); fs_write and
//! fs_delete are gated and, with no gate here, denied. Questions (`ask_clarification`) become
//! AG-UI interrupts. Threads are sessions in an in-memory store, or in SQLite with `--db FILE`.
//!
//! ```text
//! cargo run -p agent-examples --bin agui-server -- --addr 127.0.0.1:8080
//! ```
//!
//! Prints `AG-UI endpoint: http://ADDR/` once it listens. See docs/agui.md.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use agent_core::{
    Agent, MemoryStore, Message, ModelRequest, Provider, Role, ScriptStep, ScriptedProvider, ScriptedReply, Store,
};
use agent_tools::{FsPolicy, fs_file_tools};
use serde_json::json;

const USAGE: &str = "usage: agui-server [--addr HOST:PORT] [--root DIR] [--db FILE]";

struct Args {
    addr: String,
    root: Option<PathBuf>,
    db: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let mut parsed = Args {
        addr: "127.0.0.1:0".into(),
        root: None,
        db: None,
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => parsed.addr = args.next().ok_or("--addr needs HOST:PORT")?,
            "--root" => parsed.root = Some(args.next().ok_or("--root needs a directory")?.into()),
            "--db" => parsed.db = Some(args.next().ok_or("--db needs a file")?.into()),
            "--help" | "-h" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument {other}; {USAGE}")),
        }
    }
    Ok(parsed)
}

/// The offline model: a function of the conversation, not an LLM.
fn offline_step(request: &ModelRequest) -> ScriptStep {
    let Some(last) = request.messages.last() else {
        return ScriptedReply::text("Offline scripted model: nothing to answer.").into();
    };
    if last.role == Role::Tool {
        return after_tool(last).into();
    }
    let said = last.text();
    let lower = said.to_lowercase();
    if lower.contains("list") {
        ScriptedReply::tool_call("fs_list", json!({"path": "."}))
            .with_text("Listing the directory. ")
            .into()
    } else if lower.contains("ask") {
        ScriptedReply::tool_call(
            agent_core::CLARIFICATION_TOOL,
            json!({"kind": "choice", "title": "Colour", "question": "Which colour do you want?", "options": ["red", "blue"]}),
        )
        .into()
    } else if lower.contains("slow") {
        ScriptStep::Hang("Working on it, slowly".into())
    } else if lower.contains("think") {
        ScriptedReply::text("Thought about it: the answer is 42.")
            .with_reasoning("The person wants me to think. ")
            .into()
    } else {
        ScriptedReply::text(format!(
            "Offline scripted model (not an LLM): you said {said:?}. Try \"list the files\", \"ask me\", \"think\" or \"slow\"."
        ))
        .into()
    }
}

fn after_tool(result: &Message) -> ScriptedReply {
    let text = result.text();
    if result.tool_name.as_deref() == Some(agent_core::CLARIFICATION_TOOL) {
        let answer = text.rsplit(": ").next().unwrap_or(&text).trim().to_owned();
        return ScriptedReply::text(format!("You chose {answer}."));
    }
    let tool = result.tool_name.as_deref().unwrap_or("the tool");
    ScriptedReply::text(format!("{tool} returned {} lines.", text.lines().count()))
}

fn fail(message: &str, code: i32) -> ! {
    eprintln!("agui-server: {message}");
    std::process::exit(code)
}

#[tokio::main]
async fn main() {
    let args = parse_args().unwrap_or_else(|e| fail(&e, 2));
    let root = match args.root {
        Some(root) => root,
        None => std::env::current_dir().unwrap_or_else(|e| fail(&format!("cannot read the current directory: {e}"), 2)),
    };
    let llm = std::env::vars().any(|(k, _)| k.starts_with("LLM_"));
    let provider: Arc<dyn Provider> = if llm {
        let p = agent_providers::from_env().unwrap_or_else(|e| fail(&e.to_string(), 2));
        println!("model: the real provider from LLM_* ({})", p.id());
        p
    } else {
        println!("model: OFFLINE SCRIPTED MODEL (not an LLM): \"list\" lists files, \"ask\" asks a question,");
        println!("       \"think\" reasons, \"slow\" streams until aborted. Set LLM_PROVIDER, LLM_MODEL,");
        println!("       LLM_API_KEY (and LLM_BASE_URL) to serve a real model.");
        Arc::new(ScriptedProvider::from_fn(offline_step))
    };
    let store: Arc<dyn Store> = match &args.db {
        Some(path) => Arc::new(
            agent_store::SqliteStore::open(path)
                .await
                .unwrap_or_else(|e| fail(&format!("cannot open {}: {e}", path.display()), 2)),
        ),
        None => Arc::new(MemoryStore::new()),
    };
    let mut builder = Agent::builder()
        .provider_arc(provider)
        .store_arc(store)
        .clarification(true)
        .system_prompt(
            "You are a helpful assistant with filesystem tools confined to one directory. \
             Use them when they help; ask the person (ask_clarification) when the request is ambiguous.",
        );
    for tool in fs_file_tools(FsPolicy::root(&root)) {
        builder = builder.tool_arc(tool);
    }
    let agent = builder.build().unwrap_or_else(|e| fail(&e.to_string(), 2));
    let listener = tokio::net::TcpListener::bind(&args.addr)
        .await
        .unwrap_or_else(|e| fail(&format!("cannot listen on {}: {e}", args.addr), 2));
    let addr = listener.local_addr().unwrap_or_else(|e| fail(&e.to_string(), 2));
    println!(
        "tools: fs_read, fs_list, fs_mkdir (fs_write, fs_delete denied) in {}",
        root.display()
    );
    println!("AG-UI endpoint: http://{addr}/");
    let _ = std::io::stdout().flush();
    if let Err(e) = axum::serve(listener, agent_agui::router(agent)).await {
        fail(&e.to_string(), 1);
    }
}
