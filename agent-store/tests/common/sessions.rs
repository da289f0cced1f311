//! Sessions in a test store, and what they hold.

use agent_core::{SessionId, SessionInfo, Store};
use agent_store::SqliteStore;

/// A new empty session, created and committed.
pub async fn session(store: &SqliteStore) -> SessionId {
    let id = SessionId::new_random();
    store.create_session(&SessionInfo::new(id.clone())).await.unwrap();
    id
}

/// The text of each stored message of `session`, in order.
pub async fn texts(store: &SqliteStore, session: &SessionId) -> Vec<String> {
    store
        .load_messages(session, 0)
        .await
        .unwrap()
        .iter()
        .map(|m| m.message.text())
        .collect()
}
