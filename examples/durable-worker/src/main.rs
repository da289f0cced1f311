//! A worker replica for durable turns on Restate (see docs/durable.md).
//!
//! ```text
//! durable-worker --port PORT
//! ```
//!
//! Reads `AGENT_POSTGRES_URL` (the shared PostgreSQL), `WORKER_TOOL_DELAY_MS` (how long the tool
//! waits before it records, default 0) and the `LLM_*` variables for the model
//! (`scripts/cluster` points them at the workspace's mock model server, `mock-llm`). Serves the
//! `AgentSession` object on 127.0.0.1:PORT (HTTP/2, for Restate), with one tool,
//! `record_effect`, which inserts a row per call into `durable_effects`.

use std::sync::Arc;
use std::time::Duration;

use agent_core::Agent;
use agent_durable::{AgentSession, RunRegistry, spawn_cancel_listener};
use agent_store_postgres::PostgresStore;
use restate_sdk::prelude::{Endpoint, HttpServer};

mod effects;

fn main() {
    if let Err(e) = run() {
        eprintln!("durable-worker: {e}");
        std::process::exit(2);
    }
}

fn port() -> Result<u16, String> {
    let mut args = std::env::args().skip(1);
    let mut port = None;
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--port" => {
                let value = args.next().ok_or("--port needs a value")?;
                port = Some(value.parse::<u16>().map_err(|e| format!("--port: {e}"))?);
            }
            other => return Err(format!("unknown option {other}; usage: durable-worker --port PORT")),
        }
    }
    port.ok_or_else(|| "usage: durable-worker --port PORT".to_owned())
}

fn run() -> Result<(), String> {
    let port = port()?;
    let url = std::env::var("AGENT_POSTGRES_URL")
        .map_err(|_| "AGENT_POSTGRES_URL is not set (the PostgreSQL every replica shares)".to_owned())?;
    let delay = match std::env::var("WORKER_TOOL_DELAY_MS") {
        Ok(ms) => Duration::from_millis(ms.parse::<u64>().map_err(|e| format!("WORKER_TOOL_DELAY_MS: {e}"))?),
        Err(_) => Duration::ZERO,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let provider = agent_providers::from_env()
            .map_err(|e| format!("{e} (scripts/cluster sets LLM_* for its mock model server)"))?;
        let store = PostgresStore::connect(&url).await.map_err(|e| e.to_string())?;
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .map_err(|e| format!("PostgreSQL: {e}"))?;
        tokio::spawn(connection);
        effects::create_table(&client)
            .await
            .map_err(|e| format!("PostgreSQL: {e}"))?;
        let agent = Agent::builder()
            .provider_arc(provider)
            .tool(effects::record_effect(Arc::new(client), delay))
            .store(store)
            .build()
            .map_err(|e| e.to_string())?;
        let runs = RunRegistry::new();
        let _listener = spawn_cancel_listener(&url, runs.clone()).map_err(|e| e.to_string())?;
        let object = AgentSession::new(agent, runs)
            .map_err(|e| e.to_string())?
            .with_cancel_notify(url);
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|e| format!("cannot bind 127.0.0.1:{port}: {e}"))?;
        println!("durable-worker listening on 127.0.0.1:{port}");
        HttpServer::new(Endpoint::builder().bind(object).build())
            .serve(listener)
            .await;
        Ok(())
    })
}
