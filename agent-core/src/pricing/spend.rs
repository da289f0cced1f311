//! [`Spend`]: what a run or a session spent, priced calls and unpriced ones apart.

use serde::{Deserialize, Serialize};

/// What model calls cost together: the sum of the calls whose price is known, and how many
/// calls had no price. The total is known only when every call was priced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Spend {
    /// US dollars spent by the calls whose price is known.
    pub priced_usd: f64,
    /// Calls whose price is known.
    #[serde(default)]
    pub priced_calls: u32,
    /// Calls whose price is unknown.
    pub unpriced_calls: u32,
}

impl Spend {
    /// What is known of a session's earlier turns when nothing of their cost was recorded:
    /// they cost something, but not how much.
    pub const UNKNOWN: Spend = Spend {
        priced_usd: 0.0,
        priced_calls: 0,
        unpriced_calls: 1,
    };

    /// Counts one call: its cost, or `None` when its price is unknown.
    pub fn add_call(&mut self, cost: Option<f64>) {
        match cost {
            Some(usd) => {
                self.priced_usd += usd;
                self.priced_calls = self.priced_calls.saturating_add(1);
            }
            None => self.unpriced_calls = self.unpriced_calls.saturating_add(1),
        }
    }

    /// Counts everything `other` counted.
    pub fn add(&mut self, other: &Spend) {
        self.priced_usd += other.priced_usd;
        self.priced_calls = self.priced_calls.saturating_add(other.priced_calls);
        self.unpriced_calls = self.unpriced_calls.saturating_add(other.unpriced_calls);
    }

    /// The total in US dollars, when every call was priced.
    pub fn total_usd(&self) -> Option<f64> {
        (self.unpriced_calls == 0).then_some(self.priced_usd)
    }
}
