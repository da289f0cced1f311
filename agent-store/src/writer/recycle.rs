//! Memory goes back to the thread that allocated it. A message's row and a tool-call record
//! are allocated on the loop's threads and consumed on the writer's; freed there, every one of
//! them takes the allocating thread's arena lock (glibc), and the writer ended up blocked on
//! that lock about twice per turn of the loop bench, each a full context switch. So the writer
//! hands them back and the next submitting call frees them.

use std::sync::Mutex;

use agent_core::ToolCallRecord;

use crate::rows::MessageRow;

/// At most this many spent items wait to be freed; beyond it the writer frees them itself.
const MAX_WAITING: usize = 4096;

/// What the writer is done with.
#[expect(dead_code, reason = "held only to be dropped on the submitting thread")]
pub(super) enum Spent {
    Rows(Vec<MessageRow>),
    Record(ToolCallRecord),
}

/// The way back. Neither side ever waits for the other: whoever finds it locked frees its
/// own share instead.
#[derive(Default)]
pub(super) struct Returns(Mutex<Vec<Spent>>);

impl Returns {
    /// The writer's side.
    pub fn give_back(&self, spent: Spent) {
        if let Ok(mut waiting) = self.0.try_lock()
            && waiting.len() < MAX_WAITING
        {
            waiting.push(spent);
        }
    }

    /// The submitting side: frees what came back (the list keeps its capacity).
    pub fn free_returned(&self) {
        if let Ok(mut waiting) = self.0.try_lock() {
            waiting.clear();
        }
    }
}
