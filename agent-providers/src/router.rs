//! Fallback routing: a primary route plus fallback routes, tried in order on retryable errors,
//! but only before the first content event of the stream.

use std::sync::Arc;

use agent_core::{CancellationToken, EventStream, ModelRequest, Provider, ProviderError, StreamEvent, async_trait};
use futures::StreamExt;

/// A provider made of routes (each a provider with its model), tried in order.
///
/// A route is abandoned for the next one when it fails with a retryable error (rate limit,
/// 5xx, timeout, transport; see [`ProviderError::is_retryable`]) **before** its stream has
/// produced any content (text, reasoning, tool call or finish). Once content has started, a
/// failure surfaces as it is: an answer is never spliced from two models. Each adapter still
/// does its own retries first. The stream starts with [`StreamEvent::Served`] naming the route
/// that serves the call, and the choice is logged with `tracing`.
///
/// ```
/// use agent_providers::{FallbackRouter, ProviderConfig, ProviderKind};
/// let primary = ProviderConfig::new(ProviderKind::Anthropic, "claude-sonnet-4-5", "k1").build().unwrap();
/// let fallback = ProviderConfig::new(ProviderKind::OpenAiCompatible, "gpt-4.1", "k2").build().unwrap();
/// let router = FallbackRouter::new(primary).with_fallback(fallback);
/// assert_eq!(router.routes().collect::<Vec<_>>(), [("anthropic", "claude-sonnet-4-5"), ("openai-compatible", "gpt-4.1")]);
/// ```
#[derive(Clone)]
pub struct FallbackRouter {
    routes: Vec<Arc<dyn Provider>>,
}

impl std::fmt::Debug for FallbackRouter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FallbackRouter")
            .field("routes", &self.routes().collect::<Vec<_>>())
            .finish()
    }
}

impl FallbackRouter {
    /// A router with only its primary route.
    pub fn new(primary: Arc<dyn Provider>) -> Self {
        FallbackRouter { routes: vec![primary] }
    }

    /// Adds a fallback route, tried after the ones already added.
    pub fn with_fallback(mut self, route: Arc<dyn Provider>) -> Self {
        self.routes.push(route);
        self
    }

    /// `(provider id, model)` of every route, in order.
    pub fn routes(&self) -> impl Iterator<Item = (&str, &str)> {
        self.routes.iter().map(|r| (r.id(), r.model()))
    }
}

/// Whether an event commits the call to its route.
fn is_content(event: &StreamEvent) -> bool {
    !matches!(event, StreamEvent::Usage { .. } | StreamEvent::Served { .. })
}

#[async_trait]
impl Provider for FallbackRouter {
    fn id(&self) -> &str {
        "router"
    }

    fn model(&self) -> &str {
        self.routes.first().map(|r| r.model()).unwrap_or_default()
    }

    fn max_input_tokens(&self) -> Option<u64> {
        // Compaction must fit the smallest window any route may serve with.
        self.routes.iter().filter_map(|r| r.max_input_tokens()).min()
    }

    fn accepts_images(&self) -> Option<bool> {
        // Any route may serve a request: images only when every one is known to take them.
        let mut all = Some(true);
        for route in &self.routes {
            match route.accepts_images() {
                Some(false) => return Some(false),
                None => all = None,
                Some(true) => {}
            }
        }
        if self.routes.is_empty() { None } else { all }
    }

    async fn stream(&self, request: &ModelRequest, cancel: CancellationToken) -> Result<EventStream, ProviderError> {
        let last = self.routes.len().saturating_sub(1);
        let mut last_error = ProviderError::Config("the router has no routes".into());
        for (i, route) in self.routes.iter().enumerate() {
            if cancel.is_cancelled() {
                return Err(ProviderError::Cancelled);
            }
            let (provider, model) = (route.id().to_owned(), route.model().to_owned());
            let mut stream = match route.stream(request, cancel.clone()).await {
                Ok(stream) => stream,
                Err(e) if e.is_retryable() && i < last => {
                    tracing::warn!(route = i, %provider, %model, error = %e, "route failed before content; falling back");
                    last_error = e;
                    continue;
                }
                Err(e) => return Err(e),
            };
            let mut buffered = vec![StreamEvent::Served {
                provider: provider.clone(),
                model: model.clone(),
            }];
            let mut fell_back = false;
            while let Some(item) = stream.next().await {
                match item {
                    Ok(event) => {
                        let commit = is_content(&event);
                        buffered.push(event);
                        if commit {
                            break;
                        }
                    }
                    Err(e) if e.is_retryable() && i < last => {
                        tracing::warn!(route = i, %provider, %model, error = %e, "stream failed before content; falling back");
                        last_error = e;
                        fell_back = true;
                        break;
                    }
                    Err(e) => return Err(e),
                }
            }
            if fell_back {
                continue;
            }
            tracing::info!(route = i, %provider, %model, "model call served");
            return Ok(futures::stream::iter(buffered.into_iter().map(Ok))
                .chain(stream)
                .boxed());
        }
        Err(last_error)
    }
}
