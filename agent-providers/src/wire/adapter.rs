//! The generic HTTP adapter every wire plugs into: one [`Provider`] implementation over any [`Wire`]. It builds the
//! headers and endpoint, posts the encoded request through the [`Transport`] (timeouts,
//! retries, cancellation, byte caps) and hands the response to the wire's decoder or parser.

use agent_core::{CancellationToken, EventStream, ModelRequest, Provider, ProviderError, async_trait};
use bytes::Bytes;
use futures::StreamExt;
use reqwest::Url;
use reqwest::header::{CONTENT_TYPE, HeaderValue};
use tokio::time::Instant;

use crate::config::{ProviderConfig, header_map};
use crate::transport::{Transport, parse_url};
use crate::wire::{FixedUrl, Wire};

/// A provider adapter speaking wire format `W` over HTTP. Use it through its aliases
/// ([`OpenAiCompatible`](crate::OpenAiCompatible), [`OpenAiResponses`](crate::OpenAiResponses),
/// [`Anthropic`](crate::Anthropic), [`Gemini`](crate::Gemini)).
#[derive(Debug, Clone)]
pub struct HttpProvider<W> {
    pub(crate) model: String,
    url: Url,
    transport: Transport,
    pub(crate) streaming: bool,
    max_input_tokens: Option<u64>,
    pub(crate) wire: W,
}

impl<W: Wire> HttpProvider<W> {
    /// Builds the adapter from a configuration (its `kind` is not checked).
    pub fn new(config: &ProviderConfig) -> Result<Self, ProviderError> {
        let wire = W::from_config(config);
        let mut headers = header_map(&config.headers)?;
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let key = config.api_key.expose();
        wire.auth_headers(key, &mut headers)?;
        let model = wire.model_name(&config.model);
        let url = parse_url(&wire.url(&model, config.streaming))?;
        Ok(HttpProvider {
            transport: Transport::new(config.http.clone(), key, headers, &url)?,
            url,
            model,
            streaming: config.streaming,
            max_input_tokens: config.max_input_tokens,
            wire,
        })
    }

    /// The same adapter (sharing its connection pool) for another model, its endpoint
    /// recomputed.
    pub(crate) fn retarget(&self, model: impl Into<String>) -> Result<Self, ProviderError> {
        let mut other = self.clone();
        other.model = self.wire.model_name(&model.into());
        other.refresh_url()?;
        Ok(other)
    }

    /// Recomputes the endpoint after the wire's settings or the model changed.
    pub(crate) fn refresh_url(&mut self) -> Result<(), ProviderError> {
        self.url = parse_url(&self.wire.url(&self.model, self.streaming))?;
        Ok(())
    }
}

impl<W: FixedUrl> HttpProvider<W> {
    /// The endpoint this adapter posts to.
    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    /// The same adapter (sharing its connection pool) for another model.
    pub fn with_model(&self, model: impl Into<String>) -> Self {
        let mut other = self.clone();
        other.model = self.wire.model_name(&model.into());
        other
    }
}

#[async_trait]
impl<W: Wire> Provider for HttpProvider<W> {
    fn id(&self) -> &str {
        W::ID
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn max_input_tokens(&self) -> Option<u64> {
        self.max_input_tokens
    }

    fn accepts_images(&self) -> Option<bool> {
        self.wire.accepts_images(&self.model)
    }

    async fn stream(&self, request: &ModelRequest, cancel: CancellationToken) -> Result<EventStream, ProviderError> {
        let deadline = Instant::now() + self.transport.http.call_timeout;
        let body = self.wire.encode_request(&self.model, request, self.streaming)?;
        let map_error =
            |status: u16, headers: &_, body: &[u8], cut_at| self.wire.map_error(status, headers, body, cut_at);
        let response = self
            .transport
            .post(&self.url, Bytes::from(body), &cancel, deadline, &map_error)
            .await?;
        let limits = self.transport.http.limits();
        if self.streaming {
            let decoder = self.wire.stream_decoder(limits);
            return Ok(self.transport.drive(response, decoder, cancel, deadline));
        }
        let body = self.transport.read_body(response, &cancel, deadline).await?;
        let events = self
            .wire
            .parse_response(&body, limits)
            .map_err(|e| self.transport.redact(e))?;
        Ok(futures::stream::iter(events.into_iter().map(Ok)).boxed())
    }
}
