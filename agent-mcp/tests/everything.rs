//! The client against the reference server `@modelcontextprotocol/server-everything` (npm),
//! over stdio and over streamable HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::time::{Duration, Instant};

use agent_core::{
    Agent, AllowAll, ContentPart, ImageSource, MemoryStore, OutcomeStatus, Role, ScriptedProvider, ScriptedReply,
    SessionId, Store, Tool, ToolContext, ToolError, ToolOutput,
};
use agent_mcp::{McpClient, McpServerConfig};
use common::{EverythingHttp, everything_entry};
use serde_json::json;

fn stdio_config() -> McpServerConfig {
    McpServerConfig::stdio("everything", "node")
        .arg(everything_entry().to_string_lossy())
        .arg("stdio")
}

fn tool(client: &McpClient, name: &str) -> std::sync::Arc<dyn Tool> {
    client
        .tools()
        .into_iter()
        .find(|t| t.spec().name == name)
        .unwrap_or_else(|| panic!("no tool {name} in {:?}", client.tool_names()))
}

fn cx() -> ToolContext {
    ToolContext::detached(SessionId::new_random(), "call-1")
}

async fn call(client: &McpClient, name: &str, args: serde_json::Value) -> Result<ToolOutput, ToolError> {
    tool(client, name).call(args, cx()).await
}

fn model_error(result: Result<ToolOutput, ToolError>) -> String {
    match result {
        Err(ToolError::ForModel { message, .. }) => message,
        other => panic!("expected an error for the model, got {other:?}"),
    }
}

/// What both transports must do: list, echo, add, image, structured JSON, an error, and a
/// long-running call that is cancelled without breaking the connection.
async fn exercise(client: &McpClient) {
    let names = client.tool_names();
    for expected in [
        "everything__echo",
        "everything__get-sum",
        "everything__get-tiny-image",
        "everything__get-structured-content",
        "everything__trigger-long-running-operation",
    ] {
        assert!(
            names.contains(&expected.to_owned()),
            "{expected} missing from {names:?}"
        );
    }
    for name in &names {
        assert!(
            name.len() <= 64
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            "{name} breaks providers' name rules"
        );
    }
    // Gated by default, even the tools the server calls read-only.
    assert!(client.tools().iter().all(|t| t.spec().gated));
    let echo = tool(client, "everything__echo");
    assert_eq!(echo.spec().parameters["properties"]["message"]["type"], "string");
    assert_eq!(client.remote_name("everything__get-sum").as_deref(), Some("get-sum"));

    let out = call(client, "everything__echo", json!({"message": "hello mcp"}))
        .await
        .unwrap();
    assert_eq!(out.text_content(), "Echo: hello mcp");

    let out = call(client, "everything__get-sum", json!({"a": 2, "b": 40}))
        .await
        .unwrap();
    assert!(out.text_content().contains("42"), "{}", out.text_content());

    let out = call(client, "everything__get-tiny-image", json!({})).await.unwrap();
    let image = out
        .content
        .iter()
        .find_map(|p| match p {
            ContentPart::Image {
                media_type,
                source: ImageSource::Base64 { data },
            } => Some((media_type, data)),
            _ => None,
        })
        .expect("an image part");
    assert_eq!(image.0, "image/png");
    assert!(
        image.1.starts_with("iVBORw0KGgo"),
        "base64 of a PNG: {}",
        &image.1[..20]
    );

    let out = call(
        client,
        "everything__get-structured-content",
        json!({"location": "New York"}),
    )
    .await
    .unwrap();
    let structured = out.structured.expect("structuredContent");
    assert!(structured.get("temperature").is_some(), "{structured}");

    // Calls in parallel over one connection each get their own answer.
    let sums =
        futures::future::join_all((0..8).map(|i| call(client, "everything__get-sum", json!({"a": i, "b": 1000}))))
            .await;
    for (i, sum) in sums.into_iter().enumerate() {
        let text = sum.unwrap().text_content();
        assert!(text.contains(&(i + 1000).to_string()), "{i}: {text}");
    }

    // An argument the server rejects comes back as an error the model reads.
    let message = model_error(call(client, "everything__get-sum", json!({"a": "two", "b": 1})).await);
    assert!(!message.is_empty());
    let message = model_error(
        call(
            client,
            "everything__get-resource-reference",
            json!({"resourceType": "nope", "resourceId": 1}),
        )
        .await,
    );
    assert!(
        message.to_lowercase().contains("resourcetype") || message.contains("nope"),
        "{message}"
    );

    // A 30 s operation, cancelled after half a second.
    let long = tool(client, "everything__trigger-long-running-operation");
    let context = cx();
    let token = context.cancel.clone();
    let started = Instant::now();
    let handle = tokio::spawn(async move { long.call(json!({"duration": 30, "steps": 30}), context).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    token.cancel();
    let message = model_error(handle.await.unwrap());
    assert!(message.contains("cancelled"), "{message}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "cancel took {:?}",
        started.elapsed()
    );
    // The connection is still good.
    let out = call(client, "everything__echo", json!({"message": "still here"}))
        .await
        .unwrap();
    assert_eq!(out.text_content(), "Echo: still here");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_stdio() {
    let client = McpClient::connect(stdio_config().env("MCP_TEST_VISIBLE", "1"))
        .await
        .unwrap();
    assert!(client.server_pid().await.is_some());
    let info = client.server_info().await.unwrap();
    assert_eq!(info.name.as_deref(), Some("mcp-servers/everything"));
    assert!(info.instructions.is_some_and(|i| !i.is_empty()));
    exercise(&client).await;
    // The server inherits only harmless variables, plus the ones configured for it.
    let env = call(&client, "everything__get-env", json!({}))
        .await
        .unwrap()
        .text_content();
    assert!(env.contains("\"PATH\""), "{env}");
    assert!(env.contains("\"MCP_TEST_VISIBLE\""), "{env}");
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    assert!(
        !env.contains("CARGO_MANIFEST_DIR"),
        "the host's other variables must not leak: {env}"
    );
    client.close().await;
    let message = model_error(call(&client, "everything__echo", json!({"message": "x"})).await);
    assert!(message.contains("closed"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_streamable_http() {
    let server = EverythingHttp::start().await;
    let client = McpClient::connect(McpServerConfig::http("everything", &server.url).header("X-Test", "1"))
        .await
        .unwrap();
    assert_eq!(client.server_pid().await, None);
    exercise(&client).await;
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_time_out_and_read_only_hints_are_trusted_only_on_request() {
    let client = McpClient::connect(
        stdio_config()
            .call_timeout(Duration::from_millis(700))
            .trust_read_only_hints(true),
    )
    .await
    .unwrap();
    let long = tool(&client, "everything__trigger-long-running-operation");
    // The server marks it readOnlyHint: true, and this host trusts hints.
    assert!(!long.spec().gated);
    assert_eq!(long.spec().timeout, Some(Duration::from_millis(700)));
    let started = Instant::now();
    let message = model_error(long.call(json!({"duration": 20, "steps": 4}), cx()).await);
    assert!(message.contains("timed out"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(5));
    // gzip-file-as-resource is marked readOnlyHint: false: still gated.
    assert!(tool(&client, "everything__gzip-file-as-resource").spec().gated);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_changed_updates_the_tools() {
    // server-everything registers get-roots-list after the handshake when the client offers
    // roots, and tells the client with notifications/tools/list_changed.
    let client = McpClient::connect(stdio_config().root("file:///srv/agent-root"))
        .await
        .unwrap();
    let mut changes = client.changes();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !client.tool_names().contains(&"everything__get-roots-list".to_owned()) {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(
            !left.is_zero(),
            "get-roots-list never appeared: {:?}",
            client.tool_names()
        );
        let _ = tokio::time::timeout(left, changes.changed()).await;
    }
    assert!(*changes.borrow() >= 1);
    let out = call(&client, "everything__get-roots-list", json!({})).await.unwrap();
    assert!(
        out.text_content().contains("file:///srv/agent-root"),
        "{}",
        out.text_content()
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_calls_everything_tools_through_its_loop() {
    let client = McpClient::connect(stdio_config()).await.unwrap();
    let provider = ScriptedProvider::new([
        ScriptedReply::tool_call("everything__get-sum", json!({"a": 19, "b": 23})).into(),
        ScriptedReply::text("The sum is 42.").into(),
    ]);
    let store = std::sync::Arc::new(MemoryStore::new());
    let mut builder = Agent::builder()
        .provider(provider)
        .gate(AllowAll)
        .store_arc(store.clone());
    for t in client.tools() {
        builder = builder.tool_arc(t);
    }
    let agent = builder.build().unwrap();
    let session = agent.create_session().await.unwrap();
    let outcome = session.send("add 19 and 23").await;
    assert_eq!(outcome.status, OutcomeStatus::Done, "{outcome:?}");
    assert_eq!(outcome.tool_calls, 1);
    let history = store.load_messages(session.id(), 0).await.unwrap();
    let result = history
        .iter()
        .find(|m| m.message.role == Role::Tool)
        .expect("a tool result");
    assert!(!result.message.is_error);
    let text: String = result.message.content.iter().filter_map(|p| p.as_text()).collect();
    assert!(text.contains("42"), "{text}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_synced_agent_sees_tools_the_server_adds_later() {
    let client = McpClient::connect(stdio_config().root("file:///srv/agent-root"))
        .await
        .unwrap();
    let agent = Agent::builder().provider(ScriptedProvider::new([])).build().unwrap();
    let sync = client.sync_agent_tools(&agent).unwrap();
    assert!(agent.tools().has("everything__echo"));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !agent.tools().has("everything__get-roots-list") {
        assert!(
            Instant::now() < deadline,
            "the agent never got get-roots-list: {:?}",
            agent.tools().names()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Each tool appears once: the server's tools were replaced, not appended again.
    let names = agent.tools().names();
    let echo = names.iter().filter(|n| n.as_str() == "everything__echo").count();
    assert_eq!(echo, 1, "{names:?}");
    sync.abort();
    client.close().await;
}
