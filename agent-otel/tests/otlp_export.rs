//! `install` exports over OTLP/HTTP: a turn's spans arrive as one protobuf POST at
//! `/v1/traces` of a loopback server once the guard is shut down. Its own test binary: the
//! global subscriber it installs stays for the rest of the process.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::mpsc;
use std::time::Duration;

use agent_core::{Agent, AgentConfig, OutcomeStatus, ScriptedProvider, ScriptedReply};
use agent_otel::{OtelError, OtlpConfig};
use axum::body::Bytes;
use axum::http::{HeaderMap, Uri};

/// One request the collector received: its path, content type and body.
type Received = (String, String, Vec<u8>);

/// A collector on 127.0.0.1, on a thread and runtime of its own (shutting the guard down
/// blocks the caller until the POST is answered). Returns its base URL.
fn collector(received: mpsc::Sender<Received>) -> String {
    let (url_tx, url_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            url_tx
                .send(format!("http://{}", listener.local_addr().unwrap()))
                .unwrap();
            let app = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap, body: Bytes| {
                let received = received.clone();
                async move {
                    let content_type = headers
                        .get("content-type")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_owned();
                    let _ = received.send((uri.path().to_owned(), content_type, body.to_vec()));
                    ([("content-type", "application/x-protobuf")], Vec::<u8>::new())
                }
            });
            axum::serve(listener, app).await.unwrap();
        });
    });
    url_rx.recv_timeout(Duration::from_secs(10)).unwrap()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn install_posts_the_turns_spans_to_the_endpoint_and_only_once_per_process() {
    let (tx, rx) = mpsc::channel();
    let url = collector(tx);
    let guard = agent_otel::install(OtlpConfig::new(url.clone()).service_name("otel-test")).unwrap();

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let outcome = runtime.block_on(async {
        let agent = Agent::builder()
            .provider(ScriptedProvider::new([ScriptedReply::text("hello").into()]))
            .config(AgentConfig {
                agent_name: Some("greeter".into()),
                ..AgentConfig::default()
            })
            .build()
            .unwrap();
        agent.create_session().await.unwrap().send("hi").await
    });
    assert_eq!(outcome.status, OutcomeStatus::Done);
    guard.shutdown().unwrap();

    let (path, content_type, body) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(path, "/v1/traces");
    assert_eq!(content_type, "application/x-protobuf");
    for expected in [
        "invoke_agent greeter",
        "chat scripted",
        "otel-test",
        "gen_ai.operation.name",
    ] {
        assert!(contains(&body, expected), "{expected:?} is in the exported body");
    }

    // The subscriber stays installed: a second install says so instead of replacing it.
    let again = agent_otel::install(OtlpConfig::new(url));
    assert!(matches!(again, Err(OtelError::AlreadyInstalled)), "{again:?}");
}

#[test]
fn the_traces_path_is_added_to_a_base_url_once() {
    for (endpoint, url) in [
        ("http://127.0.0.1:4318", "http://127.0.0.1:4318/v1/traces"),
        ("http://127.0.0.1:4318/", "http://127.0.0.1:4318/v1/traces"),
        ("http://127.0.0.1:4318/v1/traces", "http://127.0.0.1:4318/v1/traces"),
    ] {
        assert_eq!(OtlpConfig::new(endpoint).traces_url(), url);
    }
}
