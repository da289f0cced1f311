//! Who may use the MCP HTTP server: browser pages from other origins get 403, and with a
//! bearer token set, requests without it (or with a wrong one) get 401.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::time::Duration;

use agent_core::ToolSet;
use agent_mcp::{HttpServerHandle, McpClient, McpServerConfig, ToolServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

async fn serve(server: &ToolServer) -> HttpServerHandle {
    server.serve_http("127.0.0.1:0".parse().unwrap()).await.unwrap()
}

/// POSTs an MCP initialize with `headers` (the Host header names the server's own address
/// unless given) and returns the response's status code.
async fn status(http: &HttpServerHandle, headers: &[(&str, String)]) -> u16 {
    let addr = http.local_addr();
    let mut head = String::from("POST /mcp HTTP/1.1\r\n");
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    let request = format!(
        "{head}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{INITIALIZE}",
        INITIALIZE.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    // Only the status line: a 200 opens an event stream that stays open.
    let mut response = Vec::new();
    let mut chunk = [0u8; 256];
    while !response.windows(2).any(|w| w == b"\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut chunk))
            .await
            .expect("a response within 10 s")
            .unwrap();
        assert!(n > 0, "the server closed without a status line");
        response.extend_from_slice(&chunk[..n]);
    }
    let line = String::from_utf8_lossy(&response);
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn origin(value: &str) -> (&'static str, String) {
    ("Origin", value.to_owned())
}

fn bearer(token: &str) -> (&'static str, String) {
    ("Authorization", format!("Bearer {token}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_origins_get_403_and_same_port_loopback_pages_pass() {
    let server = ToolServer::builder(ToolSet::new()).build();
    let http = serve(&server).await;
    let port = http.local_addr().port();
    assert_eq!(status(&http, &[]).await, 200, "no Origin: a non-browser client");
    assert_eq!(status(&http, &[origin("https://evil.example")]).await, 403);
    assert_eq!(
        status(&http, &[origin("http://localhost:1")]).await,
        403,
        "another local port"
    );
    assert_eq!(status(&http, &[origin("null")]).await, 403);
    for own in [format!("http://127.0.0.1:{port}"), format!("http://localhost:{port}")] {
        assert_eq!(status(&http, &[origin(&own)]).await, 200, "{own}");
    }
    http.shutdown().await.unwrap();

    let server = ToolServer::builder(ToolSet::new())
        .allowed_origins(["https://app.example"])
        .try_build()
        .unwrap();
    let http = serve(&server).await;
    assert_eq!(status(&http, &[origin("https://app.example")]).await, 200);
    assert_eq!(status(&http, &[origin("https://evil.example")]).await, 403);
    http.shutdown().await.unwrap();
    assert!(
        ToolServer::builder(ToolSet::new())
            .allowed_origins(["app.example"])
            .try_build()
            .is_err()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bearer_token_is_required_when_set() {
    let token = agent_mcp::new_bearer_token().unwrap();
    let server = ToolServer::builder(ToolSet::new())
        .bearer_token(&token)
        .try_build()
        .unwrap();
    let http = serve(&server).await;
    assert_eq!(status(&http, &[]).await, 401, "no token");
    assert_eq!(status(&http, &[bearer("wrong")]).await, 401);
    assert_eq!(status(&http, &[bearer(&token[..63])]).await, 401, "a prefix");
    assert_eq!(status(&http, &[("Authorization", format!("Basic {token}"))]).await, 401);
    assert_eq!(status(&http, &[bearer(&token)]).await, 200);
    let own = format!("http://127.0.0.1:{}", http.local_addr().port());
    assert_eq!(status(&http, &[bearer(&token), origin(&own)]).await, 200);
    assert_eq!(
        status(&http, &[bearer(&token), origin("https://evil.example")]).await,
        403
    );

    // This crate's client, with and without the header.
    let url = http.url();
    let with =
        McpClient::connect(McpServerConfig::http("tools", &url).header("Authorization", format!("Bearer {token}")))
            .await
            .unwrap();
    with.close().await;
    let err = McpClient::connect(McpServerConfig::http("tools", &url).connect_timeout(Duration::from_secs(5)))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("Auth required"), "{err}");
    http.shutdown().await.unwrap();
    assert!(
        ToolServer::builder(ToolSet::new())
            .bearer_token("")
            .try_build()
            .is_err()
    );
}
