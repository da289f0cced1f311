//! A loopback HTTP server for the adapter tests: it answers each request with the next scripted
//! reply (status, headers, body cut into chunks, optional stall), and records what it received.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::ModelResponse;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use bytes::Bytes;

pub fn fixture(path: &str) -> Vec<u8> {
    let full = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path);
    std::fs::read(&full).unwrap_or_else(|e| panic!("fixture {}: {e}", full.display()))
}

#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Cut the body into pieces of this many bytes (each sent as its own write).
    pub chunk: Option<usize>,
    /// Pause between pieces.
    pub delay: Duration,
    /// After this many bytes, stop sending but keep the connection open.
    pub stall_after: Option<usize>,
    /// After this many bytes, break the connection.
    pub drop_after: Option<usize>,
    /// After the body, send this piece again and again until the client goes away.
    pub forever: Option<Bytes>,
}

impl Reply {
    pub fn new(status: u16, body: impl Into<Vec<u8>>) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body: body.into(),
            chunk: None,
            delay: Duration::ZERO,
            stall_after: None,
            drop_after: None,
            forever: None,
        }
    }

    pub fn sse(path: &str) -> Self {
        Reply::new(200, fixture(path)).header("content-type", "text/event-stream")
    }

    pub fn json(status: u16, path: &str) -> Self {
        Reply::new(status, fixture(path)).header("content-type", "application/json")
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn chunked(mut self, size: usize) -> Self {
        self.chunk = Some(size);
        self
    }

    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    pub fn stall_after(mut self, bytes: usize) -> Self {
        self.stall_after = Some(bytes);
        self
    }

    /// After the body, repeats `piece` endlessly (a hostile server).
    pub fn forever(mut self, piece: impl Into<Vec<u8>>) -> Self {
        self.forever = Some(Bytes::from(piece.into()));
        self
    }

    pub fn drop_after(mut self, bytes: usize) -> Self {
        self.drop_after = Some(bytes);
        self
    }
}

#[derive(Clone, Debug)]
pub struct Recorded {
    pub path: String,
    pub headers: HeaderMap,
    pub body: serde_json::Value,
    /// The body's bytes as they arrived.
    pub raw: Bytes,
}

#[derive(Default)]
struct Shared {
    replies: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<Recorded>>,
    /// Bodies whose stream was dropped before it finished (the client went away).
    dropped: AtomicUsize,
    /// Bytes sent by `Reply::forever` repetitions.
    forever_sent: AtomicUsize,
}

pub struct MockServer {
    pub addr: std::net::SocketAddr,
    shared: Arc<Shared>,
}

struct DropFlag {
    shared: Arc<Shared>,
    finished: bool,
}

impl DropFlag {
    fn finish(&mut self) {
        self.finished = true;
    }
}

impl Drop for DropFlag {
    fn drop(&mut self) {
        if !self.finished {
            self.shared.dropped.fetch_add(1, Ordering::SeqCst);
        }
    }
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let path = request
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_default();
    let headers = request.headers().clone();
    let bytes = axum::body::to_bytes(request.into_body(), usize::MAX).await.unwrap();
    let body = serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
    shared.requests.lock().unwrap().push(Recorded {
        path,
        headers,
        body,
        raw: bytes,
    });
    let reply = shared.replies.lock().unwrap().pop_front();
    let Some(reply) = reply else {
        return Response::builder()
            .status(500)
            .body(Body::from(r#"{"error":{"message":"no scripted reply left"}}"#))
            .unwrap();
    };
    let mut builder = Response::builder().status(StatusCode::from_u16(reply.status).unwrap());
    for (name, value) in &reply.headers {
        builder = builder.header(name, value);
    }
    let simple =
        reply.chunk.is_none() && reply.stall_after.is_none() && reply.drop_after.is_none() && reply.forever.is_none();
    if simple {
        return builder.body(Body::from(reply.body)).unwrap();
    }
    let size = reply.chunk.unwrap_or(reply.body.len().max(1));
    let flag = DropFlag {
        shared: shared.clone(),
        finished: false,
    };
    let stream = futures::stream::unfold((reply, 0usize, flag), move |(reply, sent, mut flag)| async move {
        if sent > 0 && !reply.delay.is_zero() {
            tokio::time::sleep(reply.delay).await;
        }
        if let Some(limit) = reply.drop_after
            && sent >= limit
        {
            return Some((
                Err(std::io::Error::other("connection dropped by the test")),
                (reply, sent, flag),
            ));
        }
        if let Some(limit) = reply.stall_after
            && sent >= limit
        {
            // Hold the connection open, sending nothing, until the client goes away.
            futures::future::pending::<()>().await;
        }
        if sent >= reply.body.len() {
            if let Some(piece) = reply.forever.clone() {
                flag.shared.forever_sent.fetch_add(piece.len(), Ordering::SeqCst);
                return Some((Ok(piece), (reply, sent, flag)));
            }
            flag.finish();
            return None;
        }
        let mut end = (sent + size).min(reply.body.len());
        for limit in [reply.stall_after, reply.drop_after].into_iter().flatten() {
            if sent < limit {
                end = end.min(limit);
            }
        }
        let piece = Bytes::copy_from_slice(&reply.body[sent..end]);
        Some((Ok::<_, std::io::Error>(piece), (reply, end, flag)))
    });
    builder.body(Body::from_stream(stream)).unwrap()
}

impl MockServer {
    pub async fn start(replies: impl IntoIterator<Item = Reply>) -> MockServer {
        let shared = Arc::new(Shared::default());
        shared.replies.lock().unwrap().extend(replies);
        let app = axum::Router::new().fallback(handle).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        MockServer { addr, shared }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn push(&self, reply: Reply) {
        self.shared.replies.lock().unwrap().push_back(reply);
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// Bytes handed to the connection by endless replies so far.
    pub fn forever_sent(&self) -> usize {
        self.shared.forever_sent.load(Ordering::SeqCst)
    }

    pub fn dropped(&self) -> usize {
        self.shared.dropped.load(Ordering::SeqCst)
    }
}

/// A compact, comparable view of a response.
pub fn summary(r: &ModelResponse) -> serde_json::Value {
    serde_json::json!({
        "text": r.message.text(),
        "calls": r.message.tool_calls.iter().map(|c| serde_json::json!({
            "name": c.name,
            "args": c.parse_arguments().unwrap_or_else(|e| serde_json::json!(format!("INVALID: {e}: {}", c.arguments))),
            "has_signature": c.signature.is_some(),
        })).collect::<Vec<_>>(),
        "finish": r.finish_reason,
        "usage": r.usage,
        "reasoning_chars": r.message.reasoning.as_ref().map(|x| x.text.chars().count()),
        "reasoning_signature": r.message.reasoning.as_ref().map(|x| x.signature.is_some()),
    })
}

/// Which adapter a test drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    OpenAi,
    OpenAiResponses,
    Anthropic,
    Gemini,
}

pub const ALL: [Wire; 4] = [Wire::OpenAi, Wire::OpenAiResponses, Wire::Anthropic, Wire::Gemini];

/// Fast retries for tests.
pub fn fast_http() -> agent_providers::HttpConfig {
    agent_providers::HttpConfig {
        backoff_base: Duration::from_millis(10),
        backoff_max: Duration::from_millis(50),
        ..agent_providers::HttpConfig::default()
    }
}

pub fn adapter_with(
    wire: Wire,
    url: &str,
    http: agent_providers::HttpConfig,
    streaming: bool,
) -> Arc<dyn agent_core::Provider> {
    use agent_providers::{Anthropic, Gemini, OpenAiCompatible, OpenAiResponses, ProviderConfig, ProviderKind};
    let (kind, model) = match wire {
        Wire::OpenAi => (ProviderKind::OpenAiCompatible, "gpt-test"),
        Wire::OpenAiResponses => (ProviderKind::OpenAiResponses, "gpt-test"),
        Wire::Anthropic => (ProviderKind::Anthropic, "claude-test"),
        Wire::Gemini => (ProviderKind::Gemini, "gemini-test"),
    };
    let config = ProviderConfig::new(kind, model, "sk-test-secret-key")
        .with_base_url(format!("{url}/v1"))
        .with_http(http)
        .with_streaming(streaming);
    match wire {
        Wire::OpenAi => Arc::new(OpenAiCompatible::new(&config).unwrap()),
        Wire::OpenAiResponses => Arc::new(OpenAiResponses::new(&config).unwrap()),
        Wire::Anthropic => Arc::new(Anthropic::new(&config).unwrap()),
        Wire::Gemini => Arc::new(Gemini::new(&config).unwrap().with_api_root(url).unwrap()),
    }
}

pub fn adapter(wire: Wire, url: &str) -> Arc<dyn agent_core::Provider> {
    adapter_with(wire, url, fast_http(), true)
}
