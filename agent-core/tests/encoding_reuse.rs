//! What the loop vouches for when it hands a provider the previous request's encoding memo
//! ([`EncodingReuse`]): on every model call, the messages it says are unchanged are exactly
//! the ones of the request the memo was put for, across steps of a turn, older images
//! replaced by notes, a hook editing the request, a new turn, and trimming to fit the context.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agent_core::{
    Agent, AgentConfig, CancellationToken, ContentPart, EventStream, HookError, Hooks, Message, ModelRequest, Provider,
    ProviderError, Role, ScriptStep, ScriptedProvider, ScriptedReply, SessionId, ToolContext, ToolError, ToolOutput,
    Vision, async_trait, tool_fn,
};
use common::image;
use serde_json::json;

/// Keeps each request's messages as its memo, and checks on the next request that every
/// message vouched for is the one it kept.
struct Checking {
    inner: Arc<ScriptedProvider>,
    max_input_tokens: Option<u64>,
    /// Messages taken from a memo, over all calls.
    reused: AtomicUsize,
    /// How many messages each request had.
    sizes: Mutex<Vec<usize>>,
}

impl Checking {
    fn new(inner: ScriptedProvider, max_input_tokens: Option<u64>) -> Arc<Self> {
        Arc::new(Checking {
            inner: Arc::new(inner),
            max_input_tokens,
            reused: AtomicUsize::new(0),
            sizes: Mutex::new(Vec::new()),
        })
    }
}

#[async_trait]
impl Provider for Checking {
    fn id(&self) -> &str {
        "checking"
    }

    fn max_input_tokens(&self) -> Option<u64> {
        self.max_input_tokens
    }

    fn accepts_images(&self) -> Option<bool> {
        Some(true)
    }

    async fn stream(&self, request: &ModelRequest, cancel: CancellationToken) -> Result<EventStream, ProviderError> {
        if let Some((kept, reusable)) = request.reuse.take::<Vec<Message>>() {
            let n = reusable.min(kept.len());
            assert!(
                n <= request.messages.len(),
                "vouched for {n} of {}",
                request.messages.len()
            );
            assert_eq!(kept[..n], request.messages[..n], "the messages vouched for changed");
            self.reused.fetch_add(n, Ordering::Relaxed);
        }
        request.reuse.put(request.messages.clone());
        self.sizes.lock().unwrap().push(request.messages.len());
        self.inner.stream(request, cancel).await
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

/// Calls `tool` `calls` times in each turn, then answers; answers a summary request (one
/// offering no tools) with a summary.
fn caller(tool: &'static str, calls: usize) -> ScriptedProvider {
    let made = AtomicUsize::new(0);
    ScriptedProvider::from_fn(move |req: &ModelRequest| {
        if req.tools.is_empty() {
            return ScriptStep::Reply(ScriptedReply::text("earlier: screenshots"));
        }
        if made.fetch_add(1, Ordering::Relaxed) < calls {
            ScriptStep::Reply(ScriptedReply::tool_call(tool, json!({})))
        } else {
            made.store(0, Ordering::Relaxed);
            ScriptStep::Reply(ScriptedReply::text("seen"))
        }
    })
}

fn agent(provider: Arc<Checking>, max_images: u32, hooks: Option<Redact>) -> Agent {
    let shot = tool_fn("shot", "A screenshot.", |_: NoArgs, _cx: ToolContext| async move {
        let mut out = ToolOutput::text("x".repeat(400));
        out.content.push(image("shot"));
        Ok::<_, ToolError>(out)
    })
    .returns_images(true);
    let read = tool_fn("read", "A long read.", |_: NoArgs, _cx: ToolContext| async move {
        Ok::<_, ToolError>(ToolOutput::text("word ".repeat(800)))
    });
    let mut builder = Agent::builder()
        .provider(provider)
        .tool(shot)
        .tool(read)
        .config(AgentConfig {
            vision: Vision::On,
            max_images,
            max_repeated_calls: 0,
            ..AgentConfig::default()
        });
    if let Some(hooks) = hooks {
        builder = builder.hooks(hooks);
    }
    builder.build().unwrap()
}

#[tokio::test]
async fn steps_of_a_turn_reuse_what_is_unchanged_even_as_older_images_go() {
    let provider = Checking::new(caller("shot", 6), None);
    // Two images at most: each new screenshot replaces an older one with a note.
    let agent = agent(provider.clone(), 2, None);
    let session = agent.create_session().await.unwrap();
    for text in ["look", "again"] {
        let outcome = session.send_message(Message::user(text)).await;
        assert_eq!(outcome.final_text.as_deref(), Some("seen"), "{outcome:?}");
    }
    // Each later call of a turn reuses the messages before the oldest image it replaced.
    assert!(provider.reused.load(Ordering::Relaxed) > 10);
}

/// Replaces every tool result's text before the request leaves.
struct Redact;

#[async_trait]
impl Hooks for Redact {
    async fn before_model_call(&self, _s: &SessionId, request: &mut ModelRequest) -> Result<(), HookError> {
        for m in request.messages.iter_mut().filter(|m| m.role == Role::Tool) {
            m.content = vec![ContentPart::text("[redacted]")];
        }
        Ok(())
    }
}

#[tokio::test]
async fn a_request_a_hook_may_have_edited_is_encoded_afresh() {
    let provider = Checking::new(caller("shot", 3), None);
    let agent = agent(provider.clone(), 8, Some(Redact));
    let session = agent.create_session().await.unwrap();
    let outcome = session.send_message(Message::user("look")).await;
    assert_eq!(outcome.final_text.as_deref(), Some("seen"), "{outcome:?}");
    assert_eq!(provider.reused.load(Ordering::Relaxed), 0);
}

#[tokio::test]
async fn trimming_to_fit_the_context_vouches_for_nothing() {
    // A few long results fill the context: older ones are summarised as the turn goes on.
    let provider = Checking::new(caller("read", 12), Some(6_000));
    let agent = agent(provider.clone(), 8, None);
    let session = agent.create_session().await.unwrap();
    let outcome = session.send_message(Message::user("look")).await;
    assert_eq!(outcome.final_text.as_deref(), Some("seen"), "{outcome:?}");
    let sizes = provider.sizes.lock().unwrap().clone();
    assert!(
        sizes.windows(2).any(|w| w[1] < w[0]),
        "some request was trimmed: {sizes:?}"
    );
}
