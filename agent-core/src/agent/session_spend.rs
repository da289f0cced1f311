//! A session's spend kept in the store's key-value table, so a session opened again after a
//! restart reports (and budgets) what its earlier turns cost.
//!
//! Written at the end of a turn that made a priced call (or the first unpriced call of a
//! priced session): a host that prices nothing pays no write per turn. A session without the record
//! whose history holds answers was never priced (or predates the record): its cost is
//! unknown, as it was in the process that ran it.

use super::history::History;
use crate::message::Role;
use crate::pricing::Spend;
use crate::session::SessionId;
use crate::store::{Store, StoreError};

/// The key of a session's record. Every key of a session starts with
/// [`crate::store::session_key_prefix`], which `Store::delete_session` removes with it.
pub(crate) fn key(session: &SessionId) -> String {
    format!("{}spend", crate::store::session_key_prefix(session))
}

/// What the session's earlier turns spent, as stored.
pub(crate) async fn load(store: &dyn Store, session: &SessionId, history: &History) -> Result<Spend, StoreError> {
    let answered = history.summary.is_some() || history.messages.iter().any(|m| m.role == Role::Assistant);
    Ok(match store.kv_get(&key(session)).await? {
        Some(text) => serde_json::from_str(&text).unwrap_or_else(|e| {
            tracing::warn!(%session, error = %e, "the session's stored spend is unreadable; its cost is unknown");
            Spend::UNKNOWN
        }),
        None if answered => Spend::UNKNOWN,
        None => Spend::default(),
    })
}

/// Whether a turn that spent `turn`, after the session's earlier turns spent `before`, changes
/// what the record says: a priced call, or the first unpriced one of a session whose cost was
/// known (a session that was never priced needs no record: see the module's note).
pub(crate) fn worth_saving(before: &Spend, turn: &Spend) -> bool {
    turn.priced_calls > 0 || (turn.unpriced_calls > 0 && before.priced_calls > 0 && before.unpriced_calls == 0)
}

/// Records the session's spend.
pub(crate) async fn save(store: &dyn Store, session: &SessionId, spend: &Spend) -> Result<(), StoreError> {
    let text = serde_json::to_string(spend).map_err(|e| StoreError::Backend(e.to_string()))?;
    store.kv_set(&key(session), &text).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spend(priced_calls: u32, unpriced_calls: u32) -> Spend {
        Spend {
            priced_usd: f64::from(priced_calls) * 0.1,
            priced_calls,
            unpriced_calls,
        }
    }

    #[test]
    fn a_record_is_written_when_what_it_says_changes() {
        let new = Spend::default();
        // Priced calls always change the sum.
        assert!(worth_saving(&new, &spend(1, 0)));
        assert!(worth_saving(&spend(2, 3), &spend(1, 1)));
        // A session never priced needs no record: reopened with answers, it is unknown.
        assert!(!worth_saving(&new, &spend(0, 2)));
        assert!(!worth_saving(&spend(0, 2), &spend(0, 1)));
        // The first unpriced call of a priced session makes its total unknown: written once.
        assert!(worth_saving(&spend(2, 0), &spend(0, 1)));
        assert!(!worth_saving(&spend(2, 1), &spend(0, 1)));
        // A turn that made no call changes nothing.
        assert!(!worth_saving(&spend(2, 0), &new));
    }

    #[test]
    fn the_record_reads_back_and_an_old_one_without_priced_calls_too() {
        let text = serde_json::to_string(&spend(3, 1)).unwrap_or_default();
        assert_eq!(serde_json::from_str::<Spend>(&text).ok(), Some(spend(3, 1)));
        let older: Option<Spend> = serde_json::from_str(r#"{"priced_usd":0.5,"unpriced_calls":0}"#).ok();
        assert_eq!(older.and_then(|s| s.total_usd()), Some(0.5));
    }
}
