//! The default system prompt for browser agents ([`agent_tools::BrowserPrompt`]), so a JS host
//! gets the same rules, word for word, as a Rust or Python one.

use agent_tools::BrowserPrompt;
use napi_derive::napi;

/// What `browserPrompt` is told about the agent.
#[derive(Default)]
#[napi(object)]
pub struct BrowserPromptOptions {
    /// The agent works in a tab of its own (`pageTools(host, { tab })`).
    pub own_tab: Option<bool>,
    /// The agent has `ask_clarification` (`clarification: true`).
    pub clarification: Option<bool>,
    /// The model is sent images (`agent.takesImages`): the prompt mentions page_screenshot.
    pub vision: Option<bool>,
    /// The host's own paragraphs, after the rules.
    pub instructions: Option<Vec<String>>,
}

/// The default browser-agent system prompt's text.
#[napi]
pub fn browser_prompt(options: Option<BrowserPromptOptions>) -> String {
    let options = options.unwrap_or_default();
    let mut prompt = BrowserPrompt::new()
        .own_tab(options.own_tab.unwrap_or(false))
        .clarification(options.clarification.unwrap_or(false))
        .vision(options.vision.unwrap_or(false));
    for paragraph in options.instructions.unwrap_or_default() {
        prompt = prompt.instructions(paragraph);
    }
    prompt.render()
}
