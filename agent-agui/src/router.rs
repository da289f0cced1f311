//! The HTTP endpoint: `POST /` takes a `RunAgentInput` and answers `text/event-stream`, one
//! AG-UI event per SSE `data:` line.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;

use agent_core::{Agent, Run, RunEvents};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures::{Stream, StreamExt};

use crate::events::AguiEvent;
use crate::input::RunAgentInput;
use crate::mapping::EventMapper;
use crate::start::start;
use crate::started::{Running, Started};

/// The largest request body accepted by default (1 MiB); larger ones get 413.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;

/// The AG-UI endpoint over one agent. The agent should have a store (a `MemoryStore` at
/// least): a thread's session is looked up there on every request.
#[derive(Clone)]
pub struct AguiEndpoint {
    agent: Agent,
    max_body_bytes: usize,
}

impl std::fmt::Debug for AguiEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AguiEndpoint")
            .field("max_body_bytes", &self.max_body_bytes)
            .finish()
    }
}

impl AguiEndpoint {
    /// The endpoint over `agent`, with the default body limit.
    pub fn new(agent: Agent) -> Self {
        AguiEndpoint {
            agent,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }

    /// Sets the largest request body accepted, in bytes.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// The axum router: `POST /`. Nest it (`Router::nest`) to serve it under another path.
    pub fn router(self) -> Router {
        let limit = self.max_body_bytes;
        Router::new()
            .route("/", post(run_agent))
            .layer(DefaultBodyLimit::max(limit))
            .with_state(Arc::new(self))
    }
}

/// [`AguiEndpoint::new`]`(agent).router()`.
pub fn router(agent: Agent) -> Router {
    AguiEndpoint::new(agent).router()
}

async fn run_agent(State(endpoint): State<Arc<AguiEndpoint>>, body: Bytes) -> Response {
    let input = match RunAgentInput::parse(&body) {
        Ok(input) => input,
        Err(e) => return (StatusCode::BAD_REQUEST, e.0).into_response(),
    };
    match start(&endpoint.agent, &input).await {
        Ok(Started::Run(running)) => {
            let Running { run, mapper } = *running;
            sse(Streaming::stream(run, mapper))
        }
        Ok(Started::Events(events)) => sse(futures::stream::iter(events)),
        Err(refusal) => (refusal.status, refusal.message).into_response(),
    }
}

fn sse(events: impl Stream<Item = AguiEvent> + Send + 'static) -> Response {
    let frames = events.filter_map(|event| async move {
        match serde_json::to_string(&event) {
            Ok(json) => Some(Ok::<_, Infallible>(Event::default().data(json))),
            Err(e) => {
                tracing::warn!("dropping an AG-UI event that does not serialize: {e}");
                None
            }
        }
    });
    Sse::new(frames).keep_alive(KeepAlive::default()).into_response()
}

/// Cancels the run when the response is dropped before the run ended (the client aborted or
/// went away).
struct CancelOnDrop(Run);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if !self.0.is_finished() {
            tracing::debug!(run = self.0.id(), "AG-UI client went away: cancelling the run");
            self.0.cancel();
        }
    }
}

/// A run's events, mapped.
struct Streaming {
    events: RunEvents,
    mapper: EventMapper,
    queue: VecDeque<AguiEvent>,
    ended: bool,
    _run: CancelOnDrop,
}

impl Streaming {
    fn stream(run: Run, mapper: EventMapper) -> impl Stream<Item = AguiEvent> + Send + 'static {
        let state = Streaming {
            events: run.events(),
            mapper,
            queue: VecDeque::new(),
            ended: false,
            _run: CancelOnDrop(run),
        };
        futures::stream::unfold(state, |mut s| async move {
            loop {
                if let Some(event) = s.queue.pop_front() {
                    return Some((event, s));
                }
                if s.ended {
                    return None;
                }
                match s.events.next().await {
                    Some(event) => s.queue.extend(s.mapper.map(&event.kind)),
                    None => {
                        s.queue.extend(s.mapper.finish());
                        s.ended = true;
                    }
                }
            }
        })
    }
}
