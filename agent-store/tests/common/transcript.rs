//! What a valid stored transcript looks like.

use std::collections::{HashMap, HashSet};

use agent_core::{Message, Role};

/// Every assistant tool call has exactly one result, right after its message (before the
/// next user or assistant message), and every result answers a call.
pub fn assert_valid_transcript(messages: &[Message]) {
    let mut i = 0;
    while i < messages.len() {
        let m = &messages[i];
        match m.role {
            Role::Assistant if !m.tool_calls.is_empty() => {
                let mut j = i + 1;
                let mut answered: HashMap<&str, usize> = HashMap::new();
                while j < messages.len() && messages[j].role == Role::Tool {
                    let id = messages[j]
                        .tool_call_id
                        .as_deref()
                        .expect("a tool result names its call");
                    *answered.entry(id).or_default() += 1;
                    j += 1;
                }
                for call in &m.tool_calls {
                    assert_eq!(
                        answered.get(call.id.as_str()).copied().unwrap_or(0),
                        1,
                        "call {} at message {i} must have exactly one result",
                        call.id
                    );
                }
                let ids: HashSet<&str> = m.tool_calls.iter().map(|c| c.id.as_str()).collect();
                for id in answered.keys() {
                    assert!(ids.contains(id), "result for unknown call {id} after message {i}");
                }
                i = j;
            }
            Role::Tool => panic!("tool result at message {i} does not follow its call"),
            _ => i += 1,
        }
    }
}
