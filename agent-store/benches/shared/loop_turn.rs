//! The turn of agent-core's `loop_overhead` bench, shared by the `store` bench and the
//! `loop_store_overhead` example so that both measure the same thing: 11 scripted model calls
//! and 10 calls of a no-op tool.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use agent_core::{Agent, AgentError, ScriptedProvider, Store, ToolContext, ToolError, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;

/// Tool calls per turn; a turn is one model call more.
pub const TOOL_STEPS: usize = 10;

#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

/// An agent running that turn on `runtime`, writing through to `store` if there is one.
pub fn loop_agent(runtime: &tokio::runtime::Runtime, store: Option<Arc<dyn Store>>) -> Result<Agent, AgentError> {
    // A result of its own for each call: the script repeats one call, and the same answer
    // each time would (rightly) trip the loop guard.
    let count = Arc::new(AtomicU64::new(0));
    let noop = tool_fn("noop", "Does nothing.", move |_: NoArgs, _: ToolContext| {
        let n = count.fetch_add(1, Ordering::Relaxed);
        async move { Ok::<_, ToolError>(format!("ok {n}")) }
    });
    let mut builder = Agent::builder()
        .provider(ScriptedProvider::repeat_tool_then_answer(
            "noop",
            serde_json::json!({}),
            TOOL_STEPS,
            "done",
        ))
        .tool(noop)
        .runtime(runtime.handle().clone());
    if let Some(store) = store {
        builder = builder.store_arc(store);
    }
    let _context = runtime.enter();
    builder.build()
}
