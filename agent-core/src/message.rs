//! Provider-neutral conversation messages.
//!
//! A [`Message`] is what the loop stores and what providers translate into their wire formats.
//! Every message carries a [`Visibility`], so that compaction can hide old turns from the model
//! while the person still sees the whole history.

use serde::{Deserialize, Serialize};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Instructions for the model (usually sent separately from the history).
    System,
    /// The person, or another tab's agent speaking through the tab hub.
    User,
    /// The model.
    Assistant,
    /// The result of one tool call.
    Tool,
}

impl Role {
    /// The lowercase name used on the wire and in storage.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// One piece of a message's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, inline as base64 or by URL.
    Image {
        /// MIME type such as `image/png`.
        media_type: String,
        /// Where the image's bytes are.
        source: ImageSource,
    },
}

/// Where an image's bytes come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ImageSource {
    /// Base64-encoded bytes (standard alphabet, padded).
    Base64 {
        /// The encoded bytes.
        data: String,
    },
    /// A URL the provider fetches itself (not every provider accepts this).
    Url {
        /// The URL.
        url: String,
    },
}

impl ContentPart {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        ContentPart::Text { text: text.into() }
    }

    /// The text of a text part, `None` for images.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentPart::Text { text } => Some(text),
            ContentPart::Image { .. } => None,
        }
    }
}

/// A tool call requested by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Provider-assigned (or synthesized) id; tool results refer to it.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments exactly as the model produced them: JSON text, which may be malformed.
    /// The loop parses and validates it before any tool runs.
    pub arguments: String,
    /// Opaque provider data that must be echoed back with this call (for example Gemini's
    /// `thoughtSignature`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

impl ToolCall {
    /// A call with arguments given as a JSON value.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: &serde_json::Value) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.to_string(),
            signature: None,
        }
    }

    /// The arguments parsed as JSON. Empty text counts as `{}` (several providers send an
    /// empty string for a call without arguments).
    pub fn parse_arguments(&self) -> Result<serde_json::Value, serde_json::Error> {
        if self.arguments.trim().is_empty() {
            return Ok(serde_json::Value::Object(serde_json::Map::new()));
        }
        serde_json::from_str(&self.arguments)
    }
}

/// The model's reasoning ("thinking") attached to an assistant message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Reasoning {
    /// The reasoning text, as streamed.
    pub text: String,
    /// Opaque signature to send back unchanged (Anthropic thinking, Gemini thought signatures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Other opaque reasoning payloads that must be echoed (for example OpenRouter's
    /// `reasoning_details` or Anthropic's `redacted_thinking` blocks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub opaque: Vec<serde_json::Value>,
}

/// Who may see a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Visibility {
    /// Sent to the model in later requests.
    pub model: bool,
    /// Shown to the person.
    pub user: bool,
}

impl Visibility {
    /// Seen by both the model and the person.
    pub const ALL: Visibility = Visibility {
        model: true,
        user: true,
    };
    /// Kept for the person only (for example turns that compaction summarised).
    pub const USER_ONLY: Visibility = Visibility {
        model: false,
        user: true,
    };
    /// Sent to the model only (for example a compaction summary).
    pub const MODEL_ONLY: Visibility = Visibility {
        model: true,
        user: false,
    };
}

impl Default for Visibility {
    fn default() -> Self {
        Visibility::ALL
    }
}

fn is_default_visibility(v: &Visibility) -> bool {
    *v == Visibility::ALL
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Text and image parts.
    #[serde(default)]
    pub content: Vec<ContentPart>,
    /// Tool calls (assistant messages only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Reasoning (assistant messages only). Boxed: most messages have none, and every
    /// message of every open session would otherwise carry its room.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Box<Reasoning>>,
    /// The call this message answers (tool messages only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The tool's name (tool messages only; Gemini needs it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// Whether a tool result reports a failure.
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_error: bool,
    /// The compressed form of a tool result, replayed to the model once the turn that produced
    /// it is over (see [`crate::CompressionConfig`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compressed: Option<String>,
    /// Who may see it.
    #[serde(default, skip_serializing_if = "is_default_visibility")]
    pub visibility: Visibility,
}

impl Message {
    fn bare(role: Role, content: Vec<ContentPart>) -> Self {
        Message {
            role,
            content,
            tool_calls: Vec::new(),
            reasoning: None,
            tool_call_id: None,
            tool_name: None,
            is_error: false,
            compressed: None,
            visibility: Visibility::ALL,
        }
    }

    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        Self::bare(Role::System, vec![ContentPart::text(text)])
    }

    /// A user message with one text part.
    pub fn user(text: impl Into<String>) -> Self {
        Self::bare(Role::User, vec![ContentPart::text(text)])
    }

    /// A user message with arbitrary parts (text and images).
    pub fn user_parts(parts: Vec<ContentPart>) -> Self {
        Self::bare(Role::User, parts)
    }

    /// An assistant message with text only.
    pub fn assistant(text: impl Into<String>) -> Self {
        let text = text.into();
        let content = if text.is_empty() {
            Vec::new()
        } else {
            vec![ContentPart::text(text)]
        };
        Self::bare(Role::Assistant, content)
    }

    /// An assistant message with text (possibly empty) and tool calls.
    pub fn assistant_with_tools(text: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        let mut m = Self::assistant(text);
        m.tool_calls = tool_calls;
        m
    }

    /// The same message with the model's reasoning attached (assistant messages only).
    pub fn with_reasoning(mut self, reasoning: Reasoning) -> Self {
        self.reasoning = Some(Box::new(reasoning));
        self
    }

    /// The result of a tool call.
    pub fn tool_result(
        call_id: impl Into<String>,
        tool_name: impl Into<String>,
        text: impl Into<String>,
        is_error: bool,
    ) -> Self {
        let mut m = Self::bare(Role::Tool, vec![ContentPart::text(text)]);
        m.tool_call_id = Some(call_id.into());
        m.tool_name = Some(tool_name.into());
        m.is_error = is_error;
        m
    }

    /// All text parts joined with no separator.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for part in &self.content {
            if let Some(t) = part.as_text() {
                out.push_str(t);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Every message of every open session carries the struct's size; reasoning, which most
    /// messages lack, is boxed so that they do not carry its room.
    #[test]
    fn a_message_keeps_no_inline_room_for_reasoning() {
        assert!(
            std::mem::size_of::<Message>() <= 17 * std::mem::size_of::<usize>(),
            "Message is {} bytes",
            std::mem::size_of::<Message>()
        );
        let with = Message::assistant("done").with_reasoning(Reasoning {
            text: "because".into(),
            ..Reasoning::default()
        });
        let json = serde_json::to_value(&with).unwrap();
        assert_eq!(json["reasoning"]["text"], "because");
        let back: Message = serde_json::from_value(json).unwrap();
        assert_eq!(back, with);
    }
}
