//! A run's event log, what [`super::Run::events`] reads: the last `capacity` events, kept in a
//! queue that grows as events come. A broadcast channel of the same capacity allocated (and
//! zeroed) every slot up front, hundreds of kilobytes for every run, though a run usually has
//! a few dozen events. Once the run's handle and every reader are gone nobody can read the
//! log again, so it stops keeping events (a run awaited for its outcome alone keeps none).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

use crate::event::AgentEvent;

struct Log {
    state: Mutex<State>,
    changed: Notify,
    capacity: usize,
}

#[derive(Default)]
struct State {
    events: VecDeque<AgentEvent>,
    /// How many events were dropped from the front to stay within the capacity.
    dropped: u64,
    /// The writer is gone: no event will follow.
    ended: bool,
}

impl Log {
    fn state(&self) -> MutexGuard<'_, State> {
        // Events are plain data: whatever panicked while holding the lock left them whole.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A new log keeping at most `capacity` events: its writing and its reading side.
pub(crate) fn event_log(capacity: usize) -> (EventWriter, EventLog) {
    let log = Arc::new(Log {
        state: Mutex::new(State::default()),
        changed: Notify::new(),
        capacity: capacity.max(1),
    });
    (EventWriter(log.clone()), EventLog(log))
}

/// Appends events; dropping it ends the log.
pub(crate) struct EventWriter(Arc<Log>);

impl EventWriter {
    pub fn push(&self, event: AgentEvent) {
        // Only this writer holds the log: no reader exists or can be made any more.
        if Arc::strong_count(&self.0) == 1 {
            return;
        }
        {
            let mut state = self.0.state();
            if state.events.len() == self.0.capacity {
                state.events.pop_front();
                state.dropped += 1;
            }
            state.events.push_back(event);
        }
        self.0.changed.notify_waiters();
    }
}

impl Drop for EventWriter {
    fn drop(&mut self) {
        self.0.state().ended = true;
        self.0.changed.notify_waiters();
    }
}

/// The reading side: cursors from the start or from now.
pub(crate) struct EventLog(Arc<Log>);

impl EventLog {
    /// A cursor at the first event (or the oldest one still kept).
    pub fn cursor_at_start(&self) -> EventCursor {
        EventCursor {
            log: self.0.clone(),
            next: 0,
        }
    }

    /// A cursor at the next event to come.
    pub fn cursor_at_now(&self) -> EventCursor {
        let state = self.0.state();
        EventCursor {
            log: self.0.clone(),
            next: state.dropped + state.events.len() as u64,
        }
    }
}

/// A reader's place in the log.
pub(crate) struct EventCursor {
    log: Arc<Log>,
    next: u64,
}

impl EventCursor {
    /// The next event, waiting for it; `None` once the log has ended and everything was read.
    pub async fn next(&mut self) -> Option<AgentEvent> {
        loop {
            let changed = self.log.changed.notified();
            tokio::pin!(changed);
            // Registered before looking, so an event pushed in between still wakes us.
            changed.as_mut().enable();
            {
                let state = self.log.state();
                if self.next < state.dropped {
                    tracing::warn!(
                        skipped = state.dropped - self.next,
                        "run event subscriber fell behind; events skipped"
                    );
                    self.next = state.dropped;
                }
                let index = (self.next - state.dropped) as usize;
                if let Some(event) = state.events.get(index) {
                    self.next += 1;
                    return Some(event.clone());
                }
                if state.ended {
                    return None;
                }
            }
            changed.await;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::event::EventKind;

    fn event(iteration: u32) -> AgentEvent {
        AgentEvent::in_new_session(EventKind::ModelCallStarted { iteration })
    }

    fn iteration(event: &AgentEvent) -> u32 {
        match event.kind {
            EventKind::ModelCallStarted { iteration } => iteration,
            _ => u32::MAX,
        }
    }

    #[tokio::test]
    async fn readers_from_the_start_and_from_now_see_what_they_should() {
        let (writer, log) = event_log(8);
        writer.push(event(1));
        let mut early = log.cursor_at_start();
        let mut late = log.cursor_at_now();
        writer.push(event(2));
        drop(writer);
        assert_eq!(iteration(&early.next().await.unwrap()), 1);
        assert_eq!(iteration(&early.next().await.unwrap()), 2);
        assert!(early.next().await.is_none());
        assert_eq!(iteration(&late.next().await.unwrap()), 2);
        assert!(late.next().await.is_none());
    }

    #[tokio::test]
    async fn a_log_nobody_can_read_keeps_nothing() {
        let (writer, log) = event_log(8);
        writer.push(event(1));
        let mut cursor = log.cursor_at_start();
        drop(log);
        writer.push(event(2));
        assert_eq!(iteration(&cursor.next().await.unwrap()), 1);
        assert_eq!(iteration(&cursor.next().await.unwrap()), 2);
        drop(cursor);
        writer.push(event(3));
        assert_eq!(writer.0.state().events.len(), 2, "the last event was not kept");
    }

    #[tokio::test]
    async fn a_slow_reader_skips_what_was_dropped() {
        let (writer, log) = event_log(3);
        for i in 1..=5 {
            writer.push(event(i));
        }
        let mut cursor = log.cursor_at_start();
        assert_eq!(iteration(&cursor.next().await.unwrap()), 3);
    }

    #[tokio::test]
    async fn a_waiting_reader_wakes_for_each_event_and_the_end() {
        let (writer, log) = event_log(4);
        let mut cursor = log.cursor_at_start();
        let reader = tokio::spawn(async move {
            let mut seen = Vec::new();
            while let Some(e) = cursor.next().await {
                seen.push(iteration(&e));
            }
            seen
        });
        for i in 1..=10 {
            writer.push(event(i));
            tokio::task::yield_now().await;
        }
        drop(writer);
        let seen = reader.await.unwrap();
        assert_eq!(seen.last(), Some(&10));
        assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    }
}
