//! The offline demo of the loop: a scripted "model" (not a real one) calls two tools, and the
//! events and outcome are printed as they happen.
//!
//! Run: `cargo run -p agent-examples --bin scripted-demo`

use agent_core::{Agent, AllowAll, EventKind, ScriptedProvider, ScriptedReply, ToolContext, ToolError, tool_fn};
use futures::StreamExt;
use schemars::JsonSchema;
use serde_json::json;

/// Arguments of `word_count`.
#[derive(serde::Deserialize, JsonSchema)]
struct CountArgs {
    /// The text whose words are counted.
    text: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let word_count = tool_fn(
        "word_count",
        "Counts the words of a text.",
        |args: CountArgs, _cx: ToolContext| async move {
            Ok::<_, ToolError>(json!({ "words": args.text.split_whitespace().count() }))
        },
    )
    .parallel_safe(true);
    let shout = tool_fn(
        "shout",
        "Upper-cases a text (gated: the demo's gate allows it).",
        |args: CountArgs, _cx: ToolContext| async move { Ok::<_, ToolError>(args.text.to_uppercase()) },
    )
    .gated(true);

    println!("agent-core scripted demo: the model below is a ScriptedProvider replaying a fixed script, not an LLM.");
    let provider = ScriptedProvider::new([
        ScriptedReply::tool_call("word_count", json!({"text": "the quick brown fox"}))
            .with_call("shout", json!({"text": "hello tabs"}))
            .with_text("Let me count and shout. ")
            .into(),
        ScriptedReply::text("The text has 4 words, and shouted it reads HELLO TABS.").into(),
    ]);
    let agent = Agent::builder()
        .provider(provider)
        .tool(word_count)
        .tool(shout)
        .gate(AllowAll)
        .system_prompt("You are a helpful agent.")
        .build()?;
    let session = agent.create_session().await?;
    let run = session.send("Count the words of 'the quick brown fox' and shout 'hello tabs'.");
    let mut events = run.events();
    while let Some(event) = events.next().await {
        match &event.kind {
            EventKind::ContentToken { .. } | EventKind::ReasoningToken { .. } => {}
            kind => println!("event {}", serde_json::to_string(kind)?),
        }
    }
    let outcome = run.await;
    println!(
        "outcome: {} — {}",
        outcome.status.as_str(),
        outcome.final_text.unwrap_or_default()
    );
    if outcome.status != agent_core::OutcomeStatus::Done {
        std::process::exit(1);
    }
    Ok(())
}
