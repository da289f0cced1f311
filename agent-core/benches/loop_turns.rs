//! The loop benchmark's workload for a fixed number of turns, without criterion's timing: the
//! scripted provider asks for a no-op tool 10 times, then answers (11 model calls a turn).
//! Made for instruction counts, which a shared machine's load does not disturb, and for
//! whole-process timings:
//!
//! ```text
//! cargo bench -p agent-core --bench loop_turns --no-run     # prints the executable's path
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null EXE --turns 1000
//! EXE --turns 10000 [--store memory]                        # prints µs per model call
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use agent_core::{Agent, MemoryStore, ScriptedProvider, ToolContext, ToolError, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;

const TOOL_STEPS: usize = 10;

#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

fn main() {
    let mut turns = 1000usize;
    let mut memory_store = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--turns" => turns = args.next().and_then(|v| v.parse().ok()).expect("--turns N"),
            "--store" => memory_store = args.next().as_deref() == Some("memory"),
            _ => {} // `cargo bench` passes --bench
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // A result of its own for each call (the loop guard, where there is one, stays quiet).
    let count = Arc::new(AtomicU64::new(0));
    let noop = tool_fn("noop", "Does nothing.", move |_a: NoArgs, _cx: ToolContext| {
        let n = count.fetch_add(1, Ordering::Relaxed);
        async move { Ok::<_, ToolError>(format!("ok {n}")) }
    });
    let provider = ScriptedProvider::repeat_tool_then_answer("noop", serde_json::json!({}), TOOL_STEPS, "done");
    let mut builder = Agent::builder()
        .provider(provider)
        .tool(noop)
        .runtime(runtime.handle().clone());
    if memory_store {
        builder = builder.store(MemoryStore::new());
    }
    let agent = builder.build().unwrap();
    let started = Instant::now();
    runtime.block_on(async {
        for _ in 0..turns {
            let session = agent.create_session().await.unwrap();
            let outcome = session.send("go").await;
            assert_eq!(outcome.iterations as usize, TOOL_STEPS + 1);
        }
    });
    let per_call = started.elapsed().as_secs_f64() * 1e6 / (turns * (TOOL_STEPS + 1)) as f64;
    println!("{turns} turns, {per_call:.3} µs per model call");
}
