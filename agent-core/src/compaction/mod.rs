//! Keeping requests within the model's context window: token estimates, the compaction
//! trigger, and the deterministic trim that guarantees a request fits.
//!
//! Before every model call the loop estimates the request's input tokens. When the estimate
//! exceeds `ratio × max_input_tokens` ([`CompactionConfig`]), older turns are summarised by the
//! model into one summary message and a cursor records what the summary covers; the compacted
//! messages stay stored (the person still sees them) but are no longer sent. A tool call is
//! never separated from its result. Summarising gets at most [`CompactionConfig::max_attempts`]
//! tries; when it fails, or when the summary request itself would not fit, [`trim_to_fit`]
//! drops the oldest tool payloads, then the oldest turns, then cuts text, so the next request
//! always fits: compaction can never brick a conversation. The same trim runs when the
//! provider answers `ContextOverflow` despite the estimate.

mod summary;
mod trim;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::message::{ContentPart, Message, Role};
use crate::provider::ModelRequest;

pub(crate) use summary::{render_transcript, summary_request};
pub use trim::{TrimReport, trim_to_fit};

/// Text that starts the summary message the model sees in place of compacted turns.
pub const SUMMARY_PREFIX: &str = "[Summary of the earlier conversation, which was compacted to save context]";

/// When and how to compact. Part of [`crate::AgentConfig`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CompactionConfig {
    /// Whether to compact at all (default true). Without a known `max_input_tokens` (here or
    /// from [`crate::Provider::max_input_tokens`]) nothing is compacted until the provider
    /// answers `ContextOverflow`.
    pub enabled: bool,
    /// Compact when the estimated input exceeds `ratio × max_input_tokens` (default 0.7).
    pub ratio: f64,
    /// The model's input window in tokens; `None` (the default) asks the provider.
    pub max_input_tokens: Option<u64>,
    /// Tries at summarising before falling back to the trim (default 3).
    pub max_attempts: u32,
    /// Output tokens requested for the summary (default 1024); also reserved when checking
    /// that the summary request fits.
    pub summary_max_tokens: u32,
    /// Characters per token of the uncalibrated heuristic (default 4).
    pub chars_per_token: f64,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        CompactionConfig {
            enabled: true,
            ratio: 0.7,
            max_input_tokens: None,
            max_attempts: 3,
            summary_max_tokens: 1024,
            chars_per_token: 4.0,
        }
    }
}

/// Tokens an image is assumed to cost (providers bill images by size; this is a typical
/// screenshot).
const IMAGE_TOKENS: u64 = 1_000;
/// Per-message framing tokens (role markers, separators).
const MESSAGE_OVERHEAD: u64 = 4;

/// A token estimate: characters divided by a characters-per-token heuristic, multiplied by a
/// factor calibrated from the input tokens providers report.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TokenEstimator {
    chars_per_token: f64,
    factor: f64,
    samples: u32,
}

impl Default for TokenEstimator {
    fn default() -> Self {
        TokenEstimator::new(4.0)
    }
}

impl TokenEstimator {
    /// An uncalibrated estimator.
    pub fn new(chars_per_token: f64) -> Self {
        TokenEstimator {
            chars_per_token: if chars_per_token > 0.0 { chars_per_token } else { 4.0 },
            factor: 1.0,
            samples: 0,
        }
    }

    /// Changes the characters-per-token heuristic (keeping the calibration).
    pub(crate) fn set_chars_per_token(&mut self, chars_per_token: f64) {
        if chars_per_token > 0.0 {
            self.chars_per_token = chars_per_token;
        }
    }

    /// The calibration factor (1.0 until usage has been observed).
    pub fn factor(&self) -> f64 {
        self.factor
    }

    fn chars(&self, n: usize) -> u64 {
        (n as f64 / self.chars_per_token).ceil() as u64
    }

    /// Uncalibrated tokens of one message.
    pub fn raw_message(&self, m: &Message) -> u64 {
        let mut tokens = MESSAGE_OVERHEAD;
        for part in &m.content {
            tokens += match part {
                ContentPart::Text { text } => self.chars(text.len()),
                ContentPart::Image { .. } => IMAGE_TOKENS,
            };
        }
        for call in &m.tool_calls {
            tokens += MESSAGE_OVERHEAD + self.chars(call.name.len() + call.arguments.len() + call.id.len());
        }
        if let Some(r) = &m.reasoning {
            tokens += self.chars(r.text.len());
        }
        tokens
    }

    /// Uncalibrated tokens of the parts of a request other than its messages (system prompt
    /// and tool schemas).
    pub fn raw_fixed(&self, request: &ModelRequest) -> u64 {
        let system = request
            .system
            .as_ref()
            .map_or(0, |s| self.chars(s.len()) + MESSAGE_OVERHEAD);
        let tools: u64 = request
            .tools
            .iter()
            .map(|t| self.chars(t.name.len() + t.description.len() + t.parameters.to_string().len()) + MESSAGE_OVERHEAD)
            .sum();
        system + tools
    }

    /// Uncalibrated tokens of a whole request.
    pub fn raw_request(&self, request: &ModelRequest) -> u64 {
        self.raw_fixed(request) + request.messages.iter().map(|m| self.raw_message(m)).sum::<u64>()
    }

    /// Applies the calibration to an uncalibrated count.
    pub fn calibrated(&self, raw: u64) -> u64 {
        (raw as f64 * self.factor).ceil() as u64
    }

    /// Calibrated tokens of one message.
    pub fn message(&self, m: &Message) -> u64 {
        self.calibrated(self.raw_message(m))
    }

    /// Calibrated tokens of a whole request.
    pub fn request(&self, request: &ModelRequest) -> u64 {
        self.calibrated(self.raw_request(request))
    }

    /// Learns from a provider's report: a request estimated at `raw` (uncalibrated) tokens
    /// cost `reported` input tokens. Tiny requests are ignored (fixed overheads dominate them);
    /// each sample moves the factor halfway, within 0.25..=4.
    pub fn observe(&mut self, raw: u64, reported: u64) {
        if raw < 32 || reported == 0 {
            return;
        }
        let sample = (reported as f64 / raw as f64).clamp(0.25, 4.0);
        self.factor = if self.samples == 0 {
            sample
        } else {
            (self.factor + sample) / 2.0
        };
        self.samples = self.samples.saturating_add(1);
    }

    /// Raises the factor after the provider refused a request we thought fitted.
    pub(crate) fn underestimated(&mut self) {
        self.factor = (self.factor * 1.2).min(4.0);
    }
}

/// The summary message the model sees first once older turns are compacted.
pub fn summary_message(summary: &str) -> Message {
    let mut m = Message::user(format!("{SUMMARY_PREFIX}\n{summary}"));
    m.visibility = crate::message::Visibility::MODEL_ONLY;
    m
}

/// Where a history may be cut: before a message that is not a tool result (a tool result
/// always directly follows the assistant message that called it, so cutting elsewhere would
/// separate a call from its result).
pub(crate) fn is_safe_cut(messages: &[Message], index: usize) -> bool {
    index < messages.len() && messages[index].role != Role::Tool
}

/// Chooses how many leading messages of `messages[from..]` to summarise, as an index `cut`
/// (messages `from..cut` are summarised, `cut..` are kept). It keeps the current turn (from
/// `turn_start`) whole when what is kept fits in `keep_budget` tokens; otherwise it keeps as
/// little as it must: the shortest tail starting at a safe cut that fits, or the last message
/// group. `None` when nothing can be summarised.
pub(crate) fn choose_cut(
    messages: &[Message],
    from: usize,
    turn_start: usize,
    keep_budget: u64,
    estimator: &TokenEstimator,
) -> Option<usize> {
    let safe: Vec<usize> = (from + 1..messages.len())
        .filter(|&i| is_safe_cut(messages, i))
        .collect();
    let last_safe = *safe.last()?;
    let mut suffix = vec![0u64; messages.len() + 1];
    for i in (0..messages.len()).rev() {
        suffix[i] = suffix[i + 1] + estimator.message(&messages[i]);
    }
    let whole_turn = safe.iter().rev().find(|&&i| i <= turn_start).copied();
    if let Some(c) = whole_turn
        && suffix[c] <= keep_budget
    {
        return Some(c);
    }
    let start = whole_turn.unwrap_or(from + 1);
    Some(
        safe.iter()
            .copied()
            .filter(|&i| i >= start)
            .find(|&i| suffix[i] <= keep_budget)
            .unwrap_or(last_safe),
    )
}

#[cfg(test)]
mod tests;
