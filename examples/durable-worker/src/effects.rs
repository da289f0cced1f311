//! The test tool `record_effect`: inserts a row keyed by (session, call id) into
//! `durable_effects`, counting repeats, so a test can check each call's side effect happened once.

use std::sync::Arc;
use std::time::Duration;

use agent_core::{ToolContext, ToolError, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_postgres::Client;

/// Creates the table the tool writes (under a lock: replicas start at once, and two concurrent
/// `CREATE TABLE IF NOT EXISTS` can collide).
pub async fn create_table(client: &Client) -> Result<(), tokio_postgres::Error> {
    client
        .batch_execute(
            "BEGIN;
             SELECT pg_advisory_xact_lock(7461);
             CREATE TABLE IF NOT EXISTS durable_effects (
                 session_id text NOT NULL,
                 call_id text NOT NULL,
                 note text NOT NULL,
                 runs integer NOT NULL DEFAULT 1,
                 PRIMARY KEY (session_id, call_id)
             );
             COMMIT;",
        )
        .await
}

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// Anything to record.
    #[serde(default)]
    note: String,
}

/// The tool, over a shared connection; it waits `delay` first (cut short by a cancel, which then
/// records nothing), so that a test can stop a turn in the middle of a tool call.
pub fn record_effect(client: Arc<Client>, delay: Duration) -> impl agent_core::Tool {
    tool_fn(
        "record_effect",
        "Records a note as a side effect (one row per call).",
        move |args: Args, cx: ToolContext| {
            let client = client.clone();
            async move {
                if !delay.is_zero() {
                    tokio::select! {
                        _ = tokio::time::sleep(delay) => {}
                        _ = cx.cancel.cancelled() => {
                            return Ok::<_, ToolError>("cancelled before recording".to_owned());
                        }
                    }
                }
                let runs: i32 = client
                    .query_one(
                        "INSERT INTO durable_effects (session_id, call_id, note) VALUES ($1, $2, $3)
                         ON CONFLICT (session_id, call_id) DO UPDATE SET runs = durable_effects.runs + 1
                         RETURNING runs",
                        &[&cx.session_id.as_str(), &cx.call_id, &args.note],
                    )
                    .await
                    .map_err(|e| ToolError::model(format!("could not record: {e}")))?
                    .get(0);
                Ok::<_, ToolError>(format!("recorded {} (run {runs})", cx.call_id))
            }
        },
    )
}
