//! # agent-bench
//!
//! The whole-process benchmark harness of the project:
//!
//! - [`MockLlm`] (binary `mock-llm`): a small, fast OpenAI-compatible server for loopback. It
//!   answers `POST …/chat/completions` with tool calls while fewer than `tool_steps × calls_per_step`
//!   tool results follow the last user message, and with a final text otherwise, as SSE when
//!   the request has `"stream": true` and as JSON otherwise; `POST …/responses` does the same
//!   in the OpenAI Responses wire format.
//! - the `harness` binary: starts `mock-llm` as a separate process, measures its raw ceiling
//!   with a bare HTTP client, then runs agent-core's loop against it through the
//!   OpenAI-compatible adapter (sequential sessions, then many at once) and prints ms per
//!   model call, CPU ms per call, calls/s and peak RSS.
//!
//! The Python and Node bindings reuse `mock-llm` for their own whole-process figures.

use std::borrow::Cow;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use tokio::net::TcpListener;

mod responses;

/// What the mock model does.
#[derive(Debug, Clone)]
pub struct MockConfig {
    /// Tool steps before the final answer (default 10).
    pub tool_steps: u64,
    /// Tool calls per step (default 1).
    pub calls_per_step: u64,
    /// The tool to call; by default the first tool of the request.
    pub tool: Option<String>,
    /// The arguments of each call, as JSON text (default `{}`).
    pub arguments: String,
    /// The final answer.
    pub final_text: String,
    /// Stop after this many requests.
    pub max_requests: u64,
    /// Stop after this long.
    pub max_duration: Duration,
}

impl Default for MockConfig {
    fn default() -> Self {
        MockConfig {
            tool_steps: 10,
            calls_per_step: 1,
            tool: None,
            arguments: "{}".into(),
            final_text: "All steps are done.".into(),
            max_requests: 50_000_000,
            max_duration: Duration::from_secs(900),
        }
    }
}

#[derive(Deserialize)]
struct ChatRequest<'a> {
    #[serde(borrow, default)]
    model: Cow<'a, str>,
    #[serde(borrow, default)]
    messages: Vec<ChatMessage<'a>>,
    #[serde(default)]
    stream: bool,
    #[serde(default)]
    tools: Vec<ToolDef>,
}

#[derive(Deserialize)]
struct ChatMessage<'a> {
    #[serde(borrow)]
    role: Cow<'a, str>,
}

#[derive(Deserialize)]
struct ToolDef {
    function: ToolFunction,
}

#[derive(Deserialize)]
struct ToolFunction {
    name: String,
}

/// The mock server's state.
#[derive(Debug)]
pub struct MockLlm {
    config: MockConfig,
    calls: AtomicU64,
}

fn esc(text: &str) -> String {
    let quoted = serde_json::Value::String(text.to_owned()).to_string();
    quoted[1..quoted.len() - 1].to_owned()
}

impl MockLlm {
    /// A server with this behaviour.
    pub fn new(config: MockConfig) -> Arc<Self> {
        Arc::new(MockLlm {
            config,
            calls: AtomicU64::new(0),
        })
    }

    /// Requests answered so far.
    pub fn requests(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// The response to one chat-completions body: `(content type, body)`, or a 400 message.
    pub fn answer(&self, body: &[u8]) -> Result<(&'static str, String), String> {
        let request: ChatRequest<'_> = serde_json::from_slice(body).map_err(|e| format!("bad request body: {e}"))?;
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        let results = request
            .messages
            .iter()
            .rev()
            .take_while(|m| m.role != "user")
            .filter(|m| m.role == "tool")
            .count() as u64;
        let model = esc(&request.model);
        let wanted = self.config.tool_steps * self.config.calls_per_step;
        if results < wanted {
            let tool = match (&self.config.tool, request.tools.first()) {
                (Some(t), _) => t.clone(),
                (None, Some(t)) => t.function.name.clone(),
                (None, None) => return Ok(self.text(&model, request.stream, "(no tools offered)")),
            };
            let calls = self.config.calls_per_step.min(wanted - results);
            Ok(self.tool_calls(&model, request.stream, n, &esc(&tool), calls))
        } else {
            Ok(self.text(&model, request.stream, &self.config.final_text))
        }
    }

    fn tool_calls(&self, model: &str, stream: bool, n: u64, tool: &str, calls: u64) -> (&'static str, String) {
        let args = esc(&self.config.arguments);
        let head = format!(
            r#"{{"id":"chatcmpl-{n}","object":"chat.completion.chunk","created":0,"model":"{model}","choices":["#
        );
        if !stream {
            let list: Vec<String> = (0..calls)
                .map(|i| format!(r#"{{"id":"call_{n}_{i}","type":"function","function":{{"name":"{tool}","arguments":"{args}"}}}}"#))
                .collect();
            return (
                "application/json",
                format!(
                    r#"{{"id":"chatcmpl-{n}","object":"chat.completion","created":0,"model":"{model}","choices":[{{"index":0,"message":{{"role":"assistant","content":null,"tool_calls":[{}]}},"finish_reason":"tool_calls"}}],"usage":{{"prompt_tokens":50,"completion_tokens":10,"total_tokens":60}}}}"#,
                    list.join(",")
                ),
            );
        }
        let mut out = String::with_capacity(512 * calls as usize + 512);
        for i in 0..calls {
            // The name first, then the arguments in two pieces cut mid-JSON.
            let cut = args.len() / 2;
            let (a, b) = args.split_at(if args.is_char_boundary(cut) && !args[..cut].ends_with('\\') {
                cut
            } else {
                0
            });
            out.push_str(&format!(
                "data: {head}{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{{\"index\":{i},\"id\":\"call_{n}_{i}\",\"type\":\"function\",\"function\":{{\"name\":\"{tool}\",\"arguments\":\"\"}}}}]}},\"finish_reason\":null}}]}}\n\n"
            ));
            for piece in [a, b] {
                out.push_str(&format!(
                    "data: {head}{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{i},\"function\":{{\"arguments\":\"{piece}\"}}}}]}},\"finish_reason\":null}}]}}\n\n"
                ));
            }
        }
        out.push_str(&format!(
            "data: {head}{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"tool_calls\"}}]}}\n\n"
        ));
        out.push_str(&format!(
            "data: {head}],\"usage\":{{\"prompt_tokens\":50,\"completion_tokens\":10,\"total_tokens\":60}}}}\n\ndata: [DONE]\n\n"
        ));
        ("text/event-stream", out)
    }

    fn text(&self, model: &str, stream: bool, text: &str) -> (&'static str, String) {
        let text = esc(text);
        if !stream {
            return (
                "application/json",
                format!(
                    r#"{{"id":"chatcmpl-t","object":"chat.completion","created":0,"model":"{model}","choices":[{{"index":0,"message":{{"role":"assistant","content":"{text}"}},"finish_reason":"stop"}}],"usage":{{"prompt_tokens":50,"completion_tokens":5,"total_tokens":55}}}}"#
                ),
            );
        }
        let head = format!(
            r#"{{"id":"chatcmpl-t","object":"chat.completion.chunk","created":0,"model":"{model}","choices":["#
        );
        let mut out = String::with_capacity(1024);
        out.push_str(&format!(
            "data: {head}{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":\"\"}},\"finish_reason\":null}}]}}\n\n"
        ));
        out.push_str(&format!(
            "data: {head}{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}},\"finish_reason\":null}}]}}\n\n"
        ));
        out.push_str(&format!(
            "data: {head}{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"stop\"}}]}}\n\n"
        ));
        out.push_str(&format!(
            "data: {head}],\"usage\":{{\"prompt_tokens\":50,\"completion_tokens\":5,\"total_tokens\":55}}}}\n\ndata: [DONE]\n\n"
        ));
        ("text/event-stream", out)
    }

    async fn handle(self: Arc<Self>, request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
        let reply = |status: StatusCode, content_type: &'static str, body: String| {
            let mut response = Response::new(Full::new(Bytes::from(body)));
            *response.status_mut() = status;
            if let Ok(value) = content_type.parse() {
                response.headers_mut().insert(hyper::header::CONTENT_TYPE, value);
            }
            Ok(response)
        };
        let path = request.uri().path().to_owned();
        if request.method() == hyper::Method::GET && path.ends_with("/health") {
            return reply(StatusCode::OK, "text/plain", "ok".into());
        }
        let responses = path.ends_with("/responses");
        if request.method() != hyper::Method::POST || !(responses || path.ends_with("/chat/completions")) {
            return reply(
                StatusCode::NOT_FOUND,
                "application/json",
                r#"{"error":{"message":"not found"}}"#.into(),
            );
        }
        let body = match request.into_body().collect().await {
            Ok(body) => body.to_bytes(),
            Err(e) => return reply(StatusCode::BAD_REQUEST, "text/plain", e.to_string()),
        };
        let answered = if responses {
            self.answer_responses(&body)
        } else {
            self.answer(&body)
        };
        match answered {
            Ok((content_type, text)) => reply(StatusCode::OK, content_type, text),
            Err(message) => reply(
                StatusCode::BAD_REQUEST,
                "application/json",
                format!(r#"{{"error":{{"message":"{}"}}}}"#, esc(&message)),
            ),
        }
    }

    /// Serves HTTP/1.1 on `listener` until `max_requests` or `max_duration` is reached.
    pub async fn serve(self: Arc<Self>, listener: TcpListener) {
        let deadline = tokio::time::sleep(self.config.max_duration);
        tokio::pin!(deadline);
        loop {
            if self.requests() >= self.config.max_requests {
                return;
            }
            let (stream, _) = tokio::select! {
                _ = &mut deadline => return,
                accepted = listener.accept() => match accepted {
                    Ok(pair) => pair,
                    Err(_) => continue,
                },
            };
            let _ = stream.set_nodelay(true);
            let server = self.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| server.clone().handle(req));
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    }
}

/// Peak resident memory of a process in KiB (`VmHWM` of `/proc/<pid>/status`; `self` for this one).
pub fn peak_rss_kib(pid: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The current resident set size of this process (`VmRSS`), KiB.
pub fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// CPU time this process has used: the sum of its threads' on-CPU nanoseconds from
/// `/proc/self/task/*/schedstat` (precise), or `/proc/self/stat` ticks (10 ms steps) when
/// schedstat is unavailable. Threads that already exited are not counted by schedstat.
pub fn cpu_time() -> Duration {
    let mut total = 0u64;
    let mut found = false;
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        for task in tasks.flatten() {
            let path = task.path().join("schedstat");
            if let Some(ns) = std::fs::read_to_string(path)
                .ok()
                .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()))
            {
                total += ns;
                found = true;
            }
        }
    }
    if found {
        return Duration::from_nanos(total);
    }
    stat_cpu_time()
}

fn stat_cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may contain spaces) start after the last ')'.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    // utime and stime are fields 14 and 15 of the line: indexes 11 and 12 after the name.
    let total = ticks(11) + ticks(12);
    Duration::from_millis(total * 10) // USER_HZ is 100 on Linux
}

/// What one client of the side-by-side comparison prints (one JSON line): the measured
/// sessions' model calls, their wall and CPU time, and the process's peak RSS.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct ClientFigures {
    /// Model calls made by the measured sessions.
    pub calls: usize,
    /// Wall-clock seconds of the measured sessions.
    pub wall_s: f64,
    /// CPU seconds of the whole client process over the same span.
    pub cpu_s: f64,
    /// Peak resident set size of the client process, KiB.
    pub peak_rss_kib: u64,
    /// Median time of one session's turn, ms (agent variants only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_p50_ms: Option<f64>,
    /// 99th percentile of one session's turn, ms (agent variants only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_p99_ms: Option<f64>,
}

/// The `q` quantile (0..=1) of `values`, nearest rank; `None` when there are none.
pub fn quantile(values: &mut [f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let rank = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len());
    Some(values[rank - 1])
}

/// A `mock-llm` process started by a harness; killed when dropped.
pub struct MockProcess {
    /// The process.
    pub child: std::process::Child,
    /// Its base URL (`http://127.0.0.1:PORT/v1`).
    pub url: String,
}

impl Drop for MockProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl MockProcess {
    /// Starts `command` (a `mock-llm` invocation; its stdout is taken) and reads the address
    /// from its first line, `listening on URL`.
    pub fn start(mut command: std::process::Command) -> Result<MockProcess, String> {
        use std::io::BufRead;
        let mut child = command
            .stdout(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start mock-llm (cargo build --release -p agent-bench --bins): {e}"))?;
        let mut line = String::new();
        let stdout = child.stdout.take().ok_or("mock-llm has no stdout")?;
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .ok_or(format!("unexpected mock-llm output {line:?}"))?
            .to_owned();
        Ok(MockProcess { child, url })
    }
}

/// One keep-alive HTTP/1 connection to the server at `url` with a bare hyper client (no pool,
/// no TLS): its sender, and the `host:port` to send as `Host`.
pub async fn http1_connection(
    url: &str,
) -> Result<(hyper::client::conn::http1::SendRequest<Full<Bytes>>, String), String> {
    let authority = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap_or_default()
        .to_owned();
    let stream = tokio::net::TcpStream::connect(&authority)
        .await
        .map_err(|e| e.to_string())?;
    let _ = stream.set_nodelay(true);
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(conn);
    Ok((sender, authority))
}
