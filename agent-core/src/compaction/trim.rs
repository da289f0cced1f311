//! The deterministic trim: the fallback that always makes a request fit.

use serde::{Deserialize, Serialize};

use super::{SUMMARY_PREFIX, TokenEstimator};
use crate::message::{ContentPart, Message, Role};
use crate::provider::ModelRequest;

/// Replaces a tool result's content when its payload is dropped.
pub const PAYLOAD_REMOVED: &str = "[tool result removed to fit the context window]";
/// Replaces a large tool-call argument object when its payload is dropped.
const ARGS_REMOVED: &str = r#"{"_removed":"arguments removed to fit the context window"}"#;
/// Marks text cut to fit.
const TEXT_CUT: &str = "\n[... cut to fit the context window ...]\n";
/// Replaces an image dropped to fit.
const IMAGE_REMOVED: &str = "[image removed to fit the context window]";
/// First message when the kept history would otherwise not start with a user message.
pub const EARLIER_REMOVED: &str = "[Earlier messages of this conversation were removed to fit the context window.]";

/// What [`trim_to_fit`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrimReport {
    /// Tool results and tool-call arguments whose payload was replaced by a marker.
    pub payloads_dropped: usize,
    /// Whole messages dropped (oldest turns, then older steps of the last turn).
    pub messages_dropped: usize,
    /// Messages whose text was cut (the last resort).
    pub texts_cut: usize,
    /// The request's estimated tokens afterwards.
    pub estimated_tokens: u64,
    /// Whether the request now fits. Only false when the system prompt and tool schemas
    /// alone exceed the budget.
    pub fits: bool,
}

fn is_summary(m: &Message) -> bool {
    m.role == Role::User && m.text().starts_with(SUMMARY_PREFIX)
}

/// Shrinks `request.messages` until the request's estimate is at most `budget` tokens,
/// deterministically and in this order:
///
/// 1. oldest first, tool results lose their payload (replaced by a marker) and large
///    tool-call arguments are replaced by a placeholder object: every call keeps its result;
/// 2. the oldest turns are dropped whole (a compaction summary goes last), keeping the
///    current turn;
/// 3. older steps of the current turn are dropped (an assistant message always together with
///    its tool results), keeping its first message and its last step;
/// 4. text is cut (largest messages first) and images are dropped.
///
/// The result starts with a user message and never separates a tool call from its result.
pub fn trim_to_fit(request: &mut ModelRequest, budget: u64, estimator: &TokenEstimator) -> TrimReport {
    let fixed = estimator.calibrated(estimator.raw_fixed(request));
    let note = estimator.message(&Message::user(EARLIER_REMOVED));
    let mut report = TrimReport::default();
    let messages = &mut request.messages;
    let mut sizes: Vec<u64> = messages.iter().map(|m| estimator.message(m)).collect();
    let total = |sizes: &[u64]| fixed + note + sizes.iter().sum::<u64>();

    // 1. Tool payloads, oldest first.
    for i in 0..messages.len() {
        if total(&sizes) <= budget {
            break;
        }
        let m = &mut messages[i];
        let mut changed = false;
        if m.role == Role::Tool && m.text() != PAYLOAD_REMOVED {
            m.content = vec![ContentPart::text(PAYLOAD_REMOVED)];
            m.compressed = None;
            changed = true;
        }
        for call in &mut m.tool_calls {
            if call.arguments.len() > ARGS_REMOVED.len() {
                call.arguments = ARGS_REMOVED.to_owned();
                changed = true;
            }
        }
        if changed {
            report.payloads_dropped += 1;
            sizes[i] = estimator.message(m);
        }
    }

    // 2 and 3. Whole blocks: a block is a message and the tool results that follow it.
    if total(&sizes) > budget && messages.len() > 1 {
        let starts: Vec<usize> = (0..messages.len())
            .filter(|&i| i == 0 || messages[i].role != Role::Tool)
            .collect();
        let end_of = |b: usize| starts.get(b + 1).copied().unwrap_or(messages.len());
        let block_size = |b: usize, sizes: &[u64]| sizes[starts[b]..end_of(b)].iter().sum::<u64>();
        let last_turn = (0..starts.len())
            .rev()
            .find(|&b| messages[starts[b]].role == Role::User && !is_summary(&messages[starts[b]]))
            .unwrap_or(0);
        let mut dropped = vec![false; starts.len()];
        let mut order: Vec<usize> = (0..last_turn).filter(|&b| !is_summary(&messages[starts[b]])).collect();
        order.extend((0..last_turn).filter(|&b| is_summary(&messages[starts[b]])));
        order.extend(last_turn + 1..starts.len().saturating_sub(1));
        let mut current = total(&sizes);
        for b in order {
            if current <= budget {
                break;
            }
            dropped[b] = true;
            current -= block_size(b, &sizes);
        }
        if dropped.iter().any(|d| *d) {
            let mut kept = Vec::with_capacity(messages.len());
            let mut kept_sizes = Vec::with_capacity(messages.len());
            for (b, &start) in starts.iter().enumerate() {
                let range = start..end_of(b);
                if dropped[b] {
                    report.messages_dropped += range.len();
                } else {
                    kept.extend(messages[range.clone()].iter().cloned());
                    kept_sizes.extend_from_slice(&sizes[range]);
                }
            }
            *messages = kept;
            sizes = kept_sizes;
        }
    }

    // 4. Cut text, largest message first, and drop images.
    let cpt = estimator.chars_per_token;
    let mut by_size: Vec<usize> = (0..messages.len()).collect();
    by_size.sort_by(|&a, &b| sizes[b].cmp(&sizes[a]).then(a.cmp(&b)));
    for i in by_size {
        let current = total(&sizes);
        if current <= budget {
            break;
        }
        let excess = current - budget;
        let m = &mut messages[i];
        let mut cut = false;
        for part in &mut m.content {
            if matches!(part, ContentPart::Image { .. }) {
                *part = ContentPart::text(IMAGE_REMOVED);
                cut = true;
            }
        }
        let text_bytes: usize = m.content.iter().filter_map(|p| p.as_text()).map(str::len).sum();
        // Bytes to remove, with some slack for rounding and the marker.
        let remove = ((excess as f64 / estimator.factor) * cpt).ceil() as usize + TEXT_CUT.len() + 16;
        if text_bytes > TEXT_CUT.len() {
            let keep_total = text_bytes.saturating_sub(remove);
            let mut budget_left = keep_total;
            for part in &mut m.content {
                if let ContentPart::Text { text } = part {
                    if text.len() <= budget_left {
                        budget_left -= text.len();
                        continue;
                    }
                    let head = floor_char_boundary(text, budget_left * 2 / 3);
                    let tail_len = budget_left - head;
                    let tail_start = ceil_char_boundary(text, text.len() - tail_len);
                    *text = format!("{}{TEXT_CUT}{}", &text[..head], &text[tail_start..]);
                    budget_left = 0;
                    cut = true;
                }
            }
        }
        if m.role == Role::Tool {
            m.compressed = None;
        }
        if cut {
            report.texts_cut += 1;
            sizes[i] = estimator.message(m);
        }
    }

    if messages.first().is_some_and(|m| m.role != Role::User) {
        messages.insert(0, Message::user(EARLIER_REMOVED));
    }
    report.estimated_tokens = estimator.request(request);
    report.fits = report.estimated_tokens <= budget;
    report
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}
