//! Shared material: one message of every kind, a transcript check, and small helpers.

use std::collections::{HashMap, HashSet};

use agent_core::{
    ContentPart, ImageSource, Message, Reasoning, Role, SessionId, SessionInfo, Store, StoreError, ToolCall,
    ToolCallRecord, Visibility,
};
use serde_json::json;

/// One message of every kind the loop produces: system, user (text and images), assistant
/// with tool calls and reasoning, tool results (compressed, failed), empty assistant text, and
/// messages hidden from the model or from the person.
pub fn every_kind() -> Vec<Message> {
    let mut hidden = Message::user("an old turn, summarised");
    hidden.visibility = Visibility::USER_ONLY;
    let mut summary = Message::user("Summary: the person asked about cats.");
    summary.visibility = Visibility::MODEL_ONLY;
    let mut with_reasoning = Message::assistant_with_tools(
        "Let me look.",
        vec![
            ToolCall::new("call_1", "page_read", &json!({"tab": 1})),
            ToolCall {
                id: "call_2".into(),
                name: "broken".into(),
                arguments: "{not json".into(),
                signature: Some("sig-abc".into()),
            },
        ],
    );
    with_reasoning.reasoning = Some(Box::new(Reasoning {
        text: "thinking about cats".into(),
        signature: Some("rs-1".into()),
        opaque: vec![json!({"type": "redacted_thinking", "data": "xyz"})],
    }));
    let mut compressed = Message::tool_result("call_1", "page_read", r#"{"items":[1,2,3,4,5,6,7]}"#, false);
    compressed.compressed = Some(r#"{"items":{"_count":7,"_showing":3,"items":[1,2,3]}}"#.into());
    vec![
        Message::system("You are helpful. ünïcödé ✓"),
        Message::user("Hello"),
        Message::user_parts(vec![
            ContentPart::text("What is in this picture?"),
            ContentPart::Image {
                media_type: "image/png".into(),
                source: ImageSource::Base64 {
                    data: "iVBORw0KGgo=".into(),
                },
            },
            ContentPart::Image {
                media_type: "image/jpeg".into(),
                source: ImageSource::Url {
                    url: "https://example.invalid/cat.jpg".into(),
                },
            },
        ]),
        with_reasoning,
        compressed,
        Message::tool_result("call_2", "broken", "invalid arguments: expected JSON", true),
        Message::assistant(""),
        Message::assistant("Cats."),
        hidden,
        summary,
    ]
}

/// Every assistant tool call has exactly one result, right after its message (before the next
/// user or assistant message), and every result answers a call.
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

/// A new empty session.
pub(crate) async fn session(store: &dyn Store) -> SessionId {
    let id = SessionId::new_random();
    store.create_session(&SessionInfo::new(id.clone())).await.unwrap();
    id
}

/// The text of each stored message of `session`, in order.
pub(crate) async fn texts(store: &dyn Store, session: &SessionId) -> Vec<String> {
    store
        .load_messages(session, 0)
        .await
        .unwrap()
        .iter()
        .map(|m| m.message.text())
        .collect()
}

/// Appends and waits until durable. A write-behind store may report a failed write from the
/// flush rather than the append; the trait allows either, so the suite accepts either.
pub(crate) async fn append_durably(
    store: &dyn Store,
    session: &SessionId,
    first_seq: u64,
    messages: &[Message],
) -> Result<(), StoreError> {
    store.append_messages(session, first_seq, messages).await?;
    store.flush(session).await
}

/// [`append_durably`] for a tool-call record.
pub(crate) async fn upsert_durably(store: &dyn Store, record: &ToolCallRecord) -> Result<(), StoreError> {
    store.upsert_tool_call(record).await?;
    store.flush(&record.session_id).await
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}
