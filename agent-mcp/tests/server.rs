//! The server side: a tool set served over MCP, driven by the official Python `mcp` SDK (an
//! independent client), by rmcp over an in-memory pipe, and by this crate's own client.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agent_core::{GateDecision, SessionId, ToolContext, ToolError, gate_fn};
use agent_mcp::{McpClient, McpError, McpServerConfig, ToolServer};
use common::{TINY_PNG, mcp_python, test_tools};
use serde_json::{Value, json};

fn temp_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("notes")).unwrap();
    std::fs::write(dir.path().join("notes/hello.txt"), "hello from the root\n").unwrap();
    std::fs::write(dir.path().join("readme.md"), "# root\n").unwrap();
    dir
}

/// A gate that denies writes to blocked.txt and counts what it was asked.
fn counting_gate(asked: Arc<AtomicUsize>) -> impl agent_core::Gate {
    gate_fn(move |req| {
        asked.fetch_add(1, Ordering::SeqCst);
        let blocked = (req.tool == "fs_write" && req.arguments["path"] == "blocked.txt") || req.tool == "shell_exec";
        async move {
            if blocked {
                GateDecision::deny("not for MCP clients")
            } else {
                GateDecision::Allow
            }
        }
    })
}

fn run_python(args: &[&str]) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/drive_server.py");
    let output = std::process::Command::new(mcp_python())
        .arg(script)
        .args(args)
        .output()
        .expect("run the python mcp client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "python client failed: {}\nstdout: {stdout}\nstderr: {stderr}",
        output.status
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("python printed no JSON report ({e}): {stdout}\nstderr: {stderr}"))
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn gated_server(root: &std::path::Path, asked: Arc<AtomicUsize>) -> ToolServer {
    ToolServer::builder(test_tools(root).set)
        .gate(counting_gate(asked))
        .name("agent-mcp-test")
        .build()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_drives_the_server_over_streamable_http() {
    let root = temp_root();
    let asked = Arc::new(AtomicUsize::new(0));
    let server = gated_server(root.path(), asked.clone());
    let http = server.serve_http("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let url = http.url();
    let report = tokio::task::spawn_blocking(move || run_python(&["http", &url]))
        .await
        .unwrap();
    check_report(&report, root.path(), &asked);
    http.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_drives_the_server_over_stdio_framing() {
    let root = temp_root();
    let asked = Arc::new(AtomicUsize::new(0));
    let server = gated_server(root.path(), asked.clone());
    // The SDK's stdio_client starts a relay process whose stdin/stdout reach this listener.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let serving = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let (read, write) = stream.into_split();
        server.serve_io(read, write).await
    });
    let python = mcp_python().to_string_lossy().into_owned();
    let relay = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/stdio_relay.py");
    let report = tokio::task::spawn_blocking(move || run_python(&["stdio", &python, relay, &port]))
        .await
        .unwrap();
    check_report(&report, root.path(), &asked);
    // The client hung up: the session ends cleanly.
    tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

fn check_report(report: &Value, root: &std::path::Path, asked: &AtomicUsize) {
    assert_eq!(report["server"]["name"], "agent-mcp-test");
    let tools = report["tools"].as_object().unwrap();
    for name in [
        "fs_list",
        "fs_read",
        "fs_write",
        "fs_delete",
        "shell_exec",
        "snapshot",
        "wait_for_cancel",
    ] {
        assert!(tools.contains_key(name), "{name} not listed: {tools:?}");
    }
    assert_eq!(tools["fs_read"]["schema"]["required"], json!(["path"]));
    assert_eq!(tools["snapshot"]["schema"]["type"], "object");

    let list = &report["fs_list"];
    assert_eq!(list["isError"], false, "{list}");
    assert!(text_of(list).contains("notes/"), "{list}");
    assert!(text_of(list).contains("readme.md"), "{list}");
    let read = &report["fs_read"];
    assert_eq!(read["isError"], false);
    // Served results keep their provenance: the client's model reads the file as data.
    let read = text_of(read);
    assert!(
        read.starts_with("[untrusted data from file notes/hello.txt: "),
        "{read}"
    );
    assert!(
        read.contains("\">\nhello from the root\n\n</untrusted-content nonce=\""),
        "{read}"
    );

    let missing = &report["fs_read_missing_arg"];
    assert_eq!(missing["isError"], true);
    assert!(
        text_of(missing).contains("missing required argument \"path\""),
        "{missing}"
    );
    let outside = &report["fs_read_outside"];
    assert_eq!(outside["isError"], true, "{outside}");
    assert!(!text_of(outside).contains("root:"), "{outside}");

    for key in ["fs_write_denied", "shell_denied"] {
        let denied = &report[key];
        assert_eq!(denied["isError"], true, "{key}: {denied}");
        assert!(text_of(denied).contains("denied"), "{key}: {denied}");
        assert!(text_of(denied).contains("not for MCP clients"), "{key}: {denied}");
    }
    assert!(!root.join("blocked.txt").exists(), "a denied call must not run");
    assert!(!root.join("pwned").exists(), "a denied call must not run");
    assert_eq!(
        report["fs_write_allowed"]["isError"], false,
        "{}",
        report["fs_write_allowed"]
    );
    assert_eq!(
        std::fs::read_to_string(root.join("allowed.txt")).unwrap(),
        "from python"
    );
    // Only gated tools asked the gate: three calls.
    assert_eq!(asked.load(Ordering::SeqCst), 3);

    let snapshot = &report["snapshot"]["content"];
    assert_eq!(snapshot[1]["type"], "image");
    assert_eq!(snapshot[1]["mimeType"], "image/png");
    assert_eq!(snapshot[1]["bytes"], TINY_PNG.len());
    let unknown = report["unknown_tool"].as_str().unwrap();
    assert!(unknown.contains("unknown tool"), "{unknown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_gate_gated_tools_are_denied() {
    let root = temp_root();
    let server = ToolServer::builder(test_tools(root.path()).set).build();
    let out = server
        .call(
            "fs_write",
            json!({"path": "x.txt", "content": "y"}),
            SessionId::new_random(),
            "c1".into(),
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(out.is_error, Some(true));
    assert!(format!("{:?}", out.content).contains("no consent gate"));
    assert!(!root.path().join("x.txt").exists());
    let err = server
        .call(
            "nope",
            json!({}),
            SessionId::new_random(),
            "c2".into(),
            Default::default(),
        )
        .await
        .unwrap_err();
    assert!(err.message.contains("unknown tool"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_client_over_an_in_memory_pipe() {
    use rmcp::ServiceExt;
    let root = temp_root();
    let server = ToolServer::builder(test_tools(root.path()).set).build();
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let (sr, sw) = tokio::io::split(server_io);
    let serving = tokio::spawn(async move { server.serve_io(sr, sw).await });
    let client = ().serve(client_io).await.unwrap();
    let tools = client.peer().list_all_tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    assert!(
        names.contains(&"fs_read".to_owned()) && names.contains(&"wait_for_cancel".to_owned()),
        "{names:?}"
    );
    let result = client
        .peer()
        .call_tool(
            rmcp::model::CallToolRequestParams::new("fs_read")
                .with_arguments(json!({"path": "readme.md"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    let text = &result.content[0].as_text().unwrap().text;
    assert!(text.starts_with("[untrusted data from file readme.md: "), "{text}");
    assert!(text.contains("\">\n# root\n\n</untrusted-content nonce=\""), "{text}");
    client.cancel().await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_client_call_cancels_the_served_tool() {
    let root = temp_root();
    let tools = test_tools(root.path());
    let cancelled = tools.cancelled.clone();
    let started = tools.started.clone();
    let server = ToolServer::builder(tools.set).gate(agent_core::AllowAll).build();
    let http = server.serve_http("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let client = McpClient::connect(McpServerConfig::http("local", http.url()))
        .await
        .unwrap();
    assert_eq!(
        client.tool_names(),
        [
            "local__fs_read",
            "local__fs_write",
            "local__fs_list",
            "local__fs_mkdir",
            "local__fs_delete",
            "local__shell_exec",
            "local__snapshot",
            "local__wait_for_cancel"
        ]
    );
    let wait = client
        .tools()
        .into_iter()
        .find(|t| t.spec().name == "local__wait_for_cancel")
        .unwrap();
    let info = client.server_info().await.unwrap();
    assert_eq!(info.name.as_deref(), Some("agent-core"));
    assert_eq!(info.version.as_deref(), Some(env!("CARGO_PKG_VERSION")));
    let cx = ToolContext::detached(SessionId::new_random(), "w1");
    let token = cx.cancel.clone();
    let call = tokio::spawn(async move { wait.call(json!({}), cx).await });
    tokio::time::timeout(Duration::from_secs(10), started.notified())
        .await
        .unwrap();
    token.cancel();
    let result = call.await.unwrap();
    assert!(matches!(result, Err(ToolError::ForModel { .. })), "{result:?}");
    // notifications/cancelled reached the server, whose tool saw its token fire.
    let deadline = Instant::now() + Duration::from_secs(5);
    while cancelled.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "the served tool was never cancelled");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Our own server round-trips images and JSON too.
    let snap = client
        .tools()
        .into_iter()
        .find(|t| t.spec().name == "local__snapshot")
        .unwrap();
    let out = snap
        .call(json!({}), ToolContext::detached(SessionId::new_random(), "s"))
        .await
        .unwrap();
    assert_eq!(out.content.len(), 2);
    let list = client
        .tools()
        .into_iter()
        .find(|t| t.spec().name == "local__fs_list")
        .unwrap();
    let out = list
        .call(
            json!({"path": "notes"}),
            ToolContext::detached(SessionId::new_random(), "l"),
        )
        .await
        .unwrap();
    assert!(out.text_content().contains("hello.txt"), "{}", out.text_content());
    client.close().await;
    http.shutdown().await.unwrap();
}

#[tokio::test]
async fn http_refuses_non_loopback_addresses_by_default() {
    let server = ToolServer::builder(agent_core::ToolSet::new()).build();
    let err = server.serve_http("0.0.0.0:0".parse().unwrap()).await.unwrap_err();
    assert!(matches!(err, McpError::Config(_)), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_checks_the_host_header() {
    // Requests naming another host are refused (DNS-rebinding protection) unless allowed.
    async fn status(server: &ToolServer, host: &str) -> u16 {
        let http = server.serve_http("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let addr = http.local_addr();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
        );
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        tokio::io::AsyncWriteExt::write_all(&mut stream, request.as_bytes())
            .await
            .unwrap();
        let mut response = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut stream, &mut response)
            .await
            .unwrap();
        http.shutdown().await.unwrap();
        let head = String::from_utf8_lossy(&response);
        head.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
    let strict = ToolServer::builder(agent_core::ToolSet::new()).build();
    assert_eq!(status(&strict, "evil.example").await, 403);
    assert_ne!(status(&strict, "localhost").await, 403);
    let open = ToolServer::builder(agent_core::ToolSet::new())
        .allowed_hosts(["tools.lan"])
        .build();
    assert_ne!(status(&open, "tools.lan").await, 403);
    assert_eq!(status(&open, "evil.example").await, 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gate_that_would_ask_the_person_refuses_the_call() {
    let root = temp_root();
    let server = ToolServer::builder(test_tools(root.path()).set)
        .gate(gate_fn(|_| async { GateDecision::ask("Write it?") }))
        .build();
    let out = server
        .call(
            "fs_write",
            json!({"path": "x.txt", "content": "y"}),
            SessionId::new_random(),
            "c1".into(),
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(out.is_error, Some(true));
    assert!(format!("{:?}", out.content).contains("needs the person's approval"));
    assert!(
        !root.path().join("x.txt").exists(),
        "a call the gate asks about never runs unasked"
    );
}
