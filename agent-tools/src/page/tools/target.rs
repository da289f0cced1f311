//! The element a page tool acts on: how the model names it, and how a result describes it.

use agent_core::untrusted::one_line;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::format::{NAME_CHARS, VALUE_CHARS};

/// A target element: a ref from page_read (preferred) or a CSS selector (`>>>` crosses into a
/// shadow root or a same-origin iframe).
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct TargetArgs {
    /// A ref from page_read, like "e12".
    #[serde(default, rename = "ref")]
    pub reference: Option<String>,
    /// A CSS selector that matches exactly one element.
    #[serde(default)]
    pub selector: Option<String>,
    /// A CSS selector of a container to search the selector in.
    #[serde(default)]
    pub within: Option<String>,
}

impl TargetArgs {
    /// The target as page.js takes it.
    pub(super) fn to_json(&self) -> Value {
        json!({ "ref": self.reference, "selector": self.selector, "within": self.within })
    }
}

/// The target element of a page.js result with its name and value capped.
pub(super) fn capped_target(v: &Value) -> Value {
    let mut t = v.get("target").cloned().unwrap_or(Value::Null);
    for (key, max) in [("name", NAME_CHARS), ("value", VALUE_CHARS), ("href", 300)] {
        if let Some(text) = t.get(key).and_then(Value::as_str).map(|x| one_line(x, max)) {
            t[key] = json!(text);
        }
    }
    t
}

/// The target of a page.js result as a result names it: `e12 (button "Remove")`.
pub(super) fn target_desc(v: &Value) -> String {
    let t = capped_target(v);
    let s = |k: &str| t.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    format!("{} ({} {})", s("ref"), s("role"), json!(s("name")))
}

/// A value read from or written to a field, capped to one line, quoted.
pub(super) fn shown_value(v: &Value) -> Value {
    match v.as_str() {
        Some(text) => json!(one_line(text, VALUE_CHARS)),
        None => Value::Null,
    }
}
