//! Remembered decisions: a person who approved (or rejected) a tool "for this session" or
//! "always" is not asked again. Kept in the store's key-value table, so they hold across
//! restarts and for every agent on the store; in memory for an agent without a store.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

use crate::agent::pending_approval::RememberScope;
use crate::session::SessionId;
use crate::store::{Store, StoreError, now_millis};

/// The store key the rules live under.
const RULES_KEY: &str = "agent_core.approval_rules";

/// A remembered decision about a tool's calls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalRule {
    /// The rule's id (revoke with it).
    pub id: String,
    /// The tool it applies to.
    pub tool: String,
    /// The session it applies to, or `None` for every session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<SessionId>,
    /// Whether calls run (`true`) or are rejected.
    pub allow: bool,
    /// The reason the model is told when a call is rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// When it was made (ms since the epoch).
    pub created_at_ms: i64,
}

impl ApprovalRule {
    fn applies(&self, tool: &str, session: &SessionId) -> bool {
        self.tool == tool && self.session_id.as_ref().is_none_or(|s| s == session)
    }
}

/// The rules of one agent: in its store when it has one.
#[derive(Default)]
pub(crate) struct ApprovalRules {
    /// The rules of an agent without a store.
    memory: Mutex<Vec<ApprovalRule>>,
    /// Held across each read-modify-write of the list, so that this process's updates do
    /// not overwrite each other.
    updating: Mutex<()>,
}

impl ApprovalRules {
    async fn load(&self, store: Option<&Arc<dyn Store>>) -> Result<Vec<ApprovalRule>, StoreError> {
        match store {
            None => Ok(self.memory.lock().await.clone()),
            Some(store) => Ok(match store.kv_get(RULES_KEY).await? {
                // A list this version cannot read is treated as empty rather than failing
                // every gated call; the next remembered decision replaces it.
                Some(text) => serde_json::from_str(&text).unwrap_or_default(),
                None => Vec::new(),
            }),
        }
    }

    async fn save(&self, store: Option<&Arc<dyn Store>>, rules: Vec<ApprovalRule>) -> Result<(), StoreError> {
        match store {
            None => {
                *self.memory.lock().await = rules;
                Ok(())
            }
            Some(store) => {
                let text = serde_json::to_string(&rules).map_err(|e| StoreError::Backend(e.to_string()))?;
                store.kv_set(RULES_KEY, &text).await
            }
        }
    }

    /// The newest rule for `tool` in `session`, if any.
    pub async fn find(
        &self,
        store: Option<&Arc<dyn Store>>,
        tool: &str,
        session: &SessionId,
    ) -> Result<Option<ApprovalRule>, StoreError> {
        let rules = self.load(store).await?;
        Ok(rules.into_iter().rev().find(|r| r.applies(tool, session)))
    }

    /// Every rule, oldest first.
    pub async fn list(&self, store: Option<&Arc<dyn Store>>) -> Result<Vec<ApprovalRule>, StoreError> {
        self.load(store).await
    }

    /// Remembers a decision; a rule for the same tool and scope replaces the older one.
    pub async fn remember(
        &self,
        store: Option<&Arc<dyn Store>>,
        tool: &str,
        session: &SessionId,
        scope: RememberScope,
        allow: bool,
        reason: Option<String>,
    ) -> Result<ApprovalRule, StoreError> {
        let _updating = self.updating.lock().await;
        let mut rules = self.load(store).await?;
        let session_id = match scope {
            RememberScope::Session => Some(session.clone()),
            RememberScope::Always => None,
        };
        rules.retain(|r| !(r.tool == tool && r.session_id == session_id));
        let rule = ApprovalRule {
            id: uuid::Uuid::new_v4().to_string(),
            tool: tool.to_owned(),
            session_id,
            allow,
            reason,
            created_at_ms: now_millis(),
        };
        rules.push(rule.clone());
        self.save(store, rules).await?;
        Ok(rule)
    }

    /// Forgets rule `id`; whether there was one.
    pub async fn revoke(&self, store: Option<&Arc<dyn Store>>, id: &str) -> Result<bool, StoreError> {
        let _updating = self.updating.lock().await;
        let mut rules = self.load(store).await?;
        let before = rules.len();
        rules.retain(|r| r.id != id);
        let removed = rules.len() != before;
        if removed {
            self.save(store, rules).await?;
        }
        Ok(removed)
    }
}
