//! Converting between rows and agent-core's messages.

use tokio_postgres::Row;

use agent_core::{ContentPart, Message, Reasoning, Role, StoreError, StoredMessage, ToolCall, Visibility};

use crate::error::{seq_from_sql, utf8_opt};

fn corrupt(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("corrupt {what} in the database: {e}"))
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Backend(format!("cannot serialise a message: {e}")))
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

/// Column-wise message data for one `INSERT ... SELECT FROM unnest(...)`: a whole append is one
/// statement, whatever its length.
#[derive(Default)]
pub(crate) struct MessageColumns {
    pub seq: Vec<i64>,
    pub role: Vec<&'static str>,
    pub content: Vec<String>,
    pub tool_calls: Vec<Option<String>>,
    pub tool_call_id: Vec<Option<Vec<u8>>>,
    pub tool_name: Vec<Option<Vec<u8>>>,
    pub is_error: Vec<bool>,
    pub compressed: Vec<Option<Vec<u8>>>,
    pub reasoning: Vec<Option<String>>,
    pub model_visible: Vec<bool>,
    pub user_visible: Vec<bool>,
}

/// A statement parameter.
pub(crate) type Param<'a> = &'a (dyn tokio_postgres::types::ToSql + Sync);

impl MessageColumns {
    /// The session key `$1`, then the eleven columns as `$2` .. `$12`, in the order of the
    /// `unnest(...)` both the insert and the replay's comparison read them in.
    pub fn params<'a>(&'a self, key: &'a i64) -> [Param<'a>; 12] {
        [
            key,
            &self.seq,
            &self.role,
            &self.content,
            &self.tool_calls,
            &self.tool_call_id,
            &self.tool_name,
            &self.is_error,
            &self.compressed,
            &self.reasoning,
            &self.model_visible,
            &self.user_visible,
        ]
    }

    /// The columns of `messages`, numbered from `first_seq`.
    pub fn new(first_seq: u64, messages: &[Message]) -> Result<Self, StoreError> {
        let mut c = MessageColumns::default();
        for (i, m) in messages.iter().enumerate() {
            c.seq.push(crate::error::seq_to_sql(first_seq + i as u64));
            c.role.push(m.role.as_str());
            c.content.push(to_json(&m.content)?);
            c.tool_calls.push(if m.tool_calls.is_empty() {
                None
            } else {
                Some(to_json(&m.tool_calls)?)
            });
            c.tool_call_id.push(m.tool_call_id.clone().map(String::into_bytes));
            c.tool_name.push(m.tool_name.clone().map(String::into_bytes));
            c.is_error.push(m.is_error);
            c.compressed.push(m.compressed.clone().map(String::into_bytes));
            c.reasoning.push(m.reasoning.as_ref().map(to_json).transpose()?);
            c.model_visible.push(m.visibility.model);
            c.user_visible.push(m.visibility.user);
        }
        Ok(c)
    }
}

/// The columns [`read_message`] reads, in order.
pub(crate) const MESSAGE_COLUMNS: &str = "seq, role, content, tool_calls, tool_call_id, tool_name, is_error, \
     compressed, reasoning, model_visible, user_visible, created_at";

/// Reads a row of `SELECT {MESSAGE_COLUMNS} FROM messages`.
pub(crate) fn read_message(row: &Row) -> Result<StoredMessage, StoreError> {
    let get = |e: tokio_postgres::Error| corrupt("message row", e);
    let content: String = row.try_get(2).map_err(get)?;
    let tool_calls: Option<String> = row.try_get(3).map_err(get)?;
    let reasoning: Option<String> = row.try_get(8).map_err(get)?;
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
        seq: seq_from_sql(row.try_get(0).map_err(get)?),
        message: Message {
            role: parse_role(row.try_get(1).map_err(get)?)?,
            content,
            tool_calls,
            reasoning,
            tool_call_id: utf8_opt("tool call id", row.try_get(4).map_err(get)?)?,
            tool_name: utf8_opt("tool name", row.try_get(5).map_err(get)?)?,
            is_error: row.try_get(6).map_err(get)?,
            compressed: utf8_opt("compressed result", row.try_get(7).map_err(get)?)?,
            visibility: Visibility {
                model: row.try_get(9).map_err(get)?,
                user: row.try_get(10).map_err(get)?,
            },
        },
        created_at_ms: row.try_get(11).map_err(get)?,
    })
}
