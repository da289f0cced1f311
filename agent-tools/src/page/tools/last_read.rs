//! The last page_read of one set of page tools, so that the next read of the same document can
//! answer with what changed (`since_last`). One snapshot per set (per agent and its tab), so
//! the memory stays bounded whatever the agent reads.

use std::sync::Mutex;

use super::super::format::Snapshot;

/// Most characters one remembered read may hold. page.js lists at most 5 000 elements and
/// 3 000 items in all of headings and landmarks, so only a
/// page of unusually long lines goes past it; such a read is not remembered, and the next
/// `since_last` read is a full one.
const MAX_REMEMBERED_CHARS: usize = 2_000_000;

/// The last read, if it was small enough to keep.
#[derive(Default)]
pub(crate) struct LastRead(Mutex<Option<Snapshot>>);

impl LastRead {
    /// Remembers `next` as the last read and returns the one it replaces.
    pub(crate) fn replace(&self, next: Snapshot) -> Option<Snapshot> {
        let keep = (next.size() <= MAX_REMEMBERED_CHARS).then_some(next);
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::replace(&mut *slot, keep)
    }
}
