use std::sync::Arc;

use tokio::sync::broadcast;

use super::run::StatusCell;
use crate::event::{AgentEvent, EventKind};
use crate::session::SessionId;

/// A host callback that sees every event synchronously, in order, with none skipped.
pub type EventObserver = Arc<dyn Fn(&AgentEvent) + Send + Sync>;

/// Sends a run's events to its subscribers and the agent's observers, and keeps its status.
pub(crate) struct Emitter {
    pub session_id: SessionId,
    pub sender: broadcast::Sender<AgentEvent>,
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
        // No subscriber is fine: events are optional for hosts.
        let _ = self.sender.send(event);
    }

    /// An emitter for work that outlives the run (a parked question's expiry): it reaches the
    /// agent's observers only, since the run's event stream has ended.
    pub fn observers_only(&self) -> Emitter {
        Emitter::detached(self.session_id.clone(), self.observers.clone(), self.status.clone())
    }

    /// An emitter with no run behind it: events reach the observers only.
    pub fn detached(session_id: SessionId, observers: Arc<[EventObserver]>, status: StatusCell) -> Emitter {
        let (sender, _) = broadcast::channel(1);
        Emitter {
            session_id,
            sender,
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
