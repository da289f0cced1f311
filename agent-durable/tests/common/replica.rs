//! A worker replica in its own runtime and thread, so a test can kill it: its runtime is shut
//! down, which drops its connections to Restate mid-invocation, like a process that died.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_core::{Agent, GateDecision, GateRequest, ToolContext, ToolError, gate_fn, tool_fn};
use agent_durable::{AgentSession, RunRegistry, spawn_cancel_listener};
use agent_store_postgres::{PostgresOptions, PostgresStore};
use restate_sdk::prelude::{Endpoint, HttpServer};
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Countdown, ModelLog, postgres};

/// Side effects of the `record` tool, by call id: how many times each ran to completion.
pub type Effects = Arc<Mutex<HashMap<String, u32>>>;

#[derive(Deserialize, JsonSchema)]
struct RecordArgs {
    /// A note to record.
    note: String,
}

pub struct Replica {
    kill: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Replica {
    /// Serves the object on 127.0.0.1:`port` over a store in `schema`.
    pub fn start(port: u16, schema: &str, log: Arc<ModelLog>, effects: Effects) -> Replica {
        let (kill, killed) = tokio::sync::oneshot::channel::<()>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let schema = schema.to_owned();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let options = PostgresOptions {
                    schema: Some(schema),
                    max_connections: 4,
                    ..PostgresOptions::default()
                };
                let store = PostgresStore::connect_with(&postgres(), options).await.unwrap();
                let record = tool_fn(
                    "record",
                    "Records a note.",
                    move |args: RecordArgs, _cx: ToolContext| {
                        let effects = effects.clone();
                        async move {
                            *effects.lock().unwrap().entry(args.note.clone()).or_default() += 1;
                            Ok::<_, ToolError>(format!("recorded {}", args.note))
                        }
                    },
                )
                // The gate below asks the person for calls of tag `gate`.
                .gated(true);
                let agent = Agent::builder()
                    .provider(Countdown { log })
                    .tool(record)
                    .tool(agent_durable::send_to_session_tool(super::ingress()))
                    .clarification(true)
                    // Calls of tag `gate` wait for the person's approval.
                    .gate(gate_fn(|request: &GateRequest| {
                        let ask = request.call_id.starts_with("gate-");
                        async move {
                            if ask {
                                GateDecision::Ask { prompt: None }
                            } else {
                                GateDecision::Allow
                            }
                        }
                    }))
                    .store(store)
                    .build()
                    .unwrap();
                let runs = RunRegistry::new();
                let listener = spawn_cancel_listener(&postgres(), runs.clone()).unwrap();
                let object = AgentSession::new(agent, runs).unwrap().with_cancel_notify(postgres());
                let socket = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.unwrap();
                ready_tx.send(()).unwrap();
                tokio::select! {
                    _ = HttpServer::new(Endpoint::builder().bind(object).build()).serve(socket) => {}
                    _ = killed => {}
                }
                listener.abort();
            });
            // Drops every task of the replica: its HTTP/2 connections close mid-invocation.
            runtime.shutdown_background();
        });
        ready_rx.recv().unwrap();
        Replica {
            kill: Some(kill),
            thread: Some(thread),
        }
    }

    /// Stops the replica at once, whatever it is doing.
    pub fn kill(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(kill) = self.kill.take() {
            let _ = kill.send(());
        }
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.stop();
    }
}
