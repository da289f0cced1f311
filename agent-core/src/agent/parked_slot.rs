//! The slot a session keeps for what its turn is parked on (a clarification question, an
//! approval), with the token that stops the parked thing's watcher once it is resolved.

use std::sync::Mutex;

use tokio_util::sync::CancellationToken;

use crate::gate::TurnOrigin;

/// What a turn can be parked on.
pub(crate) trait Parked: Clone {
    /// The id the person answers with.
    fn id(&self) -> &str;
    /// Who started the turn that parked.
    fn origin(&self) -> &TurnOrigin;
}

/// A session's parked item, if any.
pub(crate) struct ParkedSlot<T>(Mutex<Option<(T, CancellationToken)>>);

impl<T> Default for ParkedSlot<T> {
    fn default() -> Self {
        ParkedSlot(Mutex::new(None))
    }
}

impl<T: Parked> ParkedSlot<T> {
    /// `f` of the parked item, if there is one.
    pub fn with<R>(&self, f: impl FnOnce(&T) -> R) -> Option<R> {
        self.0.lock().ok()?.as_ref().map(|(item, _)| f(item))
    }

    /// Who started the turn parked on item `id`.
    pub fn origin_of(&self, id: &str) -> Option<TurnOrigin> {
        self.with(|item| (item.id() == id).then(|| item.origin().clone()))
            .flatten()
    }

    /// Parks `item`; returns the token that is cancelled once it is resolved (an item parked
    /// before is resolved now).
    pub fn set(&self, item: T) -> CancellationToken {
        let resolved = CancellationToken::new();
        if let Ok(mut pending) = self.0.lock()
            && let Some((_, old)) = pending.replace((item, resolved.clone()))
        {
            old.cancel();
        }
        resolved
    }

    /// Takes the parked item (only the one with `id`, when given) and stops its watcher.
    pub fn take(&self, id: Option<&str>) -> Option<T> {
        let mut pending = self.0.lock().ok()?;
        if id.is_some_and(|id| pending.as_ref().is_some_and(|(item, _)| item.id() != id)) {
            return None;
        }
        let (item, resolved) = pending.take()?;
        resolved.cancel();
        Some(item)
    }
}
