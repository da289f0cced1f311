//! Transport and routing under failure: retries with `Retry-After`, backoff on 5xx, no retry on
//! 401, stream idle timeout, cancellation, and fallback routing only before content.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_core::{CancellationToken, Message, ModelRequest, Provider, ProviderError, StreamEvent, collect_stream};
use agent_providers::{FallbackRouter, HttpConfig};
use common::{MockServer, Reply, Wire, adapter, adapter_with, fast_http};
use futures::StreamExt;

fn request() -> ModelRequest {
    ModelRequest {
        messages: vec![Message::user("hi")],
        ..ModelRequest::default()
    }
}

fn text_fixture(wire: Wire) -> &'static str {
    match wire {
        Wire::OpenAi => "openai/stream-text.sse",
        Wire::OpenAiResponses => "openai-responses/stream-text.sse",
        Wire::Anthropic => "anthropic/stream-text.sse",
        Wire::Gemini => "gemini/stream-text.sse",
    }
}

async fn call(provider: &dyn Provider) -> Result<agent_core::ModelResponse, ProviderError> {
    collect_stream(provider.stream(&request(), CancellationToken::new()).await?).await
}

#[tokio::test]
async fn rate_limit_with_retry_after_is_retried_then_succeeds() {
    for wire in common::ALL {
        let server = MockServer::start([
            Reply::json(429, "openai/error-429-rate-limit.json").header("retry-after", "1"),
            Reply::sse(text_fixture(wire)),
        ])
        .await;
        let provider = adapter(wire, &server.url());
        let started = Instant::now();
        let response = call(provider.as_ref()).await.unwrap();
        assert!(!response.message.text().is_empty());
        assert_eq!(server.requests().len(), 2, "{wire:?}");
        assert!(
            started.elapsed() >= Duration::from_millis(950),
            "{wire:?}: Retry-After honoured"
        );
    }
}

#[tokio::test]
async fn server_errors_then_success_on_the_third_try() {
    for wire in common::ALL {
        let server = MockServer::start([
            Reply::new(500, r#"{"error":{"message":"boom"}}"#),
            Reply::new(503, "upstream unavailable"),
            Reply::sse(text_fixture(wire)),
        ])
        .await;
        let response = call(adapter(wire, &server.url()).as_ref()).await.unwrap();
        assert!(!response.message.text().is_empty());
        assert_eq!(server.requests().len(), 3, "{wire:?}");
    }
    // With the default 3 attempts, a fourth failure is not tried: the last error surfaces.
    let server = MockServer::start((0..4).map(|_| Reply::new(502, "bad gateway"))).await;
    let err = call(adapter(Wire::OpenAi, &server.url()).as_ref()).await.unwrap_err();
    assert_eq!(
        err,
        ProviderError::Server {
            status: 502,
            message: "\"bad gateway\"".into()
        }
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn unauthorized_is_not_retried_and_never_shows_the_key() {
    for wire in common::ALL {
        let body = r#"{"error":{"message":"Incorrect API key provided: sk-test-secret-key. You can find your API key at ...","type":"invalid_request_error"}}"#;
        let server = MockServer::start([Reply::new(401, body), Reply::sse(text_fixture(wire))]).await;
        let err = call(adapter(wire, &server.url()).as_ref()).await.unwrap_err();
        assert_eq!(err.kind(), "auth", "{wire:?}: {err}");
        assert!(!err.is_retryable());
        let shown = format!("{err} {err:?}");
        assert!(!shown.contains("sk-test-secret-key"), "{shown}");
        assert!(shown.contains("[redacted]"), "{shown}");
        assert_eq!(server.requests().len(), 1, "{wire:?}: 401 is never retried");
    }
}

#[tokio::test]
async fn a_stalled_stream_hits_the_idle_timeout() {
    for wire in common::ALL {
        let body = common::fixture(text_fixture(wire));
        let server = MockServer::start([Reply::sse(text_fixture(wire)).stall_after(body.len() / 3)]).await;
        let http = HttpConfig {
            idle_timeout: Duration::from_millis(300),
            ..fast_http()
        };
        let provider = adapter_with(wire, &server.url(), http, true);
        let started = Instant::now();
        let err = call(provider.as_ref()).await.unwrap_err();
        assert!(
            matches!(&err, ProviderError::Timeout(m) if m.contains("idle")),
            "{wire:?}: {err}"
        );
        assert!(started.elapsed() < Duration::from_secs(3), "{wire:?}");
        assert!(err.is_retryable());
    }
}

#[tokio::test]
async fn headers_that_never_come_hit_the_read_timeout() {
    // A listener that accepts and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let http = HttpConfig {
        read_timeout: Duration::from_millis(200),
        max_attempts: 2,
        ..fast_http()
    };
    let started = Instant::now();
    let err = call(adapter_with(Wire::OpenAi, &url, http, true).as_ref())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "timeout", "{err}");
    assert!(started.elapsed() < Duration::from_secs(2));
    hold.abort();
}

#[tokio::test]
async fn cancel_during_a_stream_returns_promptly_and_drops_the_request() {
    for wire in common::ALL {
        let body = common::fixture(text_fixture(wire));
        let server = MockServer::start([Reply::sse(text_fixture(wire)).stall_after(body.len() / 2)]).await;
        let provider = adapter(wire, &server.url());
        let cancel = CancellationToken::new();
        let mut stream = provider.stream(&request(), cancel.clone()).await.unwrap();
        // Content arrives, then the server goes quiet.
        let first = stream.next().await.unwrap().unwrap();
        assert!(matches!(first, StreamEvent::TextDelta { .. }), "{first:?}");
        let canceller = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            canceller.cancel();
        });
        let started = Instant::now();
        let mut last = None;
        while let Some(item) = stream.next().await {
            if let Err(e) = item {
                last = Some(e);
                break;
            }
        }
        assert_eq!(last, Some(ProviderError::Cancelled), "{wire:?}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{wire:?}: {:?}",
            started.elapsed()
        );
        drop(stream);
        // The server sees the connection go away.
        let deadline = Instant::now() + Duration::from_secs(2);
        while server.dropped() == 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(server.dropped(), 1, "{wire:?}: the HTTP request was dropped");
    }
}

#[tokio::test]
async fn cancel_during_a_retry_wait_returns_promptly() {
    let server = MockServer::start([
        Reply::json(429, "openai/error-429-rate-limit.json").header("retry-after", "30"),
        Reply::sse("openai/stream-text.sse"),
    ])
    .await;
    let provider = adapter(Wire::OpenAi, &server.url());
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(150)).await;
        canceller.cancel();
    });
    let started = Instant::now();
    let err = match provider.stream(&request(), cancel).await {
        Ok(_) => panic!("expected a cancellation"),
        Err(e) => e,
    };
    assert_eq!(err, ProviderError::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn retry_after_longer_than_the_cap_fails_at_once() {
    let server =
        MockServer::start([Reply::json(429, "openai/error-429-rate-limit.json").header("retry-after", "3600")]).await;
    let started = Instant::now();
    let err = call(adapter(Wire::OpenAi, &server.url()).as_ref()).await.unwrap_err();
    assert!(
        matches!(err, ProviderError::RateLimited { retry_after: Some(d), .. } if d.as_secs() == 3600),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(server.requests().len(), 1);
}

/// A URL where nothing listens.
async fn dead_url() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    url
}

#[tokio::test]
async fn primary_down_the_fallback_serves() {
    let primary = adapter(Wire::Anthropic, &dead_url().await);
    let server = MockServer::start([Reply::sse("gemini/stream-text.sse")]).await;
    let fallback = adapter(Wire::Gemini, &server.url());
    let router = FallbackRouter::new(primary).with_fallback(fallback);
    let mut stream = router.stream(&request(), CancellationToken::new()).await.unwrap();
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(
        first,
        StreamEvent::Served {
            provider: "gemini".into(),
            model: "gemini-test".into()
        }
    );
    let rest = collect_stream(stream.map(|e| e).boxed()).await.unwrap();
    assert!(rest.message.text().starts_with("Of course!"));
    // Through collect_stream the served route is kept on the response.
    let server = MockServer::start([
        Reply::new(503, "down"),
        Reply::new(503, "down"),
        Reply::new(503, "down"),
    ])
    .await;
    let fallback_server = MockServer::start([Reply::sse("openai/stream-text.sse")]).await;
    let router = FallbackRouter::new(adapter(Wire::Anthropic, &server.url()))
        .with_fallback(adapter(Wire::OpenAi, &fallback_server.url()));
    let response = call(&router).await.unwrap();
    assert_eq!(
        response.served_by,
        Some(("openai-compatible".into(), "gpt-test".into()))
    );
    assert_eq!(server.requests().len(), 3, "the primary's own retries come first");
}

#[tokio::test]
async fn an_error_before_any_content_falls_back() {
    // HTTP 200, then an `error` event before any text: nothing was shown, so the fallback serves.
    let primary_server = MockServer::start([Reply::sse("anthropic/stream-error-midstream-api-error.sse")]).await;
    let fallback_server = MockServer::start([Reply::sse("openai/stream-text.sse")]).await;
    let router = FallbackRouter::new(adapter(Wire::Anthropic, &primary_server.url()))
        .with_fallback(adapter(Wire::OpenAi, &fallback_server.url()));
    let response = call(&router).await.unwrap();
    assert_eq!(response.served_by.unwrap().0, "openai-compatible");
    assert_eq!(fallback_server.requests().len(), 1);
}

#[tokio::test]
async fn content_then_failure_surfaces_without_fallback() {
    // Text is streamed, then the provider reports overload inside the stream.
    let primary_server = MockServer::start([Reply::sse("anthropic/error-overloaded-midstream.sse")]).await;
    let fallback_server = MockServer::start([Reply::sse("openai/stream-text.sse")]).await;
    let router = FallbackRouter::new(adapter(Wire::Anthropic, &primary_server.url()))
        .with_fallback(adapter(Wire::OpenAi, &fallback_server.url()));
    let mut stream = router.stream(&request(), CancellationToken::new()).await.unwrap();
    let mut text = String::new();
    let mut error = None;
    while let Some(item) = stream.next().await {
        match item {
            Ok(StreamEvent::TextDelta { text: t }) => text.push_str(&t),
            Ok(_) => {}
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    assert_eq!(text, "Olá! (That");
    assert_eq!(error.unwrap().kind(), "server");
    assert_eq!(fallback_server.requests().len(), 0, "never spliced with another model");

    // The connection breaks after some text: same rule.
    let body = common::fixture("openai/stream-text.sse");
    let reply = Reply::sse("openai/stream-text.sse")
        .drop_after(body.len() / 2)
        .delay(Duration::from_millis(50));
    let primary_server = MockServer::start([reply]).await;
    let fallback_server = MockServer::start([Reply::sse("openai/stream-text.sse")]).await;
    let router = FallbackRouter::new(adapter(Wire::OpenAi, &primary_server.url()))
        .with_fallback(adapter(Wire::OpenAi, &fallback_server.url()));
    let result = call(&router).await;
    let err = result.unwrap_err();
    assert!(matches!(err.kind(), "transport" | "malformed"), "{err}");
    assert_eq!(
        primary_server.requests().len(),
        1,
        "a stream that broke after content is not retried"
    );
    assert_eq!(fallback_server.requests().len(), 0);
}

#[tokio::test]
async fn non_retryable_errors_do_not_fall_back() {
    let primary_server = MockServer::start([Reply::new(401, r#"{"error":{"message":"bad key"}}"#)]).await;
    let fallback_server = MockServer::start([Reply::sse("openai/stream-text.sse")]).await;
    let router = FallbackRouter::new(adapter(Wire::OpenAi, &primary_server.url()))
        .with_fallback(adapter(Wire::OpenAi, &fallback_server.url()));
    let err = call(&router).await.unwrap_err();
    assert_eq!(err.kind(), "auth");
    assert_eq!(fallback_server.requests().len(), 0);
}

#[tokio::test]
async fn every_route_down_reports_the_last_error() {
    let router = FallbackRouter::new(adapter_with(
        Wire::OpenAi,
        &dead_url().await,
        HttpConfig {
            max_attempts: 1,
            ..fast_http()
        },
        true,
    ))
    .with_fallback(Arc::new(
        agent_providers::OpenAiCompatible::new(
            &agent_providers::ProviderConfig::new(agent_providers::ProviderKind::OpenAiCompatible, "m2", "")
                .with_base_url(dead_url().await)
                .with_http(HttpConfig {
                    max_attempts: 1,
                    ..fast_http()
                }),
        )
        .unwrap(),
    ));
    let err = call(&router).await.unwrap_err();
    assert_eq!(err.kind(), "transport", "{err}");
}

#[tokio::test]
async fn retry_after_on_a_503_is_honoured_too() {
    let server = MockServer::start([
        Reply::new(503, "maintenance").header("retry-after", "1"),
        Reply::sse("openai/stream-text.sse"),
    ])
    .await;
    let started = Instant::now();
    call(adapter(Wire::OpenAi, &server.url()).as_ref()).await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(950));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn responses_errors_route_like_the_others() {
    // A rate-limit `error` event before any output: retryable, nothing shown, the fallback serves.
    let primary_server = MockServer::start([Reply::sse("openai-responses/stream-error-event.sse")]).await;
    let fallback_server = MockServer::start([Reply::sse("anthropic/stream-text.sse")]).await;
    let router = FallbackRouter::new(adapter(Wire::OpenAiResponses, &primary_server.url()))
        .with_fallback(adapter(Wire::Anthropic, &fallback_server.url()));
    let response = call(&router).await.unwrap();
    assert_eq!(response.served_by.unwrap().0, "anthropic");
    assert_eq!(primary_server.requests().len(), 1);
    // `response.failed` after a text delta: the error surfaces, no splice.
    let primary_server = MockServer::start([Reply::sse("openai-responses/stream-failed.sse")]).await;
    let fallback_server = MockServer::start([Reply::sse("anthropic/stream-text.sse")]).await;
    let router = FallbackRouter::new(adapter(Wire::OpenAiResponses, &primary_server.url()))
        .with_fallback(adapter(Wire::Anthropic, &fallback_server.url()));
    let err = call(&router).await.unwrap_err();
    assert_eq!(err.kind(), "server", "{err}");
    assert_eq!(fallback_server.requests().len(), 0, "never spliced with another model");
    // The Responses route as the fallback of a dead primary.
    let server = MockServer::start([Reply::sse("openai-responses/stream-text.sse")]).await;
    let router = FallbackRouter::new(adapter(Wire::OpenAi, &dead_url().await))
        .with_fallback(adapter(Wire::OpenAiResponses, &server.url()));
    let response = call(&router).await.unwrap();
    assert_eq!(response.served_by, Some(("openai-responses".into(), "gpt-test".into())));
    assert!(response.message.text().starts_with("Olá!"));
}
