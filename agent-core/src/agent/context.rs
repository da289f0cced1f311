//! Keeping each request within the model's context budget (compaction).

use super::AgentInner;
use super::emit::Emitter;
use super::history::History;
use crate::provider::ModelRequest;
use crate::session::SessionId;

/// Called before every model call with the request about to be sent. Compaction (a summary of
/// older turns, then a deterministic trim) plugs in here; it may rewrite `request.messages`
/// and record what it did in `history` and the store.
pub(crate) async fn fit_request(
    _agent: &AgentInner,
    _session: &SessionId,
    _history: &mut History,
    _request: &mut ModelRequest,
    _emitter: &Emitter,
) {
}

/// Called once when the provider answers `ContextOverflow`. Returns whether the history was
/// shrunk, in which case the call is retried.
pub(crate) async fn after_overflow(
    _agent: &AgentInner,
    _session: &SessionId,
    _history: &mut History,
    _emitter: &Emitter,
) -> bool {
    false
}
