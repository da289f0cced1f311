//! A stdio server that dies mid-call: the call fails with a clear error for the model, the
//! next call starts the server again, and failed restarts back off.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::time::{Duration, Instant};

use agent_core::{SessionId, ToolContext, ToolError, ToolOutput};
use agent_mcp::{McpClient, McpError, McpServerConfig};
use common::{EverythingHttp, everything_entry};
use serde_json::json;

fn cx() -> ToolContext {
    ToolContext::detached(SessionId::new_random(), "call")
}

async fn call(client: &McpClient, name: &str, args: serde_json::Value) -> Result<ToolOutput, ToolError> {
    let tool = client.tools().into_iter().find(|t| t.spec().name == name).expect(name);
    tool.call(args, cx()).await
}

fn retryable_error(result: Result<ToolOutput, ToolError>) -> String {
    match result {
        Err(ToolError::ForModel { message, retryable }) => {
            assert!(retryable, "a lost server is worth retrying: {message}");
            message
        }
        other => panic!("expected an error for the model, got {other:?}"),
    }
}

/// Kills the server's whole process group, as a crash would.
fn kill_group(pid: u32) {
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("kill -9 -{pid}"))
        .status()
        .unwrap();
    assert!(status.success(), "kill -9 -{pid} failed");
}

/// Starts server-everything over stdio only while `flag` exists; otherwise prints to stderr
/// and exits 1, as a broken install would.
fn flaky_config(flag: &std::path::Path) -> McpServerConfig {
    let script = format!(
        "if [ -f '{}' ]; then exec node '{}' stdio; fi; echo 'server refused to start: flag missing' >&2; exit 1",
        flag.display(),
        everything_entry().display()
    );
    McpServerConfig::stdio("flaky", "sh")
        .args(["-c", script.as_str()])
        .backoff(Duration::from_millis(300), Duration::from_secs(2))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_mid_call_then_restarted_on_the_next_call() {
    let client = McpClient::connect(
        McpServerConfig::stdio("everything", "node").args([everything_entry().to_string_lossy().as_ref(), "stdio"]),
    )
    .await
    .unwrap();
    let first_pid = client.server_pid().await.expect("a pid");
    let long = client
        .tools()
        .into_iter()
        .find(|t| t.spec().name == "everything__trigger-long-running-operation")
        .unwrap();
    let started = Instant::now();
    let call_task = tokio::spawn(async move { long.call(json!({"duration": 20, "steps": 20}), cx()).await });
    tokio::time::sleep(Duration::from_millis(700)).await;
    kill_group(first_pid);
    let message = retryable_error(
        tokio::time::timeout(Duration::from_secs(10), call_task)
            .await
            .unwrap()
            .unwrap(),
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(message.contains("\"everything\""), "{message}");
    assert!(message.contains("restarted"), "{message}");
    assert!(!client.is_connected().await);

    let out = call(&client, "everything__echo", json!({"message": "back"}))
        .await
        .unwrap();
    assert_eq!(out.text_content(), "Echo: back");
    let second_pid = client.server_pid().await.expect("a new pid");
    assert_ne!(first_pid, second_pid);
    assert!(client.tool_names().contains(&"everything__echo".to_owned()));
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_restarts_back_off_and_recover() {
    let dir = tempfile::tempdir().unwrap();
    let flag = dir.path().join("up");
    std::fs::write(&flag, "").unwrap();
    let client = McpClient::connect(flaky_config(&flag)).await.unwrap();
    assert_eq!(
        call(&client, "flaky__echo", json!({"message": "1"}))
            .await
            .unwrap()
            .text_content(),
        "Echo: 1"
    );

    // The server dies between calls and cannot come back for now.
    std::fs::remove_file(&flag).unwrap();
    kill_group(client.server_pid().await.unwrap());
    tokio::time::sleep(Duration::from_millis(200)).await;

    // First restart attempt: immediate, and it fails with the server's own words.
    let started = Instant::now();
    let message = retryable_error(call(&client, "flaky__echo", json!({"message": "2"})).await);
    assert!(message.contains("flag missing"), "{message}");
    assert!(message.contains("300 ms"), "{message}");
    // Second attempt waits the backoff first, then fails again (the wait doubles).
    let before = Instant::now();
    let message = retryable_error(call(&client, "flaky__echo", json!({"message": "3"})).await);
    assert!(
        before.elapsed() >= Duration::from_millis(280),
        "waited {:?}",
        before.elapsed()
    );
    assert!(message.contains("600 ms"), "{message}");

    // The server can start again: the next call waits out the backoff and succeeds.
    std::fs::write(&flag, "").unwrap();
    let before = Instant::now();
    let out = call(&client, "flaky__echo", json!({"message": "4"})).await.unwrap();
    assert_eq!(out.text_content(), "Echo: 4");
    assert!(
        before.elapsed() >= Duration::from_millis(550),
        "waited {:?}",
        before.elapsed()
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    // Success resets the backoff: a crash now restarts at once.
    kill_group(client.server_pid().await.unwrap());
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = Instant::now();
    assert_eq!(
        call(&client, "flaky__echo", json!({"message": "5"}))
            .await
            .unwrap()
            .text_content(),
        "Echo: 5"
    );
    assert!(before.elapsed() < Duration::from_secs(5));
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_is_a_clear_error() {
    let err =
        McpClient::connect(McpServerConfig::stdio("broken", "sh").args(["-c", "echo 'no such module' >&2; exit 3"]))
            .await
            .unwrap_err();
    match &err {
        McpError::Handshake { alias, message } => {
            assert_eq!(alias, "broken");
            assert!(message.contains("no such module"), "{message}");
        }
        other => panic!("expected a handshake error, got {other:?}"),
    }
    let err = McpClient::connect(McpServerConfig::stdio("missing", "/nonexistent/mcp-server"))
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Spawn { .. }), "{err:?}");
    let port = common::free_port();
    let err = McpClient::connect(
        McpServerConfig::http("down", format!("http://127.0.0.1:{port}/mcp")).connect_timeout(Duration::from_secs(5)),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, McpError::Handshake { .. }), "{err:?}");
    let err = McpClient::connect(McpServerConfig::stdio("bad alias", "true"))
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Config(_)), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_http_server_is_reconnected() {
    let port = common::free_port();
    let mut server = EverythingHttp::start_on(port).await;
    let client = McpClient::connect(
        McpServerConfig::http("web", &server.url).backoff(Duration::from_millis(200), Duration::from_secs(1)),
    )
    .await
    .unwrap();
    assert_eq!(
        call(&client, "web__echo", json!({"message": "1"}))
            .await
            .unwrap()
            .text_content(),
        "Echo: 1"
    );

    server.child.kill().await.unwrap();
    let message = retryable_error(call(&client, "web__echo", json!({"message": "2"})).await);
    assert!(message.contains("\"web\""), "{message}");

    let _server = EverythingHttp::start_on(port).await;
    // The next calls reconnect (a new MCP session) once the server answers again.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match call(&client, "web__echo", json!({"message": "3"})).await {
            Ok(out) => {
                assert_eq!(out.text_content(), "Echo: 3");
                break;
            }
            Err(e) => assert!(Instant::now() < deadline, "never reconnected: {e}"),
        }
    }
    client.close().await;
}
