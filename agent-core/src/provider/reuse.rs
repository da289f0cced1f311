//! What one model call leaves for encoding the next one of the same conversation.
//!
//! Within a turn, each request repeats the previous one's messages and adds a few. Encoding
//! all of them again made a model call's cost grow with the conversation: escaping the same
//! JSON strings on every call was about a fifth of the loop's own work with small tool
//! results, and most of it with large ones. A provider may keep its encoding of the messages
//! here and encode only what is new.

use std::any::Any;
use std::fmt;
use std::sync::{Arc, Mutex};

/// A provider's encoding of a conversation's messages, kept from one request to the next,
/// and how many of this request's messages that encoding still describes.
///
/// Each request of a conversation gets its own value from the previous request's
/// ([`next_request`](Self::next_request)), which says how many leading messages the two have
/// in common. A provider [takes](Self::take) its memo, reuses its encoding of those messages,
/// encodes the rest, and [puts](Self::put) the memo of the whole request back. A memo is
/// only ever reused for the request it was put for or the one right after it: one left by an
/// older request, or by a request whose messages were edited afterwards, is not handed out.
///
/// The default value shares its memo with no other request and vouches for no message:
/// everything is encoded. Cloning shares the memo (a fallback provider or a retry of the same
/// request finds what the first attempt left). Two values are always equal, and the value is
/// never serialized: it changes how a request is encoded, never what the request says.
#[derive(Clone, Default)]
pub struct EncodingReuse {
    /// This request's number among the requests sharing `slot`.
    request: u64,
    /// The number of the request whose first `unchanged` messages this one repeats.
    after: Option<u64>,
    unchanged: usize,
    slot: Arc<Mutex<Slot>>,
}

#[derive(Default)]
struct Slot {
    /// The last number given to a request.
    last_request: u64,
    /// A memo, and the number of the request it was put for.
    memo: Option<(u64, Box<dyn Any + Send>)>,
}

impl EncodingReuse {
    /// A value that vouches for no message and has no memo yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value for the next request of the conversation, whose first `unchanged` messages
    /// are exactly (same content, same order) the messages of the request `self` was made
    /// for.
    ///
    /// Whoever builds requests themselves must only vouch for messages that are the same: a
    /// provider sends its kept encoding of them without looking at them again.
    pub fn next_request(&self, unchanged: usize) -> Self {
        let request = match self.slot.lock() {
            Ok(mut slot) => {
                slot.last_request += 1;
                slot.last_request
            }
            // A poisoned slot hands out nothing (see `take`); the value still works.
            Err(_) => 0,
        };
        EncodingReuse {
            request,
            after: Some(self.request),
            unchanged,
            slot: self.slot.clone(),
        }
    }

    /// How many leading messages this request has in common with the previous one.
    pub fn unchanged(&self) -> usize {
        self.unchanged
    }

    /// Says that the messages from `index` on were edited: lowers
    /// [`unchanged`](Self::unchanged) to `index` if it is higher.
    pub fn changed_from(&mut self, index: usize) {
        self.unchanged = self.unchanged.min(index);
    }

    /// Takes the memo if it is a `T` (another provider's memo is dropped) and may serve this
    /// request, with how many of its leading messages it may be reused for: all of them
    /// (`usize::MAX`) when it was put for this very request (a retry, a fallback), else
    /// [`unchanged`](Self::unchanged). The slot stays empty until [`put`](Self::put), so a
    /// provider that fails before encoding the request leaves nothing behind.
    pub fn take<T: Any + Send>(&self) -> Option<(T, usize)> {
        let (made_for, memo) = self.slot.lock().ok()?.memo.take()?;
        let reusable = if made_for == self.request {
            usize::MAX
        } else if Some(made_for) == self.after {
            self.unchanged
        } else {
            return None;
        };
        let memo = memo.downcast::<T>().ok()?;
        Some((*memo, reusable))
    }

    /// Keeps `memo`, the provider's encoding of this request's messages, for this request's
    /// retries and the next request.
    pub fn put<T: Any + Send>(&self, memo: T) {
        if let Ok(mut slot) = self.slot.lock() {
            slot.memo = Some((self.request, Box::new(memo)));
        }
    }
}

impl fmt::Debug for EncodingReuse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EncodingReuse")
            .field("request", &self.request)
            .field("after", &self.after)
            .field("unchanged", &self.unchanged)
            .finish_non_exhaustive()
    }
}

impl PartialEq for EncodingReuse {
    /// Always equal: the value changes how a request is encoded, never what it says.
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_memo_serves_its_own_request_and_the_next_one() {
        let first = EncodingReuse::new();
        assert_eq!(first.take::<String>(), None);
        first.put(String::from("first"));
        // A retry of the same request may reuse everything.
        assert_eq!(first.take::<String>(), Some(("first".to_owned(), usize::MAX)));
        first.put(String::from("first"));
        let second = first.next_request(3);
        assert_eq!(second.take::<String>(), Some(("first".to_owned(), 3)));
        // Taken: the slot is empty until the second request's memo is put.
        assert_eq!(first.take::<String>(), None);
        second.put(String::from("second"));
        assert_eq!(first.take::<String>(), None, "not for an older request");
    }

    #[test]
    fn a_memo_skipped_by_a_request_is_not_reused_after_it() {
        let first = EncodingReuse::new();
        first.put(String::from("first"));
        // The second request is never encoded (over budget, or another provider's turn);
        // its messages may differ from the first's where it did not vouch for them.
        let second = first.next_request(2);
        let third = second.next_request(4);
        assert_eq!(third.take::<String>(), None);
    }

    #[test]
    fn another_providers_memo_is_dropped() {
        let first = EncodingReuse::new();
        first.put(vec![1u8]);
        assert_eq!(first.next_request(1).take::<String>(), None);
        assert_eq!(first.take::<Vec<u8>>(), None, "dropped, not put back");
    }

    #[test]
    fn vouching_only_goes_down_when_messages_change() {
        let mut reuse = EncodingReuse::new().next_request(5);
        reuse.changed_from(7);
        assert_eq!(reuse.unchanged(), 5);
        reuse.changed_from(2);
        assert_eq!(reuse.unchanged(), 2);
        assert_eq!(EncodingReuse::new().unchanged(), 0);
    }
}
