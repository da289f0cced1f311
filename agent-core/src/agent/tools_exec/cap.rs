//! Capping a tool's output to what the model is sent, with an explicit truncation marker.

use crate::message::ContentPart;
use crate::tool::ToolOutput;
use crate::untrusted::{Provenance, wrap_untrusted};

pub(crate) struct Capped {
    pub content: Vec<ContentPart>,
    pub model_text: String,
    pub full_text: String,
    pub structured: Option<serde_json::Value>,
    pub truncated: bool,
}

impl Capped {
    /// Wraps the text the model sees in untrusted-content markers naming `source`.
    pub fn wrap(&mut self, source: &Provenance) {
        self.model_text = wrap_untrusted(source, &self.model_text);
        match self.content.iter_mut().find(|p| p.as_text().is_some()) {
            Some(part) => *part = ContentPart::text(self.model_text.clone()),
            None => self.content.insert(0, ContentPart::text(self.model_text.clone())),
        }
    }
}

/// Cuts a result's text to `cap` characters, with an explicit marker.
pub(crate) fn cap_output(output: ToolOutput, cap: usize) -> Capped {
    let full_text = output.text_content();
    let total = full_text.chars().count();
    let (mut model_text, cut) = if total > cap {
        let end = full_text.char_indices().nth(cap).map_or(full_text.len(), |(i, _)| i);
        (
            format!(
                "{}\n[truncated: showing {cap} of {total} characters]",
                &full_text[..end]
            ),
            true,
        )
    } else {
        (full_text.clone(), false)
    };
    let images: Vec<ContentPart> = output
        .content
        .into_iter()
        .filter(|p| matches!(p, ContentPart::Image { .. }))
        .collect();
    if model_text.is_empty() && images.is_empty() {
        model_text = "(no output)".to_owned();
    }
    let mut content = Vec::with_capacity(1 + images.len());
    if !model_text.is_empty() {
        content.push(ContentPart::text(model_text.clone()));
    }
    content.extend(images);
    Capped {
        content,
        model_text,
        full_text,
        structured: output.structured,
        truncated: cut || output.truncated,
    }
}
