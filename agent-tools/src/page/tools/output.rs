//! The results of the page tools, marked with where their text came from.

use agent_core::untrusted::Provenance;
use agent_core::{ContentPart, ToolOutput};
use serde_json::Value;

use super::super::format::shown_page_url;

/// A result that quotes a page: the loop wraps all of it, and its compressed form in later
/// turns, in untrusted-content markers naming `source`.
pub(super) fn output(text: String, structured: Value, truncated: bool, source: Provenance) -> ToolOutput {
    ToolOutput {
        content: vec![ContentPart::text(text)],
        structured: Some(structured),
        truncated,
        provenance: Some(source),
    }
}

/// A result with no page text in it (only ids the model gave).
pub(super) fn own_output(text: String, structured: Value) -> ToolOutput {
    ToolOutput {
        content: vec![ContentPart::text(text)],
        structured: Some(structured),
        truncated: false,
        provenance: None,
    }
}

/// Names the page at `url` as a result's source (data: and blob: addresses withheld).
pub(super) fn page_source(url: &str) -> Provenance {
    Provenance::web_page(&shown_page_url(url))
}

/// The source of a page.js result: the address it reported.
pub(super) fn source_of(v: &Value) -> Provenance {
    page_source(v.get("at").and_then(Value::as_str).unwrap_or(""))
}
