//! Crash repair: a turn that died (crash, panic, lost task) may leave tool calls without
//! results, which no provider accepts. They get an "interrupted" result before the next turn.

use std::sync::Arc;

use super::History;
use crate::message::{Message, Role};
use crate::session::SessionId;
use crate::store::{Store, StoreError, ToolCallState, now_millis};

/// Text of the result given to a call whose turn died before it finished (crash, panic).
const INTERRUPTED: &str = "interrupted: the turn ended before this call finished; it may or may not have run";

impl History {
    /// Gives every dangling tool call of the last assistant message an "interrupted" result,
    /// and marks its record cancelled, so the next request is valid after a crash or a lost
    /// task. `waiting`, the calls a parked turn holds back (a pending clarification question's,
    /// a pending approval's), are waiting, not interrupted.
    pub async fn repair_interrupted(
        &mut self,
        store: Option<&Arc<dyn Store>>,
        session: &SessionId,
        waiting: &[String],
    ) -> Result<(), StoreError> {
        let mut dangling = self.dangling_calls();
        dangling.retain(|(id, _)| !waiting.contains(id));
        if dangling.is_empty() {
            return Ok(());
        }
        if let Some(store) = store {
            let records = store.tool_calls(session).await?;
            for record in records {
                if !record.state.is_final() && dangling.iter().any(|(id, _)| *id == record.call_id) {
                    let mut fixed = record;
                    fixed.state = ToolCallState::Cancelled;
                    fixed.error = Some(INTERRUPTED.to_owned());
                    fixed.finished_at_ms = Some(now_millis());
                    store.upsert_tool_call(&fixed).await?;
                }
            }
        }
        let results = dangling
            .into_iter()
            .map(|(id, name)| Message::tool_result(id, name, INTERRUPTED, true))
            .collect();
        self.push(store, session, results).await
    }

    /// Tool calls of the last assistant message that have no result after it.
    fn dangling_calls(&self) -> Vec<(String, String)> {
        let Some(pos) = self.messages.iter().rposition(|m| m.role == Role::Assistant) else {
            return Vec::new();
        };
        let answered: Vec<&str> = self.messages[pos + 1..]
            .iter()
            .filter_map(|m| m.tool_call_id.as_deref())
            .collect();
        self.messages[pos]
            .tool_calls
            .iter()
            .filter(|c| !answered.contains(&c.id.as_str()))
            .map(|c| (c.id.clone(), c.name.clone()))
            .collect()
    }
}
