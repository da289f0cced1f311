//! [`RunRegistry`]: the cancellation tokens of the turns this process runs now, by run id.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use agent_core::CancellationToken;

/// The turns running in this process, so that a cancel heard by any means (a PostgreSQL
/// notification, a local call) trips the token of the turn it names.
#[derive(Debug, Clone, Default)]
pub struct RunRegistry {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    runs: Mutex<HashMap<String, (u64, CancellationToken)>>,
    next: AtomicU64,
}

impl RunRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        RunRegistry::default()
    }

    /// Registers a run; it stays registered until the returned guard is dropped.
    pub fn register(&self, run_id: &str) -> RunGuard {
        let token = CancellationToken::new();
        let generation = self.inner.next.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut runs) = self.inner.runs.lock() {
            runs.insert(run_id.to_owned(), (generation, token.clone()));
        }
        RunGuard {
            registry: self.clone(),
            run_id: run_id.to_owned(),
            generation,
            token,
        }
    }

    /// Cancels the run with this id if it runs here; whether it did.
    pub fn cancel(&self, run_id: &str) -> bool {
        let token = self
            .inner
            .runs
            .lock()
            .ok()
            .and_then(|runs| runs.get(run_id).map(|(_, t)| t.clone()));
        match token {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// How many runs are registered.
    pub fn len(&self) -> usize {
        self.inner.runs.lock().map(|runs| runs.len()).unwrap_or(0)
    }

    /// Whether no run is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A registered run; unregisters it when dropped.
#[derive(Debug)]
pub struct RunGuard {
    registry: RunRegistry,
    run_id: String,
    generation: u64,
    token: CancellationToken,
}

impl RunGuard {
    /// The run's cancellation token.
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        if let Ok(mut runs) = self.registry.inner.runs.lock() {
            // A later registration of the same id (another attempt) keeps its own entry.
            if runs.get(&self.run_id).is_some_and(|(g, _)| *g == self.generation) {
                runs.remove(&self.run_id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::RunRegistry;

    #[test]
    fn a_cancel_trips_the_registered_run_only_while_it_is_registered() {
        let runs = RunRegistry::new();
        let guard = runs.register("run-1");
        assert!(!runs.cancel("run-2"), "an unknown run is not cancelled");
        assert!(runs.cancel("run-1"));
        assert!(guard.token().is_cancelled());
        drop(guard);
        assert!(runs.is_empty());
        assert!(!runs.cancel("run-1"), "a finished run is no longer registered");
    }

    #[test]
    fn an_earlier_attempt_ending_leaves_a_later_one_registered() {
        let runs = RunRegistry::new();
        let first = runs.register("run-1");
        let second = runs.register("run-1");
        drop(first);
        assert_eq!(runs.len(), 1);
        assert!(runs.cancel("run-1"));
        assert!(second.token().is_cancelled());
    }
}
