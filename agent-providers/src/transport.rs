//! HTTP transport shared by the adapters: timeouts, retries with backoff and `Retry-After`,
//! cancellation, and the streaming driver that feeds SSE bytes to a wire decoder.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use agent_core::{CancellationToken, EventStream, ProviderError, StreamEvent};
use bytes::Bytes;
use futures::{Stream, StreamExt};
use reqwest::Url;
use reqwest::header::HeaderMap;
use tokio::time::{Instant, Sleep};
use tokio_util::sync::WaitForCancellationFutureOwned;

use crate::body_decoder::BodyDecoder;
use crate::errors;
use crate::http::{BodyStream, HttpClient, Response};
use crate::limits::{self, Limits};
use crate::sse::{SseEvent, SseParser};

/// Timeouts and retry policy of an adapter. Every field is public and has the documented
/// default; use struct-update syntax to change a few.
///
/// ```
/// use std::time::Duration;
/// use agent_providers::HttpConfig;
/// let http = HttpConfig { max_attempts: 5, idle_timeout: Duration::from_secs(30), ..HttpConfig::default() };
/// assert_eq!(http.connect_timeout, Duration::from_secs(30));
/// ```
///
/// As data it takes the [options format](agent_core::options): durations in milliseconds
/// under keys ending `_ms` (`{"max_attempts": 5, "idle_timeout_ms": 30000}`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct HttpConfig {
    /// Establishing the TCP/TLS connection (default 30 s).
    #[serde(rename = "connect_timeout_ms", with = "agent_core::options::duration_ms")]
    #[schemars(schema_with = "agent_core::options::millis_schema")]
    pub connect_timeout: Duration,
    /// Waiting for the response headers, and for a whole non-streamed body (default 60 s).
    #[serde(rename = "read_timeout_ms", with = "agent_core::options::duration_ms")]
    #[schemars(schema_with = "agent_core::options::millis_schema")]
    pub read_timeout: Duration,
    /// The longest silence between two chunks of a streamed body (default 120 s).
    #[serde(rename = "idle_timeout_ms", with = "agent_core::options::duration_ms")]
    #[schemars(schema_with = "agent_core::options::millis_schema")]
    pub idle_timeout: Duration,
    /// The whole model call, retries and stream included (default 180 s). The agent loop
    /// enforces its own model-call timeout as well.
    #[serde(rename = "call_timeout_ms", with = "agent_core::options::duration_ms")]
    #[schemars(schema_with = "agent_core::options::millis_schema")]
    pub call_timeout: Duration,
    /// Attempts per call, the first included (default 3). Retries happen on 429, 5xx,
    /// timeouts and transport errors, before any byte of the answer has been read.
    pub max_attempts: u32,
    /// The first backoff delay; each retry doubles it, with full jitter (default 500 ms).
    #[serde(rename = "backoff_base_ms", with = "agent_core::options::duration_ms")]
    #[schemars(schema_with = "agent_core::options::millis_schema")]
    pub backoff_base: Duration,
    /// The largest backoff delay (default 8 s).
    #[serde(rename = "backoff_max_ms", with = "agent_core::options::duration_ms")]
    #[schemars(schema_with = "agent_core::options::millis_schema")]
    pub backoff_max: Duration,
    /// The longest `Retry-After` honoured; a server asking for more fails the call at once, so
    /// that a fallback route can take over (default 60 s).
    #[serde(rename = "max_retry_after_ms", with = "agent_core::options::duration_ms")]
    #[schemars(schema_with = "agent_core::options::millis_schema")]
    pub max_retry_after: Duration,
    /// Sent as `User-Agent`.
    pub user_agent: String,
    /// An HTTP(S) proxy URL for every request. The `HTTP_PROXY`/`HTTPS_PROXY` environment
    /// variables are not read (the crate reads no environment outside `from_env`).
    pub proxy: Option<String>,
    /// The most bytes of one response body, streamed or not; one SSE event can be no larger.
    /// Past it the call fails as malformed (default
    /// [`DEFAULT_MAX_RESPONSE_BYTES`](crate::limits::DEFAULT_MAX_RESPONSE_BYTES), 64 MiB).
    pub max_response_bytes: usize,
    /// The most bytes of an error body read; the rest is dropped and the error says it was cut
    /// (default [`DEFAULT_MAX_ERROR_BODY_BYTES`](crate::limits::DEFAULT_MAX_ERROR_BODY_BYTES),
    /// 64 KiB).
    pub max_error_body_bytes: usize,
    /// The most bytes of one tool call's arguments; past it the call fails as malformed
    /// (default [`DEFAULT_MAX_TOOL_ARGS_BYTES`](crate::limits::DEFAULT_MAX_TOOL_ARGS_BYTES),
    /// 1 MiB).
    pub max_tool_args_bytes: usize,
    /// The most tool calls in one response; past it the call fails as malformed (default
    /// [`DEFAULT_MAX_TOOL_CALLS`](crate::limits::DEFAULT_MAX_TOOL_CALLS), 128).
    pub max_tool_calls: usize,
}

impl HttpConfig {
    /// The response caps of this configuration.
    pub fn limits(&self) -> Limits {
        Limits {
            max_response_bytes: self.max_response_bytes,
            max_error_body_bytes: self.max_error_body_bytes,
            max_tool_args_bytes: self.max_tool_args_bytes,
            max_tool_calls: self.max_tool_calls,
        }
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            connect_timeout: Duration::from_secs(30),
            read_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(120),
            call_timeout: Duration::from_secs(180),
            max_attempts: 3,
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
            user_agent: concat!("agent-providers/", env!("CARGO_PKG_VERSION")).to_owned(),
            proxy: None,
            max_response_bytes: limits::DEFAULT_MAX_RESPONSE_BYTES,
            max_error_body_bytes: limits::DEFAULT_MAX_ERROR_BODY_BYTES,
            max_tool_args_bytes: limits::DEFAULT_MAX_TOOL_ARGS_BYTES,
            max_tool_calls: limits::DEFAULT_MAX_TOOL_CALLS,
        }
    }
}

/// One decoder of a provider's streamed wire format: SSE events in, stream events out.
pub trait WireDecoder: Send + 'static {
    /// Handles one SSE event, appending what it means to `out`. An error ends the stream
    /// (after the events already in `out`).
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError>;
    /// Handles the end of the body: emits the final events or reports a truncated stream.
    fn on_end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError>;
}

/// Decodes a whole SSE body in one go (tests, benchmarks, recorded bodies). Events before an
/// error are kept; the error, if any, comes last.
pub fn decode_sse<D: WireDecoder>(decoder: &mut D, body: &[u8]) -> (Vec<StreamEvent>, Option<ProviderError>) {
    let mut parser = SseParser::new();
    let mut sse = Vec::new();
    let mut out = Vec::new();
    let result = (|| {
        parser.push(body, &mut sse)?;
        parser.finish(&mut sse)?;
        for event in &sse {
            decoder.on_event(event, &mut out)?;
        }
        decoder.on_end(&mut out)
    })();
    (out, result.err())
}

/// How an error response (status, headers, the body read, where it was cut) becomes an error:
/// the wire's mapping.
pub(crate) type MapError<'a> = dyn Fn(u16, &HeaderMap, &[u8], Option<usize>) -> ProviderError + Sync + 'a;

/// The HTTP side of an adapter: a pooled client, the policy, and the secret to redact.
#[derive(Debug, Clone)]
pub(crate) struct Transport {
    client: HttpClient,
    pub(crate) http: HttpConfig,
    secret: Arc<str>,
}

impl Transport {
    /// A transport whose every request carries `headers`, for requests to `endpoint` (others
    /// work too).
    pub(crate) fn new(
        http: HttpConfig,
        secret: &str,
        headers: HeaderMap,
        endpoint: &Url,
    ) -> Result<Self, ProviderError> {
        Ok(Transport {
            client: HttpClient::new(&http, headers, endpoint)?,
            http,
            secret: secret.into(),
        })
    }

    pub(crate) fn redact(&self, err: ProviderError) -> ProviderError {
        errors::redact_error(err, &self.secret)
    }

    /// POSTs `body`, retrying per the policy, and returns the first successful response.
    pub(crate) async fn post(
        &self,
        url: &Url,
        body: Bytes,
        cancel: &CancellationToken,
        deadline: Instant,
        map_error: &MapError<'_>,
    ) -> Result<Response, ProviderError> {
        let mut attempt = 1;
        loop {
            let (err, header_hint) = match self.attempt(url, body.clone(), cancel, deadline, map_error).await {
                Ok(response) => return Ok(response),
                Err((ProviderError::Cancelled, _)) => return Err(ProviderError::Cancelled),
                Err((err, hint)) => (self.redact(err), hint),
            };
            if !err.is_retryable() || attempt >= self.http.max_attempts {
                return Err(err);
            }
            // The server's hint (Retry-After on a 429 or a 503, Gemini's RetryInfo) wins over
            // the backoff.
            let hint = match &err {
                ProviderError::RateLimited { retry_after, .. } => retry_after.or(header_hint),
                _ => header_hint,
            };
            let delay = match hint {
                Some(hint) if hint > self.http.max_retry_after => return Err(err),
                Some(hint) => hint,
                None => self.backoff(attempt),
            };
            if Instant::now() + delay >= deadline {
                return Err(err);
            }
            tracing::warn!(url = url.as_str(), attempt, delay_ms = delay.as_millis() as u64, error = %err, "model call failed; retrying");
            tokio::select! {
                _ = cancel.cancelled() => return Err(ProviderError::Cancelled),
                _ = tokio::time::sleep(delay) => {}
            }
            attempt += 1;
        }
    }

    fn backoff(&self, attempt: u32) -> Duration {
        let exp = self
            .http
            .backoff_base
            .saturating_mul(1u32 << (attempt - 1).min(16))
            .min(self.http.backoff_max);
        // Full jitter: anywhere between half and all of the exponential delay.
        let factor: f64 = 0.5 + rand::random::<f64>() * 0.5;
        exp.mul_f64(factor)
    }

    async fn attempt(
        &self,
        url: &Url,
        body: Bytes,
        cancel: &CancellationToken,
        deadline: Instant,
        map_error: &MapError<'_>,
    ) -> Result<Response, (ProviderError, Option<Duration>)> {
        let send = self.client.post(url, body);
        let wait = self
            .http
            .read_timeout
            .min(deadline.saturating_duration_since(Instant::now()));
        let response = tokio::select! {
            _ = cancel.cancelled() => return Err((ProviderError::Cancelled, None)),
            r = tokio::time::timeout(wait, send) => match r {
                Err(_) => return Err((ProviderError::Timeout(format!(
                    "no response from the provider within {} s", wait.as_secs_f64()
                )), None)),
                Ok(Err(e)) => return Err((e, None)),
                Ok(Ok(response)) => response,
            },
        };
        let status = response.status();
        if (200..300).contains(&status) {
            return Ok(response);
        }
        let headers = response.headers().clone();
        let max = self.http.max_error_body_bytes;
        let (body, cut) = tokio::select! {
            _ = cancel.cancelled() => return Err((ProviderError::Cancelled, None)),
            r = tokio::time::timeout(self.http.read_timeout, response.bytes_up_to(max)) => match r {
                Ok(Ok(read)) => read,
                _ => (Bytes::new(), false),
            },
        };
        // A cut body keeps the status's kind (a 429 stays retryable); its message says so.
        Err((
            map_error(status, &headers, &body, cut.then_some(max)),
            errors::retry_after(&headers),
        ))
    }

    /// Reads a whole (non-streamed) body within the read timeout, at most
    /// [`HttpConfig::max_response_bytes`] of it.
    pub(crate) async fn read_body(
        &self,
        response: Response,
        cancel: &CancellationToken,
        deadline: Instant,
    ) -> Result<Bytes, ProviderError> {
        let wait = self
            .http
            .read_timeout
            .min(deadline.saturating_duration_since(Instant::now()));
        tokio::select! {
            _ = cancel.cancelled() => Err(ProviderError::Cancelled),
            r = tokio::time::timeout(wait, response.bytes_up_to(self.http.max_response_bytes)) => match r {
                Err(_) => Err(ProviderError::Timeout(format!(
                    "the response body did not arrive within {} s", wait.as_secs_f64()
                ))),
                Ok(Err(e)) => Err(self.redact(e)),
                Ok(Ok((_, true))) => Err(limits::response_too_large(self.http.max_response_bytes)),
                Ok(Ok((body, false))) => Ok(body),
            },
        }
    }

    /// Turns a streamed response into stream events through `decoder`.
    pub(crate) fn drive<D: WireDecoder>(
        &self,
        response: Response,
        decoder: D,
        cancel: CancellationToken,
        deadline: Instant,
    ) -> EventStream {
        Drive {
            body: Some(response.into_stream()),
            decoder: BodyDecoder::new(decoder, self.http.max_response_bytes),
            ready: Vec::new(),
            pending_err: None,
            idle: self.http.idle_timeout,
            deadline,
            wait: None,
            timer: None,
            cancel,
            cancelled: None,
            secret: self.secret.clone(),
        }
        .boxed()
    }
}

/// The event stream of one streamed response: reads body chunks (within the idle and call
/// timeouts, until cancelled), parses them as SSE and decodes them with `D`.
struct Drive<D> {
    /// `None` once the body is over (or failed).
    body: Option<BodyStream>,
    decoder: BodyDecoder<D>,
    /// Decoded events not yet handed out, last first.
    ready: Vec<StreamEvent>,
    /// An error to hand out after the events before it.
    pending_err: Option<ProviderError>,
    idle: Duration,
    deadline: Instant,
    /// The current wait for a chunk: when it times out, and whether that is the call's
    /// deadline (rather than the idle timeout).
    wait: Option<(Instant, bool)>,
    /// Armed only when a chunk is not there at once.
    timer: Option<Pin<Box<Sleep>>>,
    cancel: CancellationToken,
    cancelled: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
    secret: Arc<str>,
}

impl<D: WireDecoder> Drive<D> {
    fn feed(&mut self, bytes: &[u8]) -> Result<(), ProviderError> {
        self.decoder.feed(bytes, &mut self.ready)
    }

    fn end(&mut self) -> Result<(), ProviderError> {
        self.decoder.end(&mut self.ready)
    }

    /// Whether the call was cancelled; registers for the wake-up otherwise.
    fn poll_cancelled(&mut self, cx: &mut Context<'_>) -> bool {
        if self.cancel.is_cancelled() {
            return true;
        }
        let cancel = &self.cancel;
        self.cancelled
            .get_or_insert_with(|| Box::pin(cancel.clone().cancelled_owned()))
            .as_mut()
            .poll(cx)
            .is_ready()
    }

    /// Whether the current wait for a chunk has timed out; arms the timer otherwise. A wait
    /// starts at its first poll that finds no chunk ready.
    fn poll_timed_out(&mut self, cx: &mut Context<'_>) -> Option<ProviderError> {
        let (until, whole_call) = *self.wait.get_or_insert_with(|| {
            let now = Instant::now();
            if self.deadline <= now + self.idle {
                (self.deadline, true)
            } else {
                (now + self.idle, false)
            }
        });
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(until)));
        if timer.deadline() != until {
            timer.as_mut().reset(until);
        }
        timer.as_mut().poll(cx).is_ready().then(|| {
            if whole_call {
                ProviderError::Timeout("the model call took longer than the call timeout".into())
            } else {
                ProviderError::Timeout(format!(
                    "the stream was idle for {} s (stream idle timeout)",
                    self.idle.as_secs_f64()
                ))
            }
        })
    }
}

// Nothing in a `Drive` is pinned in place (the body, timer and cancellation futures are boxed).
impl<D> Unpin for Drive<D> {}

impl<D: WireDecoder> Stream for Drive<D> {
    type Item = Result<StreamEvent, ProviderError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(event) = this.ready.pop() {
                return Poll::Ready(Some(Ok(event)));
            }
            if let Some(err) = this.pending_err.take() {
                this.body = None;
                return Poll::Ready(Some(Err(errors::redact_error(err, &this.secret))));
            }
            let Some(body) = this.body.as_mut() else {
                return Poll::Ready(None);
            };
            if this.cancel.is_cancelled() {
                this.pending_err = Some(ProviderError::Cancelled);
                continue;
            }
            let result = match body.as_mut().poll_next(cx) {
                Poll::Pending => {
                    if this.poll_cancelled(cx) {
                        this.pending_err = Some(ProviderError::Cancelled);
                        continue;
                    }
                    match this.poll_timed_out(cx) {
                        Some(err) => {
                            this.pending_err = Some(err);
                            continue;
                        }
                        None => return Poll::Pending,
                    }
                }
                Poll::Ready(Some(Ok(bytes))) => this.feed(&bytes),
                Poll::Ready(Some(Err(e))) => Err(e),
                Poll::Ready(None) => {
                    this.body = None;
                    this.end()
                }
            };
            this.wait = None;
            // Events come out first in, first out.
            this.ready.reverse();
            if let Err(err) = result {
                this.pending_err = Some(err);
            }
        }
    }
}

/// Parses an endpoint URL once, at construction.
pub(crate) fn parse_url(url: &str) -> Result<Url, ProviderError> {
    Url::parse(url).map_err(|e| ProviderError::Config(format!("invalid provider URL {url:?}: {e}")))
}
