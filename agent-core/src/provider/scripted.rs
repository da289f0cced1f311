//! A provider that replays a script instead of calling a model.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use futures::stream;
use tokio_util::sync::CancellationToken;

use super::{ANSWER_TOOL, EventStream, FinishReason, ModelRequest, Provider, ProviderError, StreamEvent, Usage};
use crate::message::Role;

/// One answer of a [`ScriptedProvider`]: text, optional reasoning and tool calls.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScriptedReply {
    /// Answer text (streamed word by word).
    pub text: String,
    /// Reasoning text, streamed before the answer.
    pub reasoning: Option<String>,
    /// Tool calls as (name, JSON arguments text). The text is sent as is, so a script can
    /// produce malformed arguments on purpose.
    pub tool_calls: Vec<(String, String)>,
    /// Usage to report; `None` reports an estimate (4 characters per token).
    pub usage: Option<Usage>,
}

impl ScriptedReply {
    /// A plain text answer.
    pub fn text(text: impl Into<String>) -> Self {
        ScriptedReply {
            text: text.into(),
            ..Default::default()
        }
    }

    /// A reply calling one tool with JSON arguments.
    pub fn tool_call(name: impl Into<String>, arguments: serde_json::Value) -> Self {
        ScriptedReply::default().with_call(name, arguments)
    }

    /// Adds a tool call with JSON arguments.
    pub fn with_call(mut self, name: impl Into<String>, arguments: serde_json::Value) -> Self {
        self.tool_calls.push((name.into(), arguments.to_string()));
        self
    }

    /// Adds a tool call whose arguments text is sent verbatim (possibly malformed).
    pub fn with_raw_call(mut self, name: impl Into<String>, arguments: impl Into<String>) -> Self {
        self.tool_calls.push((name.into(), arguments.into()));
        self
    }

    /// A typed answer: the value's JSON as the answer text (what a provider's structured-output
    /// mode returns).
    pub fn json(value: serde_json::Value) -> Self {
        ScriptedReply::text(value.to_string())
    }

    /// A typed answer given through the answer tool ([`ANSWER_TOOL`]), the way adapters without a
    /// structured-output mode usable with tools (Anthropic) return it. For a schema that is not an
    /// object schema, pass `{"value": answer}`.
    pub fn answer_tool(arguments: serde_json::Value) -> Self {
        ScriptedReply::tool_call(ANSWER_TOOL, arguments)
    }

    /// Sets the answer text.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text = text.into();
        self
    }

    /// Sets the usage the reply reports (what a cost is computed from).
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(usage);
        self
    }

    /// Sets reasoning text.
    pub fn with_reasoning(mut self, reasoning: impl Into<String>) -> Self {
        self.reasoning = Some(reasoning.into());
        self
    }
}

/// What a [`ScriptedProvider`] does for one model call.
#[derive(Debug, Clone)]
pub enum ScriptStep {
    /// Stream a reply.
    Reply(ScriptedReply),
    /// Fail the call before anything streams.
    Error(ProviderError),
    /// Stream a reply's text, then fail mid-stream with the error.
    FailAfter(ScriptedReply, ProviderError),
    /// Wait inside the stream, then do the inner step. Cancelling the call ends the wait.
    Delay(Duration, Box<ScriptStep>),
    /// Stream these events exactly.
    Events(Vec<Result<StreamEvent, ProviderError>>),
    /// Stream the given text, then never finish (until the call is cancelled or dropped).
    Hang(String),
}

impl From<ScriptedReply> for ScriptStep {
    fn from(reply: ScriptedReply) -> Self {
        ScriptStep::Reply(reply)
    }
}

type ScriptFn = dyn Fn(&ModelRequest) -> ScriptStep + Send + Sync;

enum Source {
    Queue(Mutex<VecDeque<ScriptStep>>),
    Function(Box<ScriptFn>),
}

/// **Not a language model.** A [`Provider`] that replays a fixed script of responses (text,
/// tool calls, errors, delays, streams that never end), one step per model call, through the
/// same streaming interface real adapters use.
///
/// It exists so that tests, benchmarks and the offline demo run without a network or an API
/// key. Its answers do not depend on the conversation unless you build it with
/// [`ScriptedProvider::from_fn`], which lets your own function choose each step from the
/// request. When a queued script runs out, the call fails with [`ProviderError::BadRequest`]
/// saying so.
///
/// ```
/// use agent_core::{ScriptedProvider, ScriptedReply};
/// let provider = ScriptedProvider::new([
///     ScriptedReply::tool_call("echo", serde_json::json!({"text": "hi"})).into(),
///     ScriptedReply::text("done").into(),
/// ]);
/// # let _ = provider;
/// ```
pub struct ScriptedProvider {
    source: Source,
    next_call_id: AtomicU64,
    calls: AtomicU64,
    live_streams: Arc<AtomicUsize>,
    recorded: Option<Mutex<Vec<ModelRequest>>>,
    accepts_images: Option<bool>,
}

impl ScriptedProvider {
    /// Replays `steps` in order, one per model call.
    pub fn new(steps: impl IntoIterator<Item = ScriptStep>) -> Self {
        Self::with_source(Source::Queue(Mutex::new(steps.into_iter().collect())))
    }

    /// Lets `choose` pick each step from the request (for example: call a tool until its
    /// result is in the history, then answer).
    pub fn from_fn(choose: impl Fn(&ModelRequest) -> ScriptStep + Send + Sync + 'static) -> Self {
        Self::with_source(Source::Function(Box::new(choose)))
    }

    /// Calls `tool` with `arguments` until `times` of its results follow the last user
    /// message, then answers `answer`: every turn is `times + 1` model calls and `times` tool
    /// calls (the shape of the loop-overhead benchmarks).
    pub fn repeat_tool_then_answer(
        tool: impl Into<String>,
        arguments: serde_json::Value,
        times: usize,
        answer: impl Into<String>,
    ) -> Self {
        let tool = tool.into();
        let answer = answer.into();
        Self::from_fn(move |request: &ModelRequest| {
            let results = request
                .messages
                .iter()
                .rev()
                .take_while(|m| m.role != Role::User)
                .filter(|m| m.role == Role::Tool)
                .count();
            if results < times {
                ScriptStep::Reply(ScriptedReply::tool_call(tool.clone(), arguments.clone()))
            } else {
                ScriptStep::Reply(ScriptedReply::text(answer.clone()))
            }
        })
    }

    fn with_source(source: Source) -> Self {
        ScriptedProvider {
            source,
            next_call_id: AtomicU64::new(1),
            calls: AtomicU64::new(0),
            live_streams: Arc::new(AtomicUsize::new(0)),
            recorded: None,
            accepts_images: None,
        }
    }

    /// Says whether the scripted "model" takes images (default: unknown, so an agent with
    /// `vision: auto` sends none), to test what a vision model is sent.
    pub fn accepting_images(mut self, accepts: bool) -> Self {
        self.accepts_images = Some(accepts);
        self
    }

    /// Keeps a copy of every request, for tests that check what the model was sent.
    pub fn record_requests(mut self) -> Self {
        self.recorded = Some(Mutex::new(Vec::new()));
        self
    }

    /// The recorded requests (empty unless [`Self::record_requests`] was called).
    pub fn requests(&self) -> Vec<ModelRequest> {
        match &self.recorded {
            Some(r) => r.lock().map(|r| r.clone()).unwrap_or_default(),
            None => Vec::new(),
        }
    }

    /// How many model calls were made.
    pub fn call_count(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// How many response streams are alive right now (0 once every call ended or was dropped).
    pub fn live_streams(&self) -> usize {
        self.live_streams.load(Ordering::SeqCst)
    }

    fn next_step(&self, request: &ModelRequest) -> ScriptStep {
        let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        match &self.source {
            Source::Function(choose) => choose(request),
            Source::Queue(queue) => queue.lock().ok().and_then(|mut q| q.pop_front()).unwrap_or_else(|| {
                ScriptStep::Error(ProviderError::BadRequest(format!(
                    "scripted provider: the script has no step for model call {n}"
                )))
            }),
        }
    }

    fn reply_events(&self, reply: &ScriptedReply, with_done: bool) -> Vec<Result<StreamEvent, ProviderError>> {
        let mut events = Vec::new();
        if let Some(reasoning) = &reply.reasoning {
            events.push(Ok(StreamEvent::ReasoningDelta {
                text: reasoning.clone(),
            }));
        }
        for word in split_words(&reply.text) {
            events.push(Ok(StreamEvent::TextDelta { text: word.to_owned() }));
        }
        for (name, args) in &reply.tool_calls {
            let id = format!("call_{}", self.next_call_id.fetch_add(1, Ordering::Relaxed));
            events.push(Ok(StreamEvent::ToolCallStart {
                id: id.clone(),
                name: name.clone(),
                signature: None,
            }));
            // Two pieces, like a real stream that splits arguments across chunks.
            let mid = floor_char_boundary(args, args.len() / 2);
            for piece in [&args[..mid], &args[mid..]] {
                if !piece.is_empty() {
                    events.push(Ok(StreamEvent::ToolArgsDelta {
                        id: id.clone(),
                        json: piece.to_owned(),
                    }));
                }
            }
            events.push(Ok(StreamEvent::ToolCallEnd { id }));
        }
        if with_done {
            let usage = reply.usage.unwrap_or(Usage {
                input_tokens: 0,
                output_tokens: (reply.text.len() as u64).div_ceil(4),
                ..Usage::default()
            });
            events.push(Ok(StreamEvent::Usage { usage }));
            let finish_reason = if reply.tool_calls.is_empty() {
                FinishReason::Stop
            } else {
                FinishReason::ToolCalls
            };
            events.push(Ok(StreamEvent::Done { finish_reason }));
        }
        events
    }

    fn step_stream(&self, step: ScriptStep, cancel: CancellationToken) -> Result<EventStream, ProviderError> {
        Ok(match step {
            ScriptStep::Reply(reply) => stream::iter(self.reply_events(&reply, true)).boxed(),
            ScriptStep::Error(e) => return Err(e),
            ScriptStep::FailAfter(reply, e) => {
                let mut events = self.reply_events(&reply, false);
                events.push(Err(e));
                stream::iter(events).boxed()
            }
            ScriptStep::Events(events) => stream::iter(events).boxed(),
            ScriptStep::Hang(text) => {
                let prefix = split_words(&text)
                    .map(|w| Ok(StreamEvent::TextDelta { text: w.to_owned() }))
                    .collect::<Vec<_>>();
                stream::iter(prefix).chain(stream::pending()).boxed()
            }
            ScriptStep::Delay(delay, inner) => {
                let rest = self.step_stream(*inner, cancel.clone());
                let wait = async move {
                    tokio::select! {
                        _ = tokio::time::sleep(delay) => rest,
                        _ = cancel.cancelled() => Err(ProviderError::Cancelled),
                    }
                };
                stream::once(wait)
                    .flat_map(|rest| match rest {
                        Ok(s) => s,
                        Err(e) => stream::iter([Err(e)]).boxed(),
                    })
                    .boxed()
            }
        })
    }
}

impl std::fmt::Debug for ScriptedProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedProvider")
            .field("calls", &self.call_count())
            .finish_non_exhaustive()
    }
}

/// Decrements the live-stream counter when a response stream is dropped.
struct LiveGuard(Arc<AtomicUsize>);

impl Drop for LiveGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[async_trait]
impl Provider for ScriptedProvider {
    fn id(&self) -> &str {
        "scripted"
    }

    fn model(&self) -> &str {
        "scripted"
    }

    fn accepts_images(&self) -> Option<bool> {
        self.accepts_images
    }

    async fn stream(&self, request: &ModelRequest, cancel: CancellationToken) -> Result<EventStream, ProviderError> {
        if let Some(recorded) = &self.recorded
            && let Ok(mut r) = recorded.lock()
        {
            r.push(request.clone());
        }
        let step = self.next_step(request);
        let inner = self.step_stream(step, cancel)?;
        self.live_streams.fetch_add(1, Ordering::SeqCst);
        let guard = LiveGuard(self.live_streams.clone());
        Ok(inner
            .map(move |ev| {
                let _keep = &guard;
                ev
            })
            .boxed())
    }
}

/// Splits text into word-sized pieces that keep their trailing whitespace.
fn split_words(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive(' ')
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}
