//! Latencies a person feels, with p50/p99 over many turns (scripted provider, no network):
//!
//! - time from `send` to the run's first event, and to the first answer token;
//! - cancel latency, from `Run::cancel` to the outcome, while the model streams, while a tool
//!   runs, and while the gate is deciding.
//!
//! ```text
//! cargo run --release -p agent-bench --bin latency -- [--turns 500] [--threads 2] [--store memory|sqlite|none]
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_core::{
    Agent, AgentEvent, EventKind, GateDecision, GateRequest, MemoryStore, OutcomeStatus, Run, ScriptStep,
    ScriptedProvider, ScriptedReply, ToolContext, ToolError, gate_fn, tool_fn,
};
use futures::StreamExt;
use tokio::sync::Notify;

struct Opts {
    turns: usize,
    threads: usize,
    store: String,
}

fn parse() -> Result<Opts, String> {
    let mut o = Opts {
        turns: 500,
        threads: 2,
        store: "none".into(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--turns" => o.turns = value()?.parse().map_err(|e| format!("--turns: {e}"))?,
            "--threads" => o.threads = value()?.parse().map_err(|e| format!("--threads: {e}"))?,
            "--store" => o.store = value()?,
            "--bench" => {}
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(o)
}

/// p50, p99 and the largest of `samples`, in microseconds.
fn summary(what: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize].as_secs_f64() * 1e6;
    println!(
        "{what:<46} p50 {:>8.1} µs   p99 {:>8.1} µs   max {:>8.1} µs   ({} turns)",
        at(0.5),
        at(0.99),
        at(1.0),
        samples.len()
    );
}

/// Waits for the first event of the run that `matches`.
async fn wait_for(run: &Run, matches: impl Fn(&AgentEvent) -> bool) -> Result<(), String> {
    let mut events = run.events();
    while let Some(event) = events.next().await {
        if matches(&event) {
            return Ok(());
        }
    }
    Err("the run ended before the awaited event".into())
}

/// Cancels `run` and measures until its outcome.
async fn cancel_latency(run: &Run) -> Result<Duration, String> {
    let t0 = Instant::now();
    run.cancel();
    let outcome = run.outcome().await;
    let elapsed = t0.elapsed();
    if outcome.status != OutcomeStatus::Cancelled {
        return Err(format!("expected cancelled, got {}", outcome.status.as_str()));
    }
    Ok(elapsed)
}

async fn with_store(builder: agent_core::AgentBuilder, o: &Opts, dir: &std::path::Path) -> Result<Agent, String> {
    let builder = match o.store.as_str() {
        "none" => builder,
        "memory" => builder.store(MemoryStore::new()),
        "sqlite" => builder.store(
            agent_store::SqliteStore::open(dir.join("latency.db"))
                .await
                .map_err(|e| e.to_string())?,
        ),
        other => return Err(format!("unknown store {other} (none, memory, sqlite)")),
    };
    builder.build().map_err(|e| e.to_string())
}

async fn run(o: Opts) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("agent-latency-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    println!(
        "{} turns per figure; store: {}; {} runtime thread(s)",
        o.turns, o.store, o.threads
    );

    // Send to first event, and to the first answer token.
    let provider = ScriptedProvider::from_fn(|_| ScriptedReply::text("Hello there.").into());
    let agent = with_store(Agent::builder().provider(provider), &o, &dir).await?;
    let (mut first_event, mut first_token) = (Vec::new(), Vec::new());
    for _ in 0..o.turns {
        let session = agent.create_session().await.map_err(|e| e.to_string())?;
        let t0 = Instant::now();
        let run = session.send("hi");
        let mut events = run.events();
        let mut first = None;
        while let Some(event) = events.next().await {
            first.get_or_insert_with(|| t0.elapsed());
            if matches!(event.kind, EventKind::ContentToken { .. }) {
                first_token.push(t0.elapsed());
                break;
            }
        }
        first_event.push(first.ok_or("no event")?);
        run.outcome().await;
    }
    summary("send -> first event (run_started)", first_event);
    summary("send -> first answer token", first_token);

    // Cancel while the model streams (a stream that never ends).
    let provider = ScriptedProvider::from_fn(|_| ScriptStep::Hang("Thinking about it".into()));
    let agent = with_store(Agent::builder().provider(provider), &o, &dir).await?;
    let mut samples = Vec::new();
    for _ in 0..o.turns {
        let session = agent.create_session().await.map_err(|e| e.to_string())?;
        let run = session.send("hi");
        wait_for(&run, |e| matches!(e.kind, EventKind::ContentToken { .. })).await?;
        samples.push(cancel_latency(&run).await?);
    }
    summary("cancel -> outcome, while the model streams", samples);

    // Cancel while a tool runs (a tool that would take an hour).
    let slow = tool_fn(
        "slow",
        "Takes an hour.",
        |_: serde_json::Value, _cx: ToolContext| async move {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok::<_, ToolError>("late")
        },
    );
    let provider = ScriptedProvider::from_fn(|_| ScriptedReply::tool_call("slow", serde_json::json!({})).into());
    let agent = with_store(Agent::builder().provider(provider).tool(slow), &o, &dir).await?;
    let mut samples = Vec::new();
    for _ in 0..o.turns {
        let session = agent.create_session().await.map_err(|e| e.to_string())?;
        let run = session.send("go");
        wait_for(&run, |e| matches!(e.kind, EventKind::ToolCallStarted { .. })).await?;
        samples.push(cancel_latency(&run).await?);
    }
    summary("cancel -> outcome, while a tool runs", samples);

    // Cancel while the gate decides (a person who never answers).
    let asked = Arc::new(Notify::new());
    let gate = {
        let asked = asked.clone();
        gate_fn(move |_: &GateRequest| {
            let asked = asked.clone();
            async move {
                asked.notify_one();
                futures::future::pending::<GateDecision>().await
            }
        })
    };
    let risky = tool_fn(
        "risky",
        "Needs consent.",
        |_: serde_json::Value, _cx: ToolContext| async move { Ok::<_, ToolError>("done") },
    )
    .gated(true);
    let provider = ScriptedProvider::from_fn(|_| ScriptedReply::tool_call("risky", serde_json::json!({})).into());
    let agent = with_store(Agent::builder().provider(provider).tool(risky).gate(gate), &o, &dir).await?;
    let mut samples = Vec::new();
    for _ in 0..o.turns {
        let session = agent.create_session().await.map_err(|e| e.to_string())?;
        let run = session.send("go");
        asked.notified().await;
        samples.push(cancel_latency(&run).await?);
    }
    summary("cancel -> outcome, while the gate decides", samples);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn main() {
    let result = parse().and_then(|o| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(o.threads.max(1))
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?
            .block_on(run(o))
    });
    if let Err(e) = result {
        eprintln!("latency: {e}");
        std::process::exit(1);
    }
}
