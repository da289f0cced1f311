//! Loop overhead per iteration: the scripted provider asks for a no-op tool 10 times, then
//! answers. One turn = 11 model calls + 10 tool calls; divide the time per turn by 11.
//!
//! `no_store_with_hooks` adds one [`Hooks`] object whose five points do nothing: the price of
//! hooks when a host sets some (an agent without hooks skips every hook point).
//!
//! Run: `cargo bench -p agent-core --bench loop_overhead`
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use agent_core::{Agent, Hooks, MemoryStore, ScriptedProvider, Store, ToolContext, ToolError, tool_fn};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use schemars::JsonSchema;
use serde::Deserialize;

const TOOL_STEPS: usize = 10;

#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

/// Calls the no-op tool until 10 results follow the last user message, then answers.
fn scripted() -> ScriptedProvider {
    ScriptedProvider::repeat_tool_then_answer("noop", serde_json::json!({}), TOOL_STEPS, "done")
}

/// Hooks at every point that change nothing.
struct NoopHooks;

impl Hooks for NoopHooks {}

fn agent(runtime: &tokio::runtime::Runtime, store: Option<Arc<dyn Store>>, hooks: bool) -> Agent {
    // A result of its own for each call: the script repeats one call, and the same answer
    // each time would (rightly) trip the loop guard, which stays on here so that its cost
    // is part of the figure.
    let count = Arc::new(AtomicU64::new(0));
    let noop = tool_fn("noop", "Does nothing.", move |_a: NoArgs, _cx: ToolContext| {
        let n = count.fetch_add(1, Ordering::Relaxed);
        async move { Ok::<_, ToolError>(format!("ok {n}")) }
    });
    let mut builder = Agent::builder()
        .provider(scripted())
        .tool(noop)
        .runtime(runtime.handle().clone());
    if let Some(store) = store {
        builder = builder.store_arc(store);
    }
    if hooks {
        builder = builder.hooks(NoopHooks);
    }
    builder.build().unwrap()
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("loop_turn_10_tools");
    // Elements = model calls, so criterion reports time per iteration.
    group.throughput(Throughput::Elements(TOOL_STEPS as u64 + 1));
    for (name, store, hooks) in [
        ("no_store", None, false),
        ("no_store_with_hooks", None, true),
        (
            "memory_store",
            Some(Arc::new(MemoryStore::new()) as Arc<dyn Store>),
            false,
        ),
    ] {
        let agent = agent(&runtime, store, hooks);
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter(|| async {
                let session = agent.create_session().await.unwrap();
                let outcome = session.send("go").await;
                assert_eq!(outcome.iterations as usize, TOOL_STEPS + 1);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
