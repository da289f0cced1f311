//! Which models take images, as far as their names tell (for `vision: auto`). A name we do not
//! know answers `None`, and the agent then sends no image: a text-only model fails a request
//! that carries one, so guessing "yes" would break a working agent.

/// OpenAI's models, and the open vision models OpenAI-compatible servers commonly serve.
pub(crate) fn openai_compatible(model: &str) -> Option<bool> {
    let m = model.to_ascii_lowercase();
    // A served name may carry a provider prefix ("openai/gpt-4o", "library/llava:13b").
    let name = m.rsplit('/').next().unwrap_or(&m);
    let text_only = [
        "gpt-3.5",
        "o1-mini",
        "o1-preview",
        "o3-mini",
        "text-",
        "davinci",
        "babbage",
    ];
    if text_only.iter().any(|p| name.starts_with(p)) || name == "gpt-4" || name.starts_with("gpt-4-0") {
        return Some(false);
    }
    let openai = [
        "gpt-4o",
        "chatgpt-4o",
        "gpt-4.1",
        "gpt-4.5",
        "gpt-4-turbo",
        "gpt-5",
        "o1",
        "o3",
        "o4",
    ];
    if openai.iter().any(|p| name.starts_with(p)) {
        return Some(true);
    }
    let open_vision = [
        "vision",
        "-vl",
        "llava",
        "pixtral",
        "gemma-3",
        "gemma3",
        "minicpm-v",
        "moondream",
        "internvl",
    ];
    if open_vision.iter().any(|p| name.contains(p)) {
        return Some(true);
    }
    None
}

/// Anthropic: every Claude model from Claude 3 on takes images.
pub(crate) fn anthropic(model: &str) -> Option<bool> {
    let m = model.to_ascii_lowercase();
    if m.starts_with("claude-2") || m.starts_with("claude-instant") {
        Some(false)
    } else if m.starts_with("claude") {
        Some(true)
    } else {
        None
    }
}

/// Gemini: every Gemini model takes images except the first text-only `gemini-pro`.
pub(crate) fn gemini(model: &str) -> Option<bool> {
    let m = model.to_ascii_lowercase();
    let name = m.strip_prefix("models/").unwrap_or(&m);
    if name == "gemini-pro" || name.starts_with("gemini-1.0-pro") && !name.contains("vision") {
        Some(false)
    } else if name.starts_with("gemini-") {
        Some(true)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_names_answer_and_unknown_ones_do_not() {
        for (model, want) in [
            ("gpt-4o-mini", Some(true)),
            ("gpt-4.1", Some(true)),
            ("gpt-5-nano", Some(true)),
            ("o4-mini", Some(true)),
            ("gpt-3.5-turbo", Some(false)),
            ("o3-mini", Some(false)),
            ("gpt-4", Some(false)),
            ("openai/gpt-4o", Some(true)),
            ("qwen2.5-vl-7b-instruct", Some(true)),
            ("llava:13b", Some(true)),
            ("qwen2.5-7b-instruct", None),
            ("mock-model", None),
        ] {
            assert_eq!(openai_compatible(model), want, "{model}");
        }
        assert_eq!(anthropic("claude-sonnet-4-5"), Some(true));
        assert_eq!(anthropic("claude-3-haiku-20240307"), Some(true));
        assert_eq!(anthropic("claude-2.1"), Some(false));
        assert_eq!(anthropic("other"), None);
        assert_eq!(gemini("gemini-2.5-flash"), Some(true));
        assert_eq!(gemini("models/gemini-1.5-pro"), Some(true));
        assert_eq!(gemini("gemini-pro"), Some(false));
        assert_eq!(gemini("gemma-2-9b"), None);
    }
}
