#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! The default browser-agent prompt: its text as the model reads it (snapshots, so a change to
//! the rules is reviewed), and that an agent given it sends it as the system prompt beside the
//! tools it names.

use std::sync::{Arc, Mutex};

use agent_core::{Agent, ScriptStep, ScriptedProvider, ScriptedReply};
use agent_tools::BrowserPrompt;

#[test]
fn the_default_prompt_as_the_model_reads_it() {
    insta::assert_snapshot!("default", BrowserPrompt::new().render());
}

#[test]
fn the_prompt_of_an_agent_in_its_own_tab_with_clarification_and_host_instructions() {
    let prompt = BrowserPrompt::new()
        .own_tab(true)
        .clarification(true)
        .instructions("Prices are in euros.")
        .render();
    insta::assert_snapshot!("own_tab_clarification_instructions", prompt);
}

#[test]
fn the_prompt_of_an_agent_whose_model_sees_images() {
    insta::assert_snapshot!("vision", BrowserPrompt::new().own_tab(true).vision(true).render());
}

/// A request's system prompt and tool names.
type SeenRequest = (Option<String>, Vec<String>);

#[tokio::test]
async fn an_agent_sends_it_as_the_system_prompt_and_has_the_ask_tool_it_names() {
    let seen: Arc<Mutex<Vec<SeenRequest>>> = Arc::default();
    let record = seen.clone();
    let provider = ScriptedProvider::from_fn(move |req| {
        let tools = req.tools.iter().map(|t| t.name.clone()).collect();
        record.lock().unwrap().push((req.system.clone(), tools));
        ScriptStep::from(ScriptedReply::text("done"))
    });
    let prompt = BrowserPrompt::new().clarification(true).render();
    let agent = Agent::builder()
        .provider(provider)
        .clarification(true)
        .system_prompt(prompt.clone())
        .build()
        .unwrap();
    let session = agent.create_session().await.unwrap();
    session.send("hello").await;
    let seen = seen.lock().unwrap();
    let (system, tools) = &seen[0];
    assert_eq!(system.as_deref(), Some(prompt.as_str()));
    assert!(prompt.contains("ask_clarification"));
    assert!(tools.iter().any(|t| t == "ask_clarification"), "tools: {tools:?}");
}
