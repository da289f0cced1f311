//! A scripted agent that writes through to a SQLite file forever, for the crash-repair test
//! (`tests/crash.rs` kills it with SIGKILL at random points).
//!
//! ```sh
//! cargo run -p agent-store --example crash_child -- /tmp/crash.db 0f8e3c5a-2b1d-4c7e-9a6f-1d2e3f4a5b6c
//! ```
//!
//! It opens (or creates) the session, which repairs a turn a previous kill interrupted, then
//! runs turns in a loop: each turn streams text slowly, calls a slow tool several times (two
//! at once on the first step), and answers. After every append it waits for the store to
//! commit (the loop itself does not: the store writes behind) and prints
//! `committed <seq> <message JSON>` on stdout, so the test knows what was durably written.
//! With `--turns N` it runs N turns and exits (the resume test's "first process").

#![allow(clippy::print_stdout)]

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use agent_core::{
    Agent, Compaction, Message, ModelRequest, Role, ScriptStep, ScriptedProvider, ScriptedReply, SessionId,
    SessionInfo, Store, StoreError, StoredMessage, ToolCallRecord, ToolContext, ToolError, async_trait, tool_fn,
};
use agent_store::SqliteStore;
use schemars::JsonSchema;
use serde::Deserialize;

/// Delegates to SQLite and reports each committed append.
struct Reporting(SqliteStore);

fn report(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

#[async_trait]
impl Store for Reporting {
    async fn create_session(&self, info: &SessionInfo) -> Result<(), StoreError> {
        self.0.create_session(info).await
    }
    async fn session(&self, id: &SessionId) -> Result<Option<SessionInfo>, StoreError> {
        self.0.session(id).await
    }
    async fn list_sessions(&self) -> Result<Vec<SessionInfo>, StoreError> {
        self.0.list_sessions().await
    }
    async fn set_title(&self, id: &SessionId, title: &str) -> Result<(), StoreError> {
        self.0.set_title(id, title).await
    }
    async fn append_messages(
        &self,
        session: &SessionId,
        first_seq: u64,
        messages: &[Message],
    ) -> Result<(), StoreError> {
        self.0.append_messages(session, first_seq, messages).await?;
        // The loop does not wait for appends to commit; this test double does, to know.
        self.0.flush(session).await?;
        for (i, m) in messages.iter().enumerate() {
            let json = serde_json::to_string(m).unwrap_or_default();
            report(&format!("committed {} {json}", first_seq + i as u64));
        }
        Ok(())
    }
    async fn load_messages(&self, session: &SessionId, after_seq: u64) -> Result<Vec<StoredMessage>, StoreError> {
        self.0.load_messages(session, after_seq).await
    }
    async fn last_seq(&self, session: &SessionId) -> Result<u64, StoreError> {
        self.0.last_seq(session).await
    }
    async fn upsert_tool_call(&self, record: &ToolCallRecord) -> Result<(), StoreError> {
        self.0.upsert_tool_call(record).await
    }
    async fn flush(&self, session: &SessionId) -> Result<(), StoreError> {
        self.0.flush(session).await
    }

    async fn tool_calls(&self, session: &SessionId) -> Result<Vec<ToolCallRecord>, StoreError> {
        self.0.tool_calls(session).await
    }
    async fn add_compaction(&self, compaction: &Compaction) -> Result<(), StoreError> {
        self.0.add_compaction(compaction).await
    }
    async fn latest_compaction(&self, session: &SessionId) -> Result<Option<Compaction>, StoreError> {
        self.0.latest_compaction(session).await
    }
    async fn set_parked_run(&self, session: &SessionId, state: Option<&serde_json::Value>) -> Result<(), StoreError> {
        self.0.set_parked_run(session, state).await
    }
    async fn parked_run(&self, session: &SessionId) -> Result<Option<serde_json::Value>, StoreError> {
        self.0.parked_run(session).await
    }
    async fn kv_get(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.0.kv_get(key).await
    }
    async fn kv_set(&self, key: &str, value: &str) -> Result<(), StoreError> {
        self.0.kv_set(key, value).await
    }
    async fn kv_delete(&self, key: &str) -> Result<(), StoreError> {
        self.0.kv_delete(key).await
    }
}

#[derive(Deserialize, JsonSchema)]
struct SlowArgs {
    /// Milliseconds to work.
    ms: u64,
}

/// The script: a turn calls `slow` twice at once, then three more times, then answers.
fn step(request: &ModelRequest) -> ScriptStep {
    let turn_start = request.messages.iter().rposition(|m| m.role == Role::User).unwrap_or(0);
    let results = request.messages[turn_start..]
        .iter()
        .filter(|m| m.role == Role::Tool)
        .count();
    let reply = match results {
        0 => ScriptedReply::tool_call("slow", serde_json::json!({"ms": 15}))
            .with_call("slow", serde_json::json!({"ms": 25}))
            .with_text("Starting two pieces of work at once, then a few more."),
        n if n < 5 => ScriptedReply::tool_call("slow", serde_json::json!({"ms": 10 + 5 * n as u64}))
            .with_text(format!("Step {n} of the work is done; continuing.")),
        _ => ScriptedReply::text("All the work is done. Here is a long enough answer to stream over several events."),
    };
    ScriptStep::Delay(Duration::from_millis(8), Box::new(reply.into()))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(path), Some(id)) = (args.next(), args.next()) else {
        return Err("usage: crash_child <database> <session-uuid> [--turns N]".into());
    };
    // Without --turns it runs until killed.
    let turns: Option<u64> = match (args.next().as_deref(), args.next()) {
        (Some("--turns"), Some(n)) => Some(n.parse()?),
        _ => None,
    };
    let id = SessionId::parse(&id)?;
    let store = Arc::new(Reporting(SqliteStore::open(&path).await?));
    let slow = tool_fn(
        "slow",
        "Works for a while.",
        |args: SlowArgs, _cx: ToolContext| async move {
            tokio::time::sleep(Duration::from_millis(args.ms)).await;
            let items: Vec<u64> = (0..40).collect();
            Ok::<_, ToolError>(serde_json::json!({"worked_ms": args.ms, "items": items}))
        },
    );
    let agent = Agent::builder()
        .provider(ScriptedProvider::from_fn(step))
        .store_arc(store.clone())
        .tool(slow)
        .build()?;
    let session = if store.session(&id).await?.is_some() {
        agent.open_session(&id).await?
    } else {
        agent.create_session_with_id(id).await?
    };
    report("ready");
    for n in 0..turns.unwrap_or(u64::MAX) {
        let outcome = session.send(format!("Please do piece of work number {n}.")).await;
        report(&format!("turn {n} {:?}", outcome.status));
    }
    Ok(())
}
