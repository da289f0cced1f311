//! Converting between rows and agent-core's types.

use rusqlite::Row;

use agent_core::{
    ContentPart, Message, Reasoning, Role, SessionId, SessionInfo, StoreError, StoredMessage, ToolCall, ToolCallRecord,
    ToolCallState, Visibility,
};

fn corrupt(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("corrupt {what} in the database: {e}"))
}

fn parse_role(text: &str) -> Result<Role, StoreError> {
    Ok(match text {
        "system" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        other => return Err(corrupt("message role", other)),
    })
}

/// A sequence number as SQLite stores it (an `INTEGER`; numbers past `i64::MAX` never occur).
pub(crate) fn seq_to_sql(seq: u64) -> i64 {
    i64::try_from(seq).unwrap_or(i64::MAX)
}

/// A message serialised for its row.
pub(crate) struct MessageRow {
    pub role: &'static str,
    pub content: String,
    pub tool_calls: Option<String>,
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
    pub is_error: bool,
    pub compressed: Option<String>,
    pub reasoning: Option<String>,
    pub model_visible: bool,
    pub user_visible: bool,
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Backend(format!("cannot serialise a message: {e}")))
}

impl MessageRow {
    pub fn from_message(m: &Message) -> Result<Self, StoreError> {
        Ok(MessageRow {
            role: m.role.as_str(),
            content: to_json(&m.content)?,
            tool_calls: if m.tool_calls.is_empty() {
                None
            } else {
                Some(to_json(&m.tool_calls)?)
            },
            tool_call_id: m.tool_call_id.clone(),
            tool_name: m.tool_name.clone(),
            is_error: m.is_error,
            compressed: m.compressed.clone(),
            reasoning: m.reasoning.as_ref().map(to_json).transpose()?,
            model_visible: m.visibility.model,
            user_visible: m.visibility.user,
        })
    }
}

/// Reads a row of `SELECT seq, role, content, tool_calls, tool_call_id, tool_name, is_error,
/// compressed, reasoning, model_visible, user_visible, created_at FROM messages`.
pub(crate) fn read_message(row: &Row<'_>) -> rusqlite::Result<Result<StoredMessage, StoreError>> {
    let seq: i64 = row.get(0)?;
    let role: String = row.get(1)?;
    let content: String = row.get(2)?;
    let tool_calls: Option<String> = row.get(3)?;
    let tool_call_id: Option<String> = row.get(4)?;
    let tool_name: Option<String> = row.get(5)?;
    let is_error: bool = row.get(6)?;
    let compressed: Option<String> = row.get(7)?;
    let reasoning: Option<String> = row.get(8)?;
    let model: bool = row.get(9)?;
    let user: bool = row.get(10)?;
    let created_at_ms: i64 = row.get(11)?;
    Ok((|| {
        let content: Vec<ContentPart> = serde_json::from_str(&content).map_err(|e| corrupt("message content", e))?;
        let tool_calls: Vec<ToolCall> = match tool_calls {
            Some(t) => serde_json::from_str(&t).map_err(|e| corrupt("tool calls", e))?,
            None => Vec::new(),
        };
        let reasoning: Option<Box<Reasoning>> = match reasoning {
            Some(r) => Some(serde_json::from_str(&r).map_err(|e| corrupt("reasoning", e))?),
            None => None,
        };
        Ok(StoredMessage {
            seq: seq.max(0) as u64,
            message: Message {
                role: parse_role(&role)?,
                content,
                tool_calls,
                reasoning,
                tool_call_id,
                tool_name,
                is_error,
                compressed,
                visibility: Visibility { model, user },
            },
            created_at_ms,
        })
    })())
}

/// Reads a row of `SELECT id, title, created_at, <last change> FROM sessions`.
pub(crate) fn read_session(row: &Row<'_>) -> rusqlite::Result<Result<SessionInfo, StoreError>> {
    let id: String = row.get(0)?;
    let title: Option<String> = row.get(1)?;
    let created_at_ms: i64 = row.get(2)?;
    let updated_at_ms: i64 = row.get(3)?;
    Ok(SessionId::parse(&id)
        .map_err(|e| corrupt("session id", e))
        .map(|id| SessionInfo {
            id,
            title,
            created_at_ms,
            updated_at_ms,
        }))
}

/// Reads a row of `SELECT * FROM tool_calls` of `session`.
pub(crate) fn read_tool_call(
    row: &Row<'_>,
    session: &SessionId,
) -> rusqlite::Result<Result<ToolCallRecord, StoreError>> {
    let state: String = row.get("state")?;
    let record = ToolCallRecord {
        call_id: row.get("call_id")?,
        session_id: session.clone(),
        name: row.get("name")?,
        arguments: row.get("arguments")?,
        state: match ToolCallState::parse(&state) {
            Some(s) => s,
            None => return Ok(Err(corrupt("tool-call state", state))),
        },
        raw_result: row.get("raw_result")?,
        compressed_result: row.get("compressed_result")?,
        error: row.get("error")?,
        started_at_ms: row.get("started_at")?,
        finished_at_ms: row.get("finished_at")?,
    };
    Ok(Ok(record))
}
