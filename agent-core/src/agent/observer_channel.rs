//! A bounded queue of events for an observer that runs somewhere else (another thread, a
//! Python or JS event loop), where it may fall behind.
//!
//! An [`EventObserver`](super::EventObserver) is called inline by the run, so it must not
//! block; one that hands events to a slower consumer needs a queue, and an unbounded one grows
//! without limit when the consumer stalls while runs stream. This one keeps at most `capacity`
//! events: when full it drops streamed tokens first (the newest one arriving, or else the
//! oldest one waiting), then the oldest event of any kind, and counts what it dropped so the
//! consumer can say so. The consumer takes everything waiting at once, so a consumer that
//! keeps up pays one wake-up per batch, not per event.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

use crate::event::AgentEvent;

/// A queue of at most `capacity` events (at least 1): its sending and its receiving side. It
/// holds `T`s made from the events (the events themselves by default, or a consumer's own
/// form of them, made on the sending thread and only for the events kept).
pub fn observer_channel<T>(capacity: usize) -> (ObserverSender<T>, ObserverReceiver<T>) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            events: VecDeque::new(),
            dropped: 0,
            sender_gone: false,
            receiver_gone: false,
        }),
        arrived: Notify::new(),
        capacity: capacity.max(1),
    });
    (ObserverSender(shared.clone()), ObserverReceiver(shared))
}

struct Shared<T> {
    state: Mutex<State<T>>,
    arrived: Notify,
    capacity: usize,
}

struct State<T> {
    events: VecDeque<Queued<T>>,
    /// Dropped since the receiver last took.
    dropped: u64,
    sender_gone: bool,
    receiver_gone: bool,
}

struct Queued<T> {
    item: T,
    /// Made from a streamed token ([`crate::EventKind::is_token`]): dropped first.
    token: bool,
}

impl<T> Shared<T> {
    fn state(&self) -> MutexGuard<'_, State<T>> {
        // Events are plain data: whatever panicked while holding the lock left them whole.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Queues events; never waits. Dropping it ends the queue once what waits has been taken.
pub struct ObserverSender<T = AgentEvent>(Arc<Shared<T>>);

impl ObserverSender<AgentEvent> {
    /// Queues a copy of `event`; see [`Self::send_with`].
    pub fn send(&self, event: &AgentEvent) -> bool {
        self.send_with(event, AgentEvent::clone)
    }
}

impl<T> ObserverSender<T> {
    /// Queues `convert(event)`, dropping an event when full (see the module docs); a token
    /// that arrives at a full queue is dropped without being converted. Returns whether the
    /// queue was empty before: a consumer that takes with [`ObserverReceiver::try_recv`]
    /// rather than awaiting [`ObserverReceiver::recv`] is to be woken then (and only then,
    /// since it takes everything each time).
    pub fn send_with(&self, event: &AgentEvent, convert: impl FnOnce(&AgentEvent) -> T) -> bool {
        let token = event.kind.is_token();
        // Only a token can be dropped on arrival; any other event is converted first.
        if token {
            let mut state = self.0.state();
            if state.receiver_gone {
                return false;
            }
            if state.events.len() >= self.0.capacity {
                state.dropped += 1;
                return false;
            }
        }
        // Converted outside the lock, so that senders on other threads do not wait for it.
        let item = convert(event);
        let mut state = self.0.state();
        if state.receiver_gone {
            return false;
        }
        if state.events.len() >= self.0.capacity {
            state.dropped += 1;
            let oldest_token = state.events.iter().position(|e| e.token).unwrap_or(0);
            state.events.remove(oldest_token);
        }
        let was_empty = state.events.is_empty();
        state.events.push_back(Queued { item, token });
        drop(state);
        if was_empty {
            // A permit is kept when the receiver is not waiting yet, so no wake-up is lost.
            self.0.arrived.notify_one();
        }
        was_empty
    }
}

impl<T> Drop for ObserverSender<T> {
    fn drop(&mut self) {
        self.0.state().sender_gone = true;
        self.0.arrived.notify_one();
    }
}

/// Everything that was waiting, oldest first.
#[derive(Debug)]
pub struct ObservedBatch<T = AgentEvent> {
    /// The events, in the order they were sent (less the dropped ones).
    pub events: Vec<T>,
    /// How many events were dropped since the previous batch because the queue was full.
    pub dropped: u64,
}

/// Takes the queued events in batches.
pub struct ObserverReceiver<T = AgentEvent>(Arc<Shared<T>>);

impl<T> ObserverReceiver<T> {
    /// Everything waiting, waiting for at least one event; `None` once the sender is gone and
    /// everything was taken.
    pub async fn recv(&mut self) -> Option<ObservedBatch<T>> {
        loop {
            if let Some(batch) = self.try_recv() {
                return Some(batch);
            }
            if self.0.state().sender_gone {
                return None;
            }
            self.0.arrived.notified().await;
        }
    }

    /// Everything waiting, or `None` when nothing is.
    pub fn try_recv(&mut self) -> Option<ObservedBatch<T>> {
        let mut state = self.0.state();
        if state.events.is_empty() && state.dropped == 0 {
            return None;
        }
        Some(ObservedBatch {
            events: state.events.drain(..).map(|queued| queued.item).collect(),
            dropped: std::mem::take(&mut state.dropped),
        })
    }
}

impl<T> Drop for ObserverReceiver<T> {
    fn drop(&mut self) {
        let mut state = self.0.state();
        state.receiver_gone = true;
        state.events.clear();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::event::EventKind;

    fn started(iteration: u32) -> AgentEvent {
        AgentEvent::in_new_session(EventKind::ModelCallStarted { iteration })
    }

    fn token(text: &str) -> AgentEvent {
        AgentEvent::in_new_session(EventKind::ContentToken { text: text.to_owned() })
    }

    fn names(batch: &ObservedBatch) -> Vec<String> {
        batch
            .events
            .iter()
            .map(|e| match &e.kind {
                EventKind::ModelCallStarted { iteration } => format!("started {iteration}"),
                EventKind::ContentToken { text } => format!("token {text}"),
                other => other.name().to_owned(),
            })
            .collect()
    }

    #[tokio::test]
    async fn a_batch_holds_everything_waiting_in_order() {
        let (tx, mut rx) = observer_channel(8);
        tx.send(&started(1));
        tx.send(&token("a"));
        tx.send(&started(2));
        let batch = rx.recv().await.unwrap();
        assert_eq!(names(&batch), ["started 1", "token a", "started 2"]);
        assert_eq!(batch.dropped, 0);
        assert!(rx.try_recv().is_none());
    }

    #[tokio::test]
    async fn when_full_tokens_go_first_then_the_oldest_event() {
        let (tx, mut rx) = observer_channel(3);
        tx.send(&started(1));
        tx.send(&token("a"));
        tx.send(&started(2));
        // Full: an arriving token is dropped.
        tx.send(&token("b"));
        // Full: an arriving event takes the oldest token's place.
        tx.send(&started(3));
        // Full and no token waits: the oldest event goes.
        tx.send(&started(4));
        let batch = rx.recv().await.unwrap();
        assert_eq!(names(&batch), ["started 2", "started 3", "started 4"]);
        assert_eq!(batch.dropped, 3);
        tx.send(&started(5));
        let next = rx.recv().await.unwrap();
        assert_eq!(names(&next), ["started 5"]);
        assert_eq!(next.dropped, 0, "the count starts again after each batch");
    }

    #[tokio::test]
    async fn a_waiting_receiver_wakes_for_events_and_ends_with_the_sender() {
        let (tx, mut rx) = observer_channel(4);
        let reader = tokio::spawn(async move {
            let mut seen = Vec::new();
            while let Some(batch) = rx.recv().await {
                seen.extend(names(&batch));
            }
            seen
        });
        for i in 1..=3 {
            tx.send(&started(i));
            tokio::task::yield_now().await;
        }
        drop(tx);
        assert_eq!(reader.await.unwrap(), ["started 1", "started 2", "started 3"]);
    }

    #[tokio::test]
    async fn events_sent_before_the_sender_went_are_still_taken() {
        let (tx, mut rx) = observer_channel(4);
        tx.send(&started(1));
        drop(tx);
        assert_eq!(names(&rx.recv().await.unwrap()), ["started 1"]);
        assert!(rx.recv().await.is_none());
    }

    #[test]
    fn a_sender_says_when_a_taking_consumer_needs_waking_and_converts_only_what_it_keeps() {
        let (tx, mut rx) = observer_channel::<String>(2);
        let converted = std::cell::Cell::new(0);
        let name = |e: &AgentEvent| {
            converted.set(converted.get() + 1);
            e.kind.name().to_owned()
        };
        assert!(tx.send_with(&started(1), name), "the first event wakes");
        assert!(!tx.send_with(&token("a"), name), "the queue was not empty");
        assert!(!tx.send_with(&token("b"), name), "full: dropped");
        assert_eq!(converted.get(), 2, "a dropped token is not converted");
        let batch = rx.try_recv().unwrap();
        assert_eq!(batch.events, ["model_call_started", "content_token"]);
        assert_eq!(batch.dropped, 1);
        assert!(tx.send_with(&started(2), name), "taken empty: wakes again");
    }

    #[test]
    fn nothing_is_kept_once_the_receiver_is_gone() {
        let (tx, rx) = observer_channel(4);
        drop(rx);
        tx.send(&started(1));
        assert!(tx.0.state().events.is_empty());
    }
}
