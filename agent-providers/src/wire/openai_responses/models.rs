//! Which models reason, as far as their names tell: they get reasoning summaries and their
//! encrypted reasoning back (`include`), and no `temperature`, which they refuse.

/// Whether `model` is one of OpenAI's reasoning models (o1, o3, o4, gpt-5 and codex), by its
/// name; a served name may carry a prefix (`openai/o4-mini`).
///
/// ```
/// use agent_providers::openai_responses::is_reasoning_model;
/// assert!(is_reasoning_model("gpt-5-mini") && is_reasoning_model("openai/o4-mini"));
/// assert!(!is_reasoning_model("gpt-4.1") && !is_reasoning_model("gpt-5-chat-latest"));
/// ```
pub fn is_reasoning_model(model: &str) -> bool {
    let m = model.to_ascii_lowercase();
    let name = m.rsplit('/').next().unwrap_or(&m);
    if name.starts_with("gpt-5") && name.contains("-chat") {
        return false;
    }
    ["o1", "o3", "o4", "gpt-5", "codex"].iter().any(|p| name.starts_with(p))
}
