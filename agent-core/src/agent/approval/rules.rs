//! Remembered decisions: a person who approved (or rejected) a tool "for this session",
//! "always", or "on pages whose host matches a pattern" is not asked again. Kept in the
//! store's key-value table, so they hold across restarts and for every agent on the store; in
//! memory for an agent without a store.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

use super::host_pattern;
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
    /// The hosts it applies to, for a rule remembered for a host pattern
    /// ([`RememberScope::Host`]): `example.com` or `*.example.com`. `None`: calls on any host,
    /// or with none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_pattern: Option<String>,
    /// Whether calls run (`true`) or are rejected.
    pub allow: bool,
    /// The reason the model is told when a call is rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// When it was made (ms since the epoch).
    pub created_at_ms: i64,
}

impl ApprovalRule {
    /// Whether the rule answers a call of `tool` in `session` acting on `host` (normalised);
    /// a host rule never answers a call without a host.
    fn applies(&self, tool: &str, session: &SessionId, host: Option<&str>) -> bool {
        self.tool == tool
            && self.session_id.as_ref().is_none_or(|s| s == session)
            && match &self.host_pattern {
                None => true,
                Some(pattern) => host.is_some_and(|h| host_pattern::matches(pattern, h)),
            }
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

    /// The newest rule for a call of `tool` in `session` acting on `host` (normalised), if any.
    pub async fn find(
        &self,
        store: Option<&Arc<dyn Store>>,
        tool: &str,
        session: &SessionId,
        host: Option<&str>,
    ) -> Result<Option<ApprovalRule>, StoreError> {
        let rules = self.load(store).await?;
        Ok(rules.into_iter().rev().find(|r| r.applies(tool, session, host)))
    }

    /// Every rule, oldest first.
    pub async fn list(&self, store: Option<&Arc<dyn Store>>) -> Result<Vec<ApprovalRule>, StoreError> {
        self.load(store).await
    }

    /// Remembers a decision; a rule for the same tool and scope replaces the older one. A
    /// host scope's pattern has been checked ([`host_pattern::parse_pattern`]) already; it is
    /// normalised again here so that one pattern is stored one way.
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
        let (session_id, host_pattern) = match scope {
            RememberScope::Session => (Some(session.clone()), None),
            RememberScope::Always => (None, None),
            RememberScope::Host(pattern) => (None, Some(host_pattern::parse_pattern(&pattern).unwrap_or(pattern))),
        };
        rules.retain(|r| !(r.tool == tool && r.session_id == session_id && r.host_pattern == host_pattern));
        let rule = ApprovalRule {
            id: uuid::Uuid::new_v4().to_string(),
            tool: tool.to_owned(),
            session_id,
            host_pattern,
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
