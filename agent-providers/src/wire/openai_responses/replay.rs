//! What a reasoning response leaves in the transcript, in
//! [`Reasoning::opaque`](agent_core::Reasoning::opaque), for the next request to send back.
//!
//! With `store: false` the server keeps nothing: a reasoning item comes back whole (its id,
//! summary and `encrypted_content`), and the item that followed it (a message or a function
//! call) must come back with its own id, which the API pairs it by. So the entries are, in
//! output order: each reasoning item as the API wants it back, and after one, a marker
//! `{"type": "message", "id"}` or `{"type": "function_call", "id", "call_id"}` for each
//! following item. Items that do not follow a replayable reasoning item leave no entry, and
//! are sent back without ids.

use serde_json::{Value, json};

use super::items::{item_type, str_field};

/// The entry kept for a reasoning item, when it can be replayed (it has an id and encrypted
/// content).
pub(super) fn reasoning_entry(item: &Value) -> Option<Value> {
    let id = str_field(item, "id")?;
    let encrypted = str_field(item, "encrypted_content")?;
    let summary = item
        .get("summary")
        .filter(|s| s.is_array())
        .cloned()
        .unwrap_or_else(|| json!([]));
    Some(json!({"type": "reasoning", "id": id, "summary": summary, "encrypted_content": encrypted}))
}

/// The marker kept for a message item after a replayable reasoning item.
pub(super) fn message_marker(id: &str) -> Value {
    json!({"type": "message", "id": id})
}

/// The marker kept for a function call after a replayable reasoning item.
pub(super) fn call_marker(id: &str, call_id: &str) -> Value {
    json!({"type": "function_call", "id": id, "call_id": call_id})
}

/// One entry of the transcript, read back.
pub(super) enum Entry<'a> {
    /// A reasoning item, sent back as it is.
    Reasoning(&'a Value),
    /// The id of the message item that followed a reasoning item.
    Message(&'a str),
    /// The item id and call id of a function call that followed a reasoning item.
    Call { id: &'a str, call_id: &'a str },
}

/// Reads one opaque entry; entries of other wires (and broken ones) give `None`.
pub(super) fn entry(value: &Value) -> Option<Entry<'_>> {
    match item_type(value) {
        "reasoning" if str_field(value, "encrypted_content").is_some() && str_field(value, "id").is_some() => {
            Some(Entry::Reasoning(value))
        }
        "message" => str_field(value, "id").map(Entry::Message),
        "function_call" => Some(Entry::Call {
            id: str_field(value, "id")?,
            call_id: str_field(value, "call_id")?,
        }),
        _ => None,
    }
}
