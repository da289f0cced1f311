//! One client of the side-by-side comparison (`compare`): runs `--sessions` sessions of
//! `--steps` tool steps plus a final answer against `mock-llm` at `--url`, `--concurrency` at
//! a time, and prints one JSON line of figures (see `agent_bench::ClientFigures`).
//!
//! Variants:
//! - `reference`: a hand-written loop on a bare hyper connection, the floor any agent loop is
//!   measured against: it keeps the messages as JSON values, posts them, scans the SSE lines,
//!   collects the tool call, appends it and the tool's result, and goes again;
//! - `rust`, `rust-memory`, `rust-sqlite`: agent-core's loop through `OpenAiCompatible` with a
//!   no-op Rust tool, without a store, with `MemoryStore`, with `SqliteStore` (a fresh file);
//! - `rust-handoff`: the `rust` loop with the tool's body run on a thread of its own (woken
//!   when the runtime's thread parks, answering through a oneshot channel): the hand-off every
//!   binding's tool pays
//!   (a Python `def` runs on the binding's Python thread, a JS tool on Node's main thread),
//!   without the interpreter, so its ratio to `rust` is the floor of that design.
//!
//! ```text
//! compare-client --variant rust --url http://127.0.0.1:PORT/v1 --sessions 100 --concurrency 100 --steps 10
//!     [--turns 1] [--sqlite-options '{"group_commit_delay_ms": 0}']
//! ```
//!
//! `--turns N` sends each session N turns of `--steps` tool steps (agent variants), so that
//! sessions grow long histories.
//!
//! Built with `--features mimalloc`, every variant allocates through mimalloc, as the Python
//! and Node bindings do; by default through the system allocator, as a Rust application does
//! unless it chooses otherwise.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use agent_bench::{ClientFigures, cpu_time, http1_connection, peak_rss_kib};
use agent_core::{Agent, MemoryStore, OutcomeStatus, ToolContext, ToolError, tool_fn};
use agent_providers::{OpenAiCompatible, ProviderConfig, ProviderKind};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Opts {
    variant: String,
    url: String,
    sessions: usize,
    concurrency: usize,
    steps: u64,
    /// Turns per session (agent variants).
    turns: u32,
    /// `SqliteOptions` as JSON, for `rust-sqlite` (tuning experiments).
    sqlite_options: Option<String>,
}

fn parse() -> Result<Opts, String> {
    let mut o = Opts {
        variant: "rust".into(),
        url: String::new(),
        sessions: 100,
        concurrency: 1,
        steps: 10,
        turns: 1,
        sqlite_options: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        let num = |v: String| v.parse::<usize>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--variant" => o.variant = value()?,
            "--url" => o.url = value()?,
            "--sessions" => o.sessions = num(value()?)?,
            "--concurrency" => o.concurrency = num(value()?)?.max(1),
            "--steps" => o.steps = num(value()?)? as u64,
            "--turns" => o.turns = u32::try_from(num(value()?)?.max(1)).map_err(|e| format!("--turns: {e}"))?,
            "--sqlite-options" => o.sqlite_options = Some(value()?),
            other => return Err(format!("unknown option {other}")),
        }
    }
    if o.url.is_empty() {
        return Err("--url is required (the mock-llm base URL)".into());
    }
    if o.turns > 1 && o.variant == "reference" {
        return Err("--turns: the reference runs one turn per session".into());
    }
    Ok(o)
}

/// The request body, serialized straight from the loop's state.
#[derive(serde::Serialize)]
struct RequestBody<'a> {
    model: &'a str,
    stream: bool,
    messages: &'a [Value],
    tools: &'a Value,
}

/// The parts of a Chat Completions stream chunk the loop reads (borrowed where unescaped).
#[derive(serde::Deserialize)]
struct Chunk<'a> {
    #[serde(borrow, default)]
    choices: Vec<Choice<'a>>,
}

#[derive(serde::Deserialize)]
struct Choice<'a> {
    #[serde(borrow, default)]
    delta: Delta<'a>,
}

#[derive(serde::Deserialize, Default)]
struct Delta<'a> {
    #[serde(borrow, default)]
    content: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    tool_calls: Vec<CallDelta<'a>>,
}

#[derive(serde::Deserialize)]
struct CallDelta<'a> {
    #[serde(borrow, default)]
    id: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    function: FunctionDelta<'a>,
}

#[derive(serde::Deserialize, Default)]
struct FunctionDelta<'a> {
    #[serde(borrow, default)]
    name: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<std::borrow::Cow<'a, str>>,
}

/// One keep-alive connection of the hand-written loop.
struct Connection {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    authority: String,
    uri: String,
}

impl Connection {
    async fn open(url: &str) -> Result<Connection, String> {
        let (sender, authority) = http1_connection(url).await?;
        Ok(Connection {
            sender,
            authority,
            uri: format!("{url}/chat/completions"),
        })
    }

    /// One session of the hand-written loop; returns its model calls.
    async fn session(&mut self, tools: &Value) -> Result<usize, String> {
        let mut messages = vec![
            json!({"role": "system", "content": "You are a benchmark."}),
            json!({"role": "user", "content": "go"}),
        ];
        let mut calls = 0;
        loop {
            calls += 1;
            let body = serde_json::to_vec(&RequestBody {
                model: "mock",
                stream: true,
                messages: &messages,
                tools,
            })
            .map_err(|e| e.to_string())?;
            self.sender.ready().await.map_err(|e| e.to_string())?;
            let request = hyper::Request::post(&self.uri)
                .header("host", &self.authority)
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from(body)))
                .map_err(|e| e.to_string())?;
            let response = self.sender.send_request(request).await.map_err(|e| e.to_string())?;
            let mut body = response.into_body();
            let (mut pending, mut text) = (Vec::<u8>::new(), String::new());
            let (mut call_id, mut call_name, mut call_args) = (String::new(), String::new(), String::new());
            while let Some(frame) = body.frame().await {
                let frame = frame.map_err(|e| e.to_string())?;
                let Some(chunk) = frame.data_ref() else { continue };
                pending.extend_from_slice(chunk);
                while let Some(end) = pending.iter().position(|&b| b == b'\n') {
                    let line: Vec<u8> = pending.drain(..=end).collect();
                    let Some(data) = line.strip_prefix(b"data: ") else {
                        continue;
                    };
                    let data = data.trim_ascii_end();
                    if data == b"[DONE]" {
                        continue;
                    }
                    let chunk: Chunk<'_> = serde_json::from_slice(data).map_err(|e| e.to_string())?;
                    let Some(choice) = chunk.choices.first() else { continue };
                    if let Some(t) = &choice.delta.content {
                        text.push_str(t);
                    }
                    if let Some(call) = choice.delta.tool_calls.first() {
                        if let Some(id) = &call.id {
                            call_id.push_str(id);
                        }
                        if let Some(name) = &call.function.name {
                            call_name.push_str(name);
                        }
                        if let Some(args) = &call.function.arguments {
                            call_args.push_str(args);
                        }
                    }
                }
            }
            if call_name.is_empty() {
                return if text.is_empty() {
                    Err("an empty answer".into())
                } else {
                    Ok(calls)
                };
            }
            serde_json::from_str::<Value>(&call_args).map_err(|e| format!("bad tool arguments: {e}"))?;
            messages.push(json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": call_name, "arguments": call_args}}
            ]}));
            messages.push(json!({"role": "tool", "tool_call_id": call_id, "content": "ok"}));
        }
    }
}

/// Runs `total` sessions on `concurrency` workers, each taking the next session when its last
/// one ends; `session` runs one session on a worker's state and returns its model calls.
async fn run_workers<S, F, Fut>(
    concurrency: usize,
    total: usize,
    new_worker: impl AsyncFn() -> Result<S, String>,
    session: F,
) -> Result<usize, String>
where
    S: Send + 'static,
    F: Fn(S) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Result<(S, usize), String>> + Send,
{
    let next = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        let (mut state, next, session) = (new_worker().await?, next.clone(), session.clone());
        workers.push(tokio::spawn(async move {
            let mut calls = 0;
            while next.fetch_add(1, Ordering::Relaxed) < total {
                let (back, n) = session(state).await?;
                state = back;
                calls += n;
            }
            Ok::<usize, String>(calls)
        }));
    }
    let mut calls = 0;
    for worker in workers {
        calls += worker.await.map_err(|e| e.to_string())??;
    }
    Ok(calls)
}

async fn run_reference(url: &str, sessions: usize, concurrency: usize) -> Result<usize, String> {
    let tools = Arc::new(json!([{"type": "function", "function": {
        "name": "step", "description": "One step.", "parameters": {"type": "object", "properties": {}}
    }}]));
    run_workers(
        concurrency,
        sessions,
        async || Connection::open(url).await,
        move |mut connection: Connection| {
            let tools = tools.clone();
            async move {
                let calls = connection.session(&tools).await?;
                Ok((connection, calls))
            }
        },
    )
    .await
}

/// Runs one session of `turns` turns; returns its model calls and each turn's time in ms.
async fn agent_session(agent: &Agent, steps: u64, turns: u32) -> Result<(usize, Vec<f64>), String> {
    let session = agent.create_session().await.map_err(|e| e.to_string())?;
    let mut calls = 0;
    let mut times = Vec::with_capacity(turns as usize);
    for _ in 0..turns {
        let started = Instant::now();
        let outcome = session.send("go").await;
        if outcome.status != OutcomeStatus::Done || u64::from(outcome.tool_calls) != steps {
            return Err(format!(
                "a session ended {}: {:?}",
                outcome.status.as_str(),
                outcome.error
            ));
        }
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        calls += outcome.iterations as usize;
    }
    Ok((calls, times))
}

async fn build_agent(o: &Opts, dir: &std::path::Path, tool_thread: Option<&ToolThread>) -> Result<Agent, String> {
    let config = ProviderConfig::new(ProviderKind::OpenAiCompatible, "mock", "").with_base_url(o.url.clone());
    let provider = OpenAiCompatible::new(&config).map_err(|e| e.to_string())?;
    let builder = Agent::builder().provider(provider);
    let builder = if let Some(body) = tool_thread.cloned() {
        builder.tool(tool_fn("step", "One step.", move |_: Value, _cx: ToolContext| {
            let answer = body.call();
            async move { answer.await.map_err(|_| ToolError::fatal("the tool's thread is gone")) }
        }))
    } else {
        builder.tool(tool_fn("step", "One step.", |_: Value, _cx: ToolContext| async move {
            Ok::<_, ToolError>("ok")
        }))
    };
    let builder = builder
        .system_prompt("You are a benchmark.")
        // The mock model repeats one call with the same arguments and the tool answers the
        // same each time: the loop guard (default 3) would rightly end the turn.
        .config(agent_core::AgentConfig {
            max_repeated_calls: 0,
            ..agent_core::AgentConfig::default()
        });
    let builder = match o.variant.as_str() {
        "rust" | "rust-handoff" => builder,
        "rust-memory" => builder.store(MemoryStore::new()),
        "rust-sqlite" => {
            let options: agent_store::SqliteOptions = match &o.sqlite_options {
                Some(json) => serde_json::from_str(json).map_err(|e| format!("--sqlite-options: {e}"))?,
                None => agent_store::SqliteOptions::default(),
            };
            builder.store(
                agent_store::SqliteStore::open_with(dir.join("bench.db"), options)
                    .await
                    .map_err(|e| e.to_string())?,
            )
        }
        other => return Err(format!("unknown variant {other}")),
    };
    builder.build().map_err(|e| e.to_string())
}

/// A thread that runs a tool's body for the runtime, as a binding's thread for the host's code
/// does (`bindings/python/src/python_thread.rs`): calls are queued without waking it, the
/// runtime's thread wakes it when it runs out of work and parks ([`ToolThread::on_park`]),
/// and it answers every queued call through its oneshot channel before sleeping again.
#[derive(Clone)]
struct ToolThread {
    shared: Arc<ToolQueue>,
}

#[derive(Default)]
struct ToolQueue {
    calls: std::sync::Mutex<Vec<tokio::sync::oneshot::Sender<&'static str>>>,
    queued: std::sync::Condvar,
}

impl ToolThread {
    fn start() -> std::io::Result<Self> {
        let shared = Arc::new(ToolQueue::default());
        let serving = shared.clone();
        std::thread::Builder::new().name("tool-body".into()).spawn(move || {
            loop {
                let Ok(mut calls) = serving.calls.lock() else { return };
                while calls.is_empty() {
                    calls = match serving.queued.wait(calls) {
                        Ok(calls) => calls,
                        Err(_) => return,
                    };
                }
                let batch = std::mem::take(&mut *calls);
                drop(calls);
                for answer in batch {
                    let _ = answer.send("ok");
                }
            }
        })?;
        Ok(ToolThread { shared })
    }

    /// Queues one call; the receiver answers with the tool's result.
    fn call(&self) -> tokio::sync::oneshot::Receiver<&'static str> {
        let (answer, result) = tokio::sync::oneshot::channel();
        // A poisoned lock drops `answer`: the caller sees the thread is gone.
        if let Ok(mut calls) = self.shared.calls.lock() {
            calls.push(answer);
        }
        result
    }

    /// The runtime's thread is about to park: wake the tool's thread if calls wait.
    fn on_park(&self) {
        let waiting = self.shared.calls.lock().is_ok_and(|calls| !calls.is_empty());
        if waiting {
            self.shared.queued.notify_one();
        }
    }
}

/// Runs the sessions; returns the model calls made and each turn's time in ms.
async fn run_agent(
    agent: Arc<Agent>,
    sessions: usize,
    concurrency: usize,
    steps: u64,
    turns: u32,
) -> Result<(usize, Vec<f64>), String> {
    let times = Arc::new(std::sync::Mutex::new(Vec::with_capacity(sessions * turns as usize)));
    let kept = times.clone();
    let calls = run_workers(
        concurrency,
        sessions,
        async || Ok(agent.clone()),
        move |agent: Arc<Agent>| {
            let times = kept.clone();
            async move {
                let (calls, turn_times) = agent_session(&agent, steps, turns).await?;
                if let Ok(mut times) = times.lock() {
                    times.extend(turn_times);
                }
                Ok((agent, calls))
            }
        },
    )
    .await?;
    let times = times.lock().map(|t| t.clone()).unwrap_or_default();
    Ok((calls, times))
}

/// The figures of `calls` model calls made since `t0`, when the CPU time was `cpu0`.
fn figures(calls: usize, t0: Instant, cpu0: std::time::Duration) -> ClientFigures {
    ClientFigures {
        calls,
        wall_s: t0.elapsed().as_secs_f64(),
        cpu_s: cpu_time().saturating_sub(cpu0).as_secs_f64(),
        peak_rss_kib: peak_rss_kib("self").unwrap_or(0),
        turn_p50_ms: None,
        turn_p99_ms: None,
    }
}

async fn run(o: Opts, tool_thread: Option<ToolThread>) -> Result<ClientFigures, String> {
    let dir = std::env::temp_dir().join(format!("agent-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let result = async {
        let (cpu0, t0);
        let calls = if o.variant == "reference" {
            run_reference(&o.url, 1, 1).await?; // warm-up
            (cpu0, t0) = (cpu_time(), Instant::now());
            run_reference(&o.url, o.sessions, o.concurrency).await?
        } else {
            let agent = Arc::new(build_agent(&o, &dir, tool_thread.as_ref()).await?);
            agent_session(&agent, o.steps, 1).await?; // warm-up
            (cpu0, t0) = (cpu_time(), Instant::now());
            // A clone keeps the agent, and so its store's threads, alive until the CPU time
            // is read: the time of a thread that has exited is no longer counted.
            let (calls, mut times) = run_agent(agent.clone(), o.sessions, o.concurrency, o.steps, o.turns).await?;
            let mut figures = figures(calls, t0, cpu0);
            figures.turn_p50_ms = agent_bench::quantile(&mut times, 0.5);
            figures.turn_p99_ms = agent_bench::quantile(&mut times, 0.99);
            drop(agent);
            return Ok(figures);
        };
        Ok::<_, String>(figures(calls, t0, cpu0))
    }
    .await;
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn main() {
    let result = parse().and_then(|o| {
        let mut runtime = tokio::runtime::Builder::new_current_thread();
        runtime.enable_all();
        // Only the variant that hands work to a thread has one, and the hook: a second thread
        // alone makes glibc's allocator take its multi-thread paths (about 1% more
        // instructions per model call here).
        let tool_thread = match o.variant.as_str() {
            "rust-handoff" => {
                let thread = ToolThread::start().map_err(|e| format!("cannot start the tool's thread: {e}"))?;
                let parking = thread.clone();
                runtime.on_thread_park(move || parking.on_park());
                Some(thread)
            }
            _ => None,
        };
        runtime
            .build()
            .map_err(|e| e.to_string())?
            .block_on(run(o, tool_thread))
    });
    match result {
        Ok(figures) => println!("{}", serde_json::to_string(&figures).unwrap_or_default()),
        Err(e) => {
            eprintln!("compare-client: {e}");
            std::process::exit(1);
        }
    }
}
