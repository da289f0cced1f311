//! AG-UI's `threadId` as a stored agent-core session.

use agent_core::{Agent, AgentError, Session, SessionId, StoreError};
use sha2::{Digest, Sha256};

/// The session a thread maps to: the thread id itself when it is a UUID (the official client's
/// default), otherwise a UUID derived from it (SHA-256 of the id, shaped as a version-8 UUID),
/// so the same thread always reaches the same stored session, across restarts too.
pub fn session_id_for_thread(thread_id: &str) -> SessionId {
    if let Ok(id) = SessionId::parse(thread_id) {
        return id;
    }
    let digest = Sha256::digest(format!("agent-agui thread\n{thread_id}").as_bytes());
    let mut b = [0u8; 16];
    b.copy_from_slice(&digest[..16]);
    b[6] = (b[6] & 0x0f) | 0x80; // version 8 (custom)
    b[8] = (b[8] & 0x3f) | 0x80; // RFC 4122 variant
    let hex: String = b.iter().map(|byte| format!("{byte:02x}")).collect();
    let text = format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    );
    // A well-formed UUID always parses; a fresh id is the (unreachable) fallback.
    SessionId::parse(&text).unwrap_or_else(|_| SessionId::new_random())
}

/// Opens the thread's session (live, or from the agent's store), creating it when it does not
/// exist yet.
pub async fn open_thread(agent: &Agent, thread_id: &str) -> Result<Session, AgentError> {
    let id = session_id_for_thread(thread_id);
    match agent.open_session(&id).await {
        Ok(session) => Ok(session),
        Err(AgentError::SessionNotFound(_)) => match agent.create_session_with_id(id.clone()).await {
            Ok(session) => Ok(session),
            // Another request created it in between.
            Err(AgentError::Store(StoreError::AlreadyExists(_))) => agent.open_session(&id).await,
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::session_id_for_thread;

    #[test]
    fn uuid_threads_are_their_own_session() {
        let id = session_id_for_thread("0F8E3C5A-2B1D-4C7E-9A6F-1D2E3F4A5B6C");
        assert_eq!(id.as_str(), "0f8e3c5a-2b1d-4c7e-9a6f-1d2e3f4a5b6c");
    }

    #[test]
    fn other_threads_get_a_stable_derived_uuid() {
        let a = session_id_for_thread("thread-1");
        assert_eq!(a, session_id_for_thread("thread-1"));
        assert_ne!(a, session_id_for_thread("thread-2"));
        assert_eq!(&a.as_str()[14..15], "8");
    }
}
