//! Keeping each request within the model's context budget (compaction).

use super::AgentInner;
use super::emit::Emitter;
use super::history::History;
use crate::provider::ModelRequest;

/// Called before every model call with the request about to be sent. Compaction (summary of
/// older turns, then a deterministic trim) plugs in here.
pub(crate) async fn fit_request(
    _agent: &AgentInner,
    _history: &History,
    _request: &mut ModelRequest,
    _emitter: &Emitter,
) {
}
