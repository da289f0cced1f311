use std::sync::Arc;

use super::event_log::EventWriter;
use super::run::StatusCell;
use crate::event::{AgentEvent, EventKind};
use crate::session::SessionId;

/// A host callback that sees every event synchronously, in order, with none skipped.
pub type EventObserver = Arc<dyn Fn(&AgentEvent) + Send + Sync>;

/// Sends a run's events to its subscribers and the agent's observers, and keeps its status.
pub(crate) struct Emitter {
    pub session_id: SessionId,
    /// The run's event log; `None` for work outliving the run (observers only).
    pub log: Option<EventWriter>,
    pub observers: Arc<[EventObserver]>,
    pub status: StatusCell,
}

impl Emitter {
    pub fn emit(&self, kind: EventKind) {
        let event = AgentEvent {
            session_id: self.session_id.clone(),
            kind,
        };
        for observer in self.observers.iter() {
            observer(&event);
        }
        if let Some(log) = &self.log {
            log.push(event);
        }
    }

    /// An emitter for work that outlives the run (a parked question's expiry): it reaches the
    /// agent's observers only, since the run's event stream has ended.
    pub fn observers_only(&self) -> Emitter {
        Emitter::detached(self.session_id.clone(), self.observers.clone(), self.status.clone())
    }

    /// An emitter with no run behind it: events reach the observers only.
    pub fn detached(session_id: SessionId, observers: Arc<[EventObserver]>, status: StatusCell) -> Emitter {
        Emitter {
            session_id,
            log: None,
            observers,
            status,
        }
    }

    pub fn update(&self, change: impl FnOnce(&mut super::RunStatus)) {
        if let Ok(mut status) = self.status.lock() {
            change(&mut status);
        }
    }
}
