//! The default system prompt for browser agents ([`agent_tools::BrowserPrompt`]), so a Python
//! host gets the same rules, word for word, as a Rust or JS one.

use agent_tools::BrowserPrompt;
use pyo3::prelude::*;

/// The default browser-agent system prompt's text: for an agent in a tab of its own
/// (`own_tab`) or in the active tab, with `ask_clarification` (`clarification`) or asking in
/// its answer, for a model sent images (`vision`: page_screenshot is named) or not, followed by
/// the host's own paragraphs (`instructions`).
#[pyfunction]
#[pyo3(signature = (own_tab=false, clarification=false, instructions=Vec::new(), vision=false))]
pub fn browser_prompt(own_tab: bool, clarification: bool, instructions: Vec<String>, vision: bool) -> String {
    instructions
        .into_iter()
        .fold(
            BrowserPrompt::new()
                .own_tab(own_tab)
                .clarification(clarification)
                .vision(vision),
            BrowserPrompt::instructions,
        )
        .render()
}
