//! What MCP costs per tool call: the server's dispatch alone, a call through McpClient to a
//! ToolServer over loopback streamable HTTP, and a call to server-everything over stdio.
//!
//! `cargo bench -p agent-mcp --bench mcp_roundtrip` (the stdio case needs the peers:
//! `source scripts/lib/ensure-mcp-peers.sh && ensure_mcp_peers` first).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;

use agent_core::{SessionId, Tool, ToolContext, ToolError, ToolSet, tool_fn};
use agent_mcp::{McpClient, McpServerConfig, ToolServer};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// Text to echo.
    message: String,
}

fn echo_server() -> ToolServer {
    let mut tools = ToolSet::new();
    tools
        .register(tool_fn("echo", "Echoes.", |a: EchoArgs, _cx: ToolContext| async move {
            Ok::<_, ToolError>(a.message)
        }))
        .unwrap();
    ToolServer::builder(tools).build()
}

fn find(client: &McpClient, name: &str) -> Arc<dyn Tool> {
    client.tools().into_iter().find(|t| t.spec().name == name).unwrap()
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = echo_server();
    let args = json!({"message": "hello"});

    c.bench_function("dispatch/in_process", |b| {
        b.to_async(&rt).iter(|| async {
            server
                .call(
                    "echo",
                    args.clone(),
                    SessionId::new_random(),
                    "c".into(),
                    Default::default(),
                )
                .await
                .unwrap()
        })
    });

    let (http, client) = rt.block_on(async {
        let http = server.serve_http("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let client = McpClient::connect(McpServerConfig::http("local", http.url()))
            .await
            .unwrap();
        (http, client)
    });
    let echo = find(&client, "local__echo");
    c.bench_function("client_to_server/http_loopback", |b| {
        b.to_async(&rt).iter(|| async {
            echo.call(args.clone(), ToolContext::detached(SessionId::new_random(), "c"))
                .await
                .unwrap()
        })
    });
    rt.block_on(async {
        client.close().await;
        http.shutdown().await.unwrap();
    });

    let entry = std::env::var("AGENT_MCP_EVERYTHING")
        .expect("AGENT_MCP_EVERYTHING: source scripts/lib/ensure-mcp-peers.sh && ensure_mcp_peers");
    let everything = rt.block_on(async {
        McpClient::connect(McpServerConfig::stdio("everything", "node").args([entry.as_str(), "stdio"]))
            .await
            .unwrap()
    });
    let echo = find(&everything, "everything__echo");
    c.bench_function("client/stdio_server_everything", |b| {
        b.to_async(&rt).iter(|| async {
            echo.call(args.clone(), ToolContext::detached(SessionId::new_random(), "c"))
                .await
                .unwrap()
        })
    });
    rt.block_on(everything.close());
}

criterion_group!(benches, bench);
criterion_main!(benches);
