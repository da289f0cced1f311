//! Ten thousand sessions in one process: opens `--sessions` sessions and runs one turn in each
//! (one tool step and the answer, scripted provider, so only the runtime is measured), at most
//! `--concurrency` at once, keeping every session open afterwards. Reports throughput, peak
//! RSS, and the memory an idle session holds beyond its messages: the RSS growth over the
//! baseline (the agent built and warmed up), divided by the sessions, minus the serialized
//! size of a session's history.
//!
//! ```text
//! cargo run --release -p agent-bench --bin many-sessions -- [--sessions 10000] [--concurrency 1000] [--store none|memory|sqlite]
//! ```

use std::sync::Arc;
use std::time::Instant;

use agent_bench::{cpu_time, peak_rss_kib, rss_kib};
use agent_core::{Agent, MemoryStore, OutcomeStatus, ScriptedProvider, ToolContext, ToolError, tool_fn};
use tokio::sync::Semaphore;

struct Opts {
    sessions: usize,
    concurrency: usize,
    store: String,
}

fn parse() -> Result<Opts, String> {
    let mut o = Opts {
        sessions: 10_000,
        concurrency: 1_000,
        store: "none".into(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--sessions" => o.sessions = value()?.parse().map_err(|e| format!("--sessions: {e}"))?,
            "--concurrency" => o.concurrency = value()?.parse().map_err(|e| format!("--concurrency: {e}"))?,
            "--store" => o.store = value()?,
            "--bench" => {}
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(o)
}

async fn run(o: Opts) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("agent-many-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let step = tool_fn(
        "step",
        "One step.",
        |_: serde_json::Value, _cx: ToolContext| async move { Ok::<_, ToolError>("ok") },
    );
    let builder = Agent::builder()
        .provider(ScriptedProvider::repeat_tool_then_answer(
            "step",
            serde_json::json!({}),
            1,
            "Done.",
        ))
        .tool(step)
        .system_prompt("You are a benchmark.");
    let builder = match o.store.as_str() {
        "none" => builder,
        "memory" => builder.store(MemoryStore::new()),
        "sqlite" => builder.store(
            agent_store::SqliteStore::open(dir.join("many.db"))
                .await
                .map_err(|e| e.to_string())?,
        ),
        other => return Err(format!("unknown store {other} (none, memory, sqlite)")),
    };
    let agent = Arc::new(builder.build().map_err(|e| e.to_string())?);
    // Warm-up: the first turn allocates what every later one reuses.
    for _ in 0..10 {
        let session = agent.create_session().await.map_err(|e| e.to_string())?;
        session.send("go").await;
    }
    let baseline = rss_kib().unwrap_or(0);
    let limit = Arc::new(Semaphore::new(o.concurrency.max(1)));
    let (cpu0, t0) = (cpu_time(), Instant::now());
    let tasks: Vec<_> = (0..o.sessions)
        .map(|_| {
            let (agent, limit) = (agent.clone(), limit.clone());
            tokio::spawn(async move {
                let _permit = limit.acquire_owned().await.map_err(|e| e.to_string())?;
                let session = agent.create_session().await.map_err(|e| e.to_string())?;
                let outcome = session.send("go").await;
                if outcome.status != OutcomeStatus::Done {
                    return Err(format!("a turn ended {}: {:?}", outcome.status.as_str(), outcome.error));
                }
                Ok::<_, String>((session, outcome.iterations as usize))
            })
        })
        .collect();
    let mut sessions = Vec::with_capacity(o.sessions);
    let mut calls = 0;
    for task in tasks {
        let (session, iterations) = task.await.map_err(|e| e.to_string())??;
        calls += iterations;
        sessions.push(session);
    }
    let (wall, cpu) = (t0.elapsed(), cpu_time().saturating_sub(cpu0));
    let held = rss_kib().unwrap_or(0);
    // The history each idle session holds, serialized: what "its messages" weigh.
    let sample = sessions.len().min(100);
    let mut history_bytes = 0usize;
    for session in &sessions[..sample] {
        let history = session.model_history().await;
        history_bytes += serde_json::to_vec(&history).map_err(|e| e.to_string())?.len();
    }
    let per_history = history_bytes as f64 / sample.max(1) as f64;
    let per_session = (held.saturating_sub(baseline) as f64 * 1024.0) / sessions.len().max(1) as f64;
    println!(
        "{} sessions, {} at once, store {}: {:.0} turns/s, {:.0} model calls/s, {:.3} CPU ms per turn",
        sessions.len(),
        o.concurrency,
        o.store,
        sessions.len() as f64 / wall.as_secs_f64(),
        calls as f64 / wall.as_secs_f64(),
        cpu.as_secs_f64() * 1000.0 / sessions.len().max(1) as f64
    );
    println!(
        "RSS: baseline {:.1} MiB, with every session idle {:.1} MiB, peak {:.1} MiB",
        baseline as f64 / 1024.0,
        held as f64 / 1024.0,
        peak_rss_kib("self").unwrap_or(0) as f64 / 1024.0
    );
    println!(
        "per idle session: {:.0} bytes held, of which its history (serialized) {:.0} bytes: {:.0} bytes beyond its messages",
        per_session,
        per_history,
        per_session - per_history
    );
    drop(sessions);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn main() {
    let result = parse().and_then(|o| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?
            .block_on(run(o))
    });
    if let Err(e) = result {
        eprintln!("many-sessions: {e}");
        std::process::exit(1);
    }
}
