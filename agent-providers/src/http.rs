//! The HTTP clients under the transport: reqwest for HTTPS endpoints and proxies, and a lean
//! hyper client (the connection pool reqwest itself wraps, without its per-request layers)
//! for plain-HTTP endpoints reached directly: the local model servers (Ollama, vLLM,
//! llama.cpp, LM Studio) where the client's CPU time per call is what limits throughput.
//!
//! Both send the same request (method, headers, body) with the same connection settings, and
//! their errors map to the same [`ProviderError`]s with the same texts.

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use agent_core::ProviderError;
use bytes::{Bytes, BytesMut};
use futures::{Stream, StreamExt};
use http_body_util::{BodyDataStream, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use reqwest::Url;
use reqwest::header::{ACCEPT, HeaderMap, HeaderValue, USER_AGENT};

use crate::HttpConfig;

/// Response body chunks, errors already mapped.
pub(crate) type BodyStream = Pin<Box<dyn Stream<Item = Result<Bytes, ProviderError>> + Send>>;

/// Sends POST requests with a fixed set of headers.
#[derive(Clone)]
pub(crate) struct HttpClient {
    reqwest: Arc<LazyReqwest>,
    /// `None` when a proxy is configured (every request then goes through reqwest).
    plain: Option<Plain>,
}

/// The reqwest client, built when first needed if the endpoint is plain HTTP: building it sets
/// up TLS (root certificates, the crypto provider), about half a megabyte of code and data a
/// client of a local server would otherwise keep resident without ever using it.
struct LazyReqwest {
    client: OnceLock<reqwest::Client>,
    headers: HeaderMap,
    user_agent: HeaderValue,
    connect_timeout: Duration,
    proxy: Option<String>,
}

impl LazyReqwest {
    fn get(&self) -> Result<&reqwest::Client, ProviderError> {
        if let Some(client) = self.client.get() {
            return Ok(client);
        }
        let built = self.build()?;
        // Another request may have built one meanwhile: either will do.
        Ok(self.client.get_or_init(|| built))
    }

    fn build(&self) -> Result<reqwest::Client, ProviderError> {
        let mut builder = reqwest::Client::builder()
            .default_headers(self.headers.clone())
            .connect_timeout(self.connect_timeout)
            .user_agent(self.user_agent.clone())
            .tcp_nodelay(true)
            // reqwest's own retry layer only retries HTTP/2 and HTTP/3 protocol NACKs, which an
            // HTTP/1-only client never sees; with no retries allowed it also stops cloning every
            // request's headers in case of one. The transport retries per `HttpConfig`.
            .retry(reqwest::retry::never().max_retries_per_request(0))
            .no_proxy();
        if let Some(proxy) = &self.proxy {
            let proxy = reqwest::Proxy::all(proxy.as_str())
                .map_err(|e| ProviderError::Config(format!("invalid proxy URL {proxy:?}: {e}")))?;
            builder = builder.proxy(proxy);
        }
        builder
            .build()
            .map_err(|e| ProviderError::Config(format!("could not build the HTTP client: {e}")))
    }
}

#[derive(Clone)]
struct Plain {
    client: Client<TimedConnector, Full<Bytes>>,
    /// What reqwest sends by default: `accept: */*`, the adapter's headers, `user-agent`.
    headers: HeaderMap,
}

impl fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClient")
            .field("reqwest", &self.reqwest.client.get())
            .field("plain_http", &self.plain.is_some())
            .finish()
    }
}

// reqwest's defaults, which the plain client copies.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);
const TCP_KEEPALIVE: Duration = Duration::from_secs(15);
const TCP_KEEPALIVE_RETRIES: u32 = 3;
const TCP_USER_TIMEOUT: Duration = Duration::from_secs(30);

impl HttpClient {
    /// A client whose every request carries `headers`, for requests to `endpoint` (others
    /// work too).
    pub(crate) fn new(http: &HttpConfig, headers: HeaderMap, endpoint: &Url) -> Result<Self, ProviderError> {
        let user_agent = HeaderValue::from_str(&http.user_agent)
            .map_err(|_| ProviderError::Config(format!("invalid user agent {:?}", http.user_agent)))?;
        let reqwest = Arc::new(LazyReqwest {
            client: OnceLock::new(),
            headers: headers.clone(),
            user_agent: user_agent.clone(),
            connect_timeout: http.connect_timeout,
            proxy: http.proxy.clone(),
        });
        let plain = http.proxy.is_none().then(|| {
            // Like reqwest: a timeout on the TCP connect, and one on the whole connection
            // (name resolution included).
            let mut connector = HttpConnector::new();
            connector.set_connect_timeout(Some(http.connect_timeout));
            connector.set_nodelay(true);
            connector.set_keepalive(Some(TCP_KEEPALIVE));
            connector.set_keepalive_interval(Some(TCP_KEEPALIVE));
            connector.set_keepalive_retries(Some(TCP_KEEPALIVE_RETRIES));
            #[cfg(any(target_os = "android", target_os = "fuchsia", target_os = "linux"))]
            connector.set_tcp_user_timeout(Some(TCP_USER_TIMEOUT));
            let client = Client::builder(TokioExecutor::new())
                .pool_timer(TokioTimer::new())
                .pool_idle_timeout(POOL_IDLE_TIMEOUT)
                .build(TimedConnector {
                    inner: connector,
                    timeout: http.connect_timeout,
                });
            let mut all = HeaderMap::with_capacity(headers.len() + 2);
            all.insert(ACCEPT, HeaderValue::from_static("*/*"));
            for (name, value) in &headers {
                all.insert(name, value.clone());
            }
            all.insert(USER_AGENT, user_agent);
            Plain { client, headers: all }
        });
        let client = HttpClient { reqwest, plain };
        // Whatever reqwest serves reports a bad proxy or a TLS setup failure here, not at the
        // first call.
        if client.plain_for(endpoint).is_none() {
            client.reqwest.get()?;
        }
        Ok(client)
    }

    /// The plain client, when it serves `url`: plain HTTP, no proxy, and nothing that reqwest
    /// would handle (it turns credentials in the URL into basic auth and drops a fragment).
    fn plain_for(&self, url: &Url) -> Option<&Plain> {
        self.plain.as_ref().filter(|_| {
            url.scheme() == "http" && url.username().is_empty() && url.password().is_none() && url.fragment().is_none()
        })
    }

    /// POSTs `body` to `url` and returns the response head.
    pub(crate) async fn post(&self, url: &Url, body: Bytes) -> Result<Response, ProviderError> {
        match self.plain_for(url) {
            Some(plain) => plain.post(url, body).await,
            None => self.post_via_reqwest(url, body).await,
        }
    }

    /// POSTs through reqwest (HTTPS, proxies, URLs with credentials or a fragment).
    async fn post_via_reqwest(&self, url: &Url, body: Bytes) -> Result<Response, ProviderError> {
        self.reqwest
            .get()?
            .post(url.clone())
            .body(body)
            .send()
            .await
            .map(Response::Reqwest)
            .map_err(map_reqwest)
    }
}

impl Plain {
    async fn post(&self, url: &Url, body: Bytes) -> Result<Response, ProviderError> {
        let uri = hyper::Uri::try_from(url.as_str())
            .map_err(|e| ProviderError::Config(format!("invalid provider URL {:?}: {e}", url.as_str())))?;
        let mut request = hyper::Request::new(Full::new(body));
        *request.method_mut() = hyper::Method::POST;
        *request.uri_mut() = uri;
        *request.headers_mut() = self.headers.clone();
        match self.client.request(request).await {
            Ok(response) => Ok(Response::Plain(response)),
            Err(e) => {
                let text = chain(format!("error sending request for url ({url})"), &e);
                Err(if timed_out(&e) {
                    ProviderError::Timeout(text)
                } else if e.is_connect() {
                    ProviderError::Transport(format!("could not connect: {text}"))
                } else {
                    ProviderError::Transport(text)
                })
            }
        }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// An HTTP connector with a timeout on the whole connection, name resolution included (the
/// error reads like reqwest's: `operation timed out`).
#[derive(Clone)]
struct TimedConnector {
    inner: HttpConnector,
    timeout: Duration,
}

impl tower_service::Service<hyper::Uri> for TimedConnector {
    type Response = <HttpConnector as tower_service::Service<hyper::Uri>>::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, dst: hyper::Uri) -> Self::Future {
        let connect = self.inner.call(dst);
        let timeout = self.timeout;
        Box::pin(async move {
            match tokio::time::timeout(timeout, connect).await {
                Ok(result) => result.map_err(Into::into),
                Err(_) => Err(Box::new(io::Error::new(io::ErrorKind::TimedOut, "operation timed out")) as BoxError),
            }
        })
    }
}

/// A response whose head has arrived.
pub(crate) enum Response {
    Reqwest(reqwest::Response),
    Plain(hyper::Response<Incoming>),
}

impl Response {
    pub(crate) fn status(&self) -> u16 {
        match self {
            Response::Reqwest(r) => r.status().as_u16(),
            Response::Plain(r) => r.status().as_u16(),
        }
    }

    pub(crate) fn headers(&self) -> &HeaderMap {
        match self {
            Response::Reqwest(r) => r.headers(),
            Response::Plain(r) => r.headers(),
        }
    }

    /// The body, or its first `limit` bytes and `true` when it is longer (the rest is never
    /// read: a server cannot make the client hold more).
    pub(crate) async fn bytes_up_to(self, limit: usize) -> Result<(Bytes, bool), ProviderError> {
        let mut stream = self.into_stream();
        let mut body = BytesMut::new();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk?;
            let room = limit.saturating_sub(body.len());
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                return Ok((body.freeze(), true));
            }
            body.extend_from_slice(&chunk);
        }
        Ok((body.freeze(), false))
    }

    /// The body, chunk by chunk.
    pub(crate) fn into_stream(self) -> BodyStream {
        match self {
            Response::Reqwest(r) => r.bytes_stream().map(|r| r.map_err(map_reqwest)).boxed(),
            Response::Plain(r) => BodyDataStream::new(r.into_body())
                .map(|r| r.map_err(|e| ProviderError::Malformed(chain("error decoding response body".into(), &e))))
                .boxed(),
        }
    }
}

/// Maps a reqwest error to a provider error kind.
pub(crate) fn map_reqwest(e: reqwest::Error) -> ProviderError {
    let detail = chain(e.to_string(), &e);
    if e.is_timeout() {
        ProviderError::Timeout(detail)
    } else if e.is_connect() {
        ProviderError::Transport(format!("could not connect: {detail}"))
    } else if e.is_decode() {
        ProviderError::Malformed(detail)
    } else {
        ProviderError::Transport(detail)
    }
}

/// `text` followed by the texts of `e`'s sources (from `e`'s own, for an error not already
/// shown in `text`) that it does not already contain, joined with `: `.
fn chain(mut text: String, e: &(dyn std::error::Error + 'static)) -> String {
    let mut next = if text == e.to_string() { e.source() } else { Some(e) };
    while let Some(s) = next {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        next = s.source();
    }
    text
}

/// Whether `e` or a source of it is a timeout (what reqwest's `is_timeout` checks).
fn timed_out(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(e);
    while let Some(err) = next {
        if err.downcast_ref::<hyper::Error>().is_some_and(hyper::Error::is_timeout)
            || err
                .downcast_ref::<io::Error>()
                .is_some_and(|e| e.kind() == io::ErrorKind::TimedOut)
        {
            return true;
        }
        next = err.source();
    }
    false
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    fn client() -> HttpClient {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer k"));
        headers.insert("x-extra", HeaderValue::from_static("1"));
        let endpoint = Url::parse("http://127.0.0.1/v1/chat/completions").unwrap();
        HttpClient::new(&HttpConfig::default(), headers, &endpoint).unwrap()
    }

    /// The same POST through reqwest.
    async fn via_reqwest(client: &HttpClient, url: &Url, body: Bytes) -> Result<Response, ProviderError> {
        client.post_via_reqwest(url, body).await
    }

    /// A one-connection server that records the request head and answers `reply`.
    async fn serve_once(reply: &'static [u8]) -> (Url, tokio::task::JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = Url::parse(&format!(
            "http://{}/v1/chat/completions",
            listener.local_addr().unwrap()
        ))
        .unwrap();
        let task = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = stream.read(&mut buf).await.unwrap();
                request.extend_from_slice(&buf[..n]);
            }
            stream.write_all(reply).await.unwrap();
            stream.shutdown().await.ok();
            String::from_utf8_lossy(&request).into_owned()
        });
        (url, task)
    }

    fn head_lines(request: &str) -> Vec<String> {
        let head = request.split("\r\n\r\n").next().unwrap();
        let mut lines: Vec<String> = head.lines().map(str::to_ascii_lowercase).collect();
        lines.sort();
        lines
    }

    #[tokio::test]
    async fn both_clients_send_the_same_request() {
        let client = client();
        let reply: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
        let (url, server) = serve_once(reply).await;
        let plain = client.post(&url, Bytes::from_static(b"{}")).await.unwrap();
        assert!(matches!(plain, Response::Plain(..)));
        assert_eq!(plain.bytes_up_to(2).await.unwrap(), (Bytes::from_static(b"ok"), false));
        let plain_head = server.await.unwrap();
        let (url, server) = serve_once(reply).await;
        let via = via_reqwest(&client, &url, Bytes::from_static(b"{}")).await.unwrap();
        assert_eq!(via.bytes_up_to(1).await.unwrap(), (Bytes::from_static(b"o"), true));
        let reqwest_head = server.await.unwrap();
        // The same lines but for the port in `host`.
        let strip_port = |lines: Vec<String>| {
            lines
                .into_iter()
                .map(|l| if l.starts_with("host:") { "host".into() } else { l })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            strip_port(head_lines(&plain_head)),
            strip_port(head_lines(&reqwest_head))
        );
        assert!(plain_head.contains("user-agent: agent-providers/"), "{plain_head}");
    }

    #[tokio::test]
    async fn credentials_in_the_url_go_through_reqwest() {
        let client = client();
        assert!(
            client.reqwest.client.get().is_none(),
            "built before a request needed it"
        );
        let (url, server) = serve_once(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok").await;
        let mut url = url;
        url.set_username("user").unwrap();
        let response = client.post(&url, Bytes::new()).await.unwrap();
        assert!(matches!(response, Response::Reqwest(_)));
        let head = server.await.unwrap();
        assert!(head.to_ascii_lowercase().contains("authorization: basic"), "{head}");
    }

    #[test]
    fn an_https_endpoint_sets_up_tls_at_once() {
        let endpoint = Url::parse("https://api.example.com/v1/chat/completions").unwrap();
        let client = HttpClient::new(&HttpConfig::default(), HeaderMap::new(), &endpoint).unwrap();
        assert!(client.reqwest.client.get().is_some());
    }

    #[tokio::test]
    async fn errors_read_alike() {
        let client = client();
        // Nothing listens.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = Url::parse(&format!("http://127.0.0.1:{port}/v1/chat/completions")).unwrap();
        let plain = client.post(&url, Bytes::new()).await.err().unwrap();
        let via = via_reqwest(&client, &url, Bytes::new()).await.err().unwrap();
        assert_eq!((plain.kind(), plain.to_string()), (via.kind(), via.to_string()));
        assert!(plain.to_string().contains("could not connect"), "{plain}");

        // A body cut short, read whole and as a stream.
        let cut: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\ndata: {}\n\n";
        let mut errors = Vec::new();
        for whole in [true, false] {
            let mut texts = Vec::new();
            for use_reqwest in [false, true] {
                let (url, _server) = serve_once(cut).await;
                let response = if use_reqwest {
                    via_reqwest(&client, &url, Bytes::new()).await.unwrap()
                } else {
                    client.post(&url, Bytes::new()).await.unwrap()
                };
                let err = if whole {
                    response.bytes_up_to(usize::MAX).await.err().unwrap()
                } else {
                    let mut stream = response.into_stream();
                    let mut last = None;
                    while let Some(item) = stream.next().await {
                        if let Err(e) = item {
                            last = Some(e);
                        }
                    }
                    last.unwrap()
                };
                texts.push((err.kind(), err.to_string().replace(url.as_str(), "URL")));
            }
            assert_eq!(texts[0], texts[1]);
            errors.push(texts.remove(0));
        }
        assert!(errors.iter().all(|(kind, _)| *kind == "malformed"), "{errors:?}");
    }
}
