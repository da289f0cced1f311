//! The whole-process harness: starts `mock-llm` as a separate process, measures its raw
//! ceiling with a bare hyper client, then runs agent-core's loop against it through the
//! OpenAI-compatible adapter: `--steps` tool steps plus the final answer per session, first
//! `--sequential` sessions one after another, then `--concurrent` sessions at once (once with
//! a cold connection pool, then `--rounds` more times). A last row streams the same requests
//! through the adapter alone (no agent loop), `--concurrent` at a time, `--rounds` times, to
//! tell the adapter's share of the CPU time from the loop's. Every row is measured for Chat
//! Completions (`OpenAiCompatible`) and then for the Responses API (`OpenAiResponses`, against
//! the mock's `/responses` endpoint); `--wire chat` or `--wire responses` runs one of them.
//!
//! ```text
//! cargo run --release -p agent-bench --bin harness -- [--sequential 200] [--concurrent 100]
//!     [--rounds 5] [--steps 10] [--json] [--wire both|chat|responses] [--client-threads 1]
//!     [--server-threads 1] [--server-bin PATH]
//! ```
//!
//! Figures: ms per model call (wall), CPU ms per model call (this process), calls/s, peak RSS
//! of both processes.

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_bench::{MockProcess, cpu_time, http1_connection, peak_rss_kib};
use agent_core::{
    Agent, CancellationToken, Message, ModelRequest, OutcomeStatus, Provider, StreamEvent, ToolCall, ToolContext,
    ToolError, ToolSchema, tool_fn,
};
use agent_providers::{OpenAiCompatible, OpenAiResponses, ProviderConfig, ProviderKind};
use bytes::Bytes;
use futures::StreamExt;
use http_body_util::{BodyExt, Full};

/// The OpenAI wire format a row is measured with.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wire {
    Chat,
    Responses,
}

impl Wire {
    fn label(self) -> &'static str {
        match self {
            Wire::Chat => "chat",
            Wire::Responses => "responses",
        }
    }

    fn path(self) -> &'static str {
        match self {
            Wire::Chat => "/chat/completions",
            Wire::Responses => "/responses",
        }
    }

    /// The body of a session's first request, for the bare client.
    fn step_body(self, stream: bool) -> Bytes {
        let body = match self {
            Wire::Chat => serde_json::json!({
                "model": "mock",
                "messages": [{"role": "system", "content": "You are a benchmark."}, {"role": "user", "content": "go"}],
                "tools": [{"type": "function", "function": {"name": "step", "description": "One step.", "parameters": {"type": "object", "properties": {}}}}],
                "stream": stream,
            }),
            Wire::Responses => serde_json::json!({
                "model": "mock",
                "instructions": "You are a benchmark.",
                "input": [{"role": "user", "content": "go"}],
                "tools": [{"type": "function", "name": "step", "description": "One step.", "parameters": {"type": "object", "properties": {}}}],
                "store": false,
                "stream": stream,
            }),
        };
        Bytes::from(body.to_string())
    }
}

struct Opts {
    wires: Vec<Wire>,
    sequential: usize,
    concurrent: usize,
    rounds: usize,
    steps: u64,
    stream: bool,
    client_threads: usize,
    server_threads: usize,
    server_bin: Option<String>,
}

fn parse() -> Result<Opts, String> {
    let mut o = Opts {
        wires: vec![Wire::Chat, Wire::Responses],
        sequential: 200,
        concurrent: 100,
        rounds: 5,
        steps: 10,
        stream: true,
        client_threads: 1,
        server_threads: 1,
        server_bin: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        let num = |v: String| v.parse::<usize>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--sequential" => o.sequential = num(value()?)?,
            "--concurrent" => o.concurrent = num(value()?)?,
            "--rounds" => o.rounds = num(value()?)?.max(1),
            "--steps" => o.steps = num(value()?)? as u64,
            "--json" => o.stream = false,
            "--wire" => {
                o.wires = match value()?.as_str() {
                    "both" => vec![Wire::Chat, Wire::Responses],
                    "chat" => vec![Wire::Chat],
                    "responses" => vec![Wire::Responses],
                    other => return Err(format!("--wire: both, chat or responses, not {other:?}")),
                }
            }
            "--client-threads" => o.client_threads = num(value()?)?.max(1),
            "--server-threads" => o.server_threads = num(value()?)?.max(1),
            "--server-bin" => o.server_bin = Some(value()?),
            "--bench" => {} // passed by `cargo bench`
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(o)
}

fn start_server(o: &Opts) -> Result<MockProcess, String> {
    let bin = match &o.server_bin {
        Some(b) => b.into(),
        None => std::env::current_exe()
            .map_err(|e| e.to_string())?
            .with_file_name("mock-llm"),
    };
    let mut command = Command::new(bin);
    command
        .args(["--port", "0", "--max-seconds", "900"])
        .args(["--tool-steps", &o.steps.to_string()])
        .args(["--threads", &o.server_threads.to_string()]);
    MockProcess::start(command)
}

/// `count` requests on one keep-alive connection with a bare hyper client.
async fn raw_connection(url: &str, wire: Wire, count: usize, body: Bytes) -> Result<(), String> {
    let (mut sender, authority) = http1_connection(url).await?;
    let uri = format!("{url}{}", wire.path());
    for _ in 0..count {
        sender.ready().await.map_err(|e| e.to_string())?;
        let request = hyper::Request::post(&uri)
            .header("host", &authority)
            .header("content-type", "application/json")
            .body(Full::new(body.clone()))
            .map_err(|e| e.to_string())?;
        let response = sender.send_request(request).await.map_err(|e| e.to_string())?;
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        if bytes.len() < 10 {
            return Err("short response".into());
        }
    }
    Ok(())
}

struct Figures {
    calls: usize,
    wall: Duration,
    cpu: Duration,
}

impl Figures {
    fn line(&self, what: &str) -> String {
        let calls = self.calls as f64;
        format!(
            "{what:<58} {:>8.4} ms/call  {:>8.4} CPU ms/call  {:>9.0} calls/s  ({} calls in {:.2} s)",
            self.wall.as_secs_f64() * 1000.0 / calls,
            self.cpu.as_secs_f64() * 1000.0 / calls,
            calls / self.wall.as_secs_f64(),
            self.calls,
            self.wall.as_secs_f64()
        )
    }
}

async fn measure<F: std::future::Future<Output = Result<usize, String>>>(f: F) -> Result<Figures, String> {
    let (cpu0, t0) = (cpu_time(), Instant::now());
    let calls = f.await?;
    Ok(Figures {
        calls,
        wall: t0.elapsed(),
        cpu: cpu_time().saturating_sub(cpu0),
    })
}

async fn session(agent: &Agent, steps: u64) -> Result<usize, String> {
    let session = agent.create_session().await.map_err(|e| e.to_string())?;
    let outcome = session.send("go").await;
    if outcome.status != OutcomeStatus::Done || u64::from(outcome.tool_calls) != steps {
        return Err(format!(
            "session ended {} after {} tool calls: {:?}",
            outcome.status.as_str(),
            outcome.tool_calls,
            outcome.error
        ));
    }
    Ok(outcome.iterations as usize)
}

/// The requests of one session as the loop builds them: system prompt, the task, then `k`
/// (tool call, result) pairs for `k` in `0..=steps`.
fn session_requests(steps: u64) -> Vec<ModelRequest> {
    let tools = Arc::new(vec![ToolSchema {
        name: "step".into(),
        description: "One step.".into(),
        parameters: serde_json::json!({"type": "object", "properties": {}}),
    }]);
    let mut messages = vec![Message::user("go")];
    let mut requests = Vec::new();
    for k in 0..=steps {
        requests.push(ModelRequest {
            system: Some("You are a benchmark.".into()),
            messages: messages.clone(),
            tools: tools.clone(),
            ..ModelRequest::default()
        });
        let id = format!("call_{k}_0");
        let call = ToolCall::new(id.clone(), "step", &serde_json::json!({}));
        messages.push(Message::assistant_with_tools("", vec![call]));
        messages.push(Message::tool_result(id, "step", "ok", false));
    }
    requests
}

/// The adapter alone: every request of `sessions` sessions, streamed to the end.
async fn provider_calls(provider: &impl Provider, requests: &[ModelRequest], sessions: usize) -> Result<usize, String> {
    for _ in 0..sessions {
        for request in requests {
            let mut events = provider
                .stream(request, CancellationToken::new())
                .await
                .map_err(|e| e.to_string())?;
            let mut done = false;
            while let Some(event) = events.next().await {
                done |= matches!(event.map_err(|e| e.to_string())?, StreamEvent::Done { .. });
            }
            if !done {
                return Err("a provider stream ended without Done".into());
            }
        }
    }
    Ok(sessions * requests.len())
}

async fn run(o: Opts) -> Result<(), String> {
    let server = start_server(&o)?;
    let url = server.url.clone();
    println!(
        "whole-process harness: mock-llm (pid {}, {} thread(s)) at {url}; client {} thread(s); {} tool steps + final answer per session; {}",
        server.child.id(),
        o.server_threads,
        o.client_threads,
        o.steps,
        if o.stream { "SSE" } else { "JSON" }
    );
    for wire in o.wires.clone() {
        let config = |kind| {
            ProviderConfig::new(kind, "mock", "")
                .with_base_url(url.clone())
                .with_streaming(o.stream)
        };
        match wire {
            Wire::Chat => {
                let provider =
                    OpenAiCompatible::new(&config(ProviderKind::OpenAiCompatible)).map_err(|e| e.to_string())?;
                wire_rows(&o, &url, wire, provider).await?;
            }
            Wire::Responses => {
                let provider =
                    OpenAiResponses::new(&config(ProviderKind::OpenAiResponses)).map_err(|e| e.to_string())?;
                wire_rows(&o, &url, wire, provider).await?;
            }
        }
    }
    let mib = |kib: Option<u64>| kib.map_or("?".to_owned(), |k| format!("{:.1} MiB", k as f64 / 1024.0));
    println!(
        "peak RSS: client {}, server {}",
        mib(peak_rss_kib("self")),
        mib(peak_rss_kib(&server.child.id().to_string()))
    );
    Ok(())
}

/// The server's ceiling for one wire with a bare client, then the agent's rows and the
/// adapter's alone through `provider`, each labelled with the wire.
async fn wire_rows<P: Provider + Clone + 'static>(o: &Opts, url: &str, wire: Wire, provider: P) -> Result<(), String> {
    let row = |figures: &Figures, what: String| println!("{}", figures.line(&format!("{}: {what}", wire.label())));
    let body = wire.step_body(o.stream);
    raw_connection(url, wire, 200, body.clone()).await?; // warm-up
    let raw_seq = measure(async {
        raw_connection(url, wire, 5000, body.clone()).await?;
        Ok(5000)
    })
    .await?;
    row(&raw_seq, "server ceiling, bare hyper client, sequential".into());
    let raw_par = measure(async {
        let tasks: Vec<_> = (0..o.concurrent)
            .map(|_| {
                let (url, body) = (url.to_owned(), body.clone());
                tokio::spawn(async move { raw_connection(&url, wire, 100, body).await })
            })
            .collect();
        for t in tasks {
            t.await.map_err(|e| e.to_string())??;
        }
        Ok(o.concurrent * 100)
    })
    .await?;
    row(
        &raw_par,
        format!("server ceiling, bare hyper client, {} conns", o.concurrent),
    );

    let adapter = Arc::new(provider.clone());
    let step = tool_fn(
        "step",
        "One step.",
        |_: serde_json::Value, _cx: ToolContext| async move { Ok::<_, ToolError>("ok") },
    );
    let agent = Arc::new(
        Agent::builder()
            .provider(provider)
            .tool(step)
            .system_prompt("You are a benchmark.")
            // Any --steps: the default cap (12 tool calls per turn) would end longer sessions.
            .config(agent_core::AgentConfig {
                max_tool_calls: None,
                // The mock repeats one call and the tool answers the same: the loop guard
                // (default 3) would rightly end the turn.
                max_repeated_calls: 0,
                ..agent_core::AgentConfig::default()
            })
            .build()
            .map_err(|e| e.to_string())?,
    );
    session(&agent, o.steps).await?; // warm-up

    let seq = measure(async {
        let mut calls = 0;
        for _ in 0..o.sequential {
            calls += session(&agent, o.steps).await?;
        }
        Ok(calls)
    })
    .await?;
    row(&seq, format!("agent, {} sessions one after another", o.sequential));

    let burst = || async {
        let tasks: Vec<_> = (0..o.concurrent)
            .map(|_| {
                let agent = agent.clone();
                let steps = o.steps;
                tokio::spawn(async move { session(&agent, steps).await })
            })
            .collect();
        let mut calls = 0;
        for t in tasks {
            calls += t.await.map_err(|e| e.to_string())??;
        }
        Ok::<usize, String>(calls)
    };
    let first = measure(burst()).await?;
    row(&first, format!("agent, {} sessions at once (cold pool)", o.concurrent));
    let par = measure(async {
        let mut calls = 0;
        for _ in 0..o.rounds {
            calls += burst().await?;
        }
        Ok(calls)
    })
    .await?;
    row(
        &par,
        format!("agent, {} sessions at once, x{} rounds", o.concurrent, o.rounds),
    );
    let requests = Arc::new(session_requests(o.steps));
    let alone = measure(async {
        let tasks: Vec<_> = (0..o.concurrent)
            .map(|_| {
                let (adapter, requests) = (adapter.clone(), requests.clone());
                let sessions = o.rounds;
                tokio::spawn(async move { provider_calls(adapter.as_ref(), &requests, sessions).await })
            })
            .collect();
        let mut calls = 0;
        for t in tasks {
            calls += t.await.map_err(|e| e.to_string())??;
        }
        Ok(calls)
    })
    .await?;
    row(
        &alone,
        format!("adapter alone, {} sessions at once, x{} rounds", o.concurrent, o.rounds),
    );
    Ok(())
}

fn main() {
    let result = parse().and_then(|o| {
        let runtime = if o.client_threads == 1 {
            tokio::runtime::Builder::new_current_thread().enable_all().build()
        } else {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(o.client_threads)
                .enable_all()
                .build()
        }
        .map_err(|e| e.to_string())?;
        runtime.block_on(run(o))
    });
    if let Err(e) = result {
        eprintln!("harness: {e}");
        std::process::exit(1);
    }
}
