//! The conversation as the loop holds it (written through to the store), the model's view
//! of it, and its repair after a crash.

mod repair;

use std::sync::Arc;

use crate::compaction::{TokenEstimator, summary_message};
use crate::message::{ContentPart, Message, Role};
use crate::provider::EncodingReuse;
use crate::session::SessionId;
use crate::store::{Store, StoreError};

/// A session's conversation as the loop holds it, written through to the store as it is
/// produced.
///
/// Without a store `messages` is the whole conversation; a session loaded from a store starts
/// at its latest compaction's cursor (the store keeps everything before it, and the person
/// sees it through `Session::messages`). The model sees the compaction summary, then the
/// messages after it.
#[derive(Debug, Default)]
pub(crate) struct History {
    pub messages: Vec<Message>,
    /// The store's sequence number of the last message of `messages`.
    pub last_seq: u64,
    /// Index of the first message of the current turn; tool results before it are replayed in
    /// their compressed form.
    pub turn_start: usize,
    /// The latest compaction summary, sent to the model before the messages it did not cover.
    pub summary: Option<String>,
    /// How many leading entries of `messages` the summary covers (kept, but not sent).
    pub compacted: usize,
    /// Token estimates, calibrated from reported usage.
    pub estimator: TokenEstimator,
    /// A tighter input limit learnt from a `ContextOverflow` answer.
    pub overflow_limit: Option<u64>,
    /// The uncalibrated estimate of the last request sent (for calibration).
    pub last_raw_estimate: Option<u64>,
    /// The turn (its `turn_start`) in which summarising failed, so it is not retried on every
    /// model call of that turn.
    pub summary_failed_turn: Option<usize>,
    /// A store write failed: the messages here may differ from the store's, so the next turn
    /// reloads them from the store first.
    pub stale: bool,
    /// The last request's messages, kept to build the next request by appending what came
    /// since (cloning the whole history for every model call was a tenth of the loop's time).
    view_cache: Option<ViewCache>,
}

/// A model view and what it was built from.
#[derive(Debug)]
struct ViewCache {
    messages: Vec<Message>,
    /// What the request made of these messages left for encoding the next one.
    reuse: EncodingReuse,
    /// How many entries of `History::messages` it covers.
    covers: usize,
    turn_start: usize,
    compacted: usize,
}

impl History {
    /// Loads a stored session: the latest compaction summary and the messages after its
    /// cursor (the whole session when it was never compacted).
    pub async fn load(store: &dyn Store, session: &SessionId) -> Result<Self, StoreError> {
        Self::load_through(store, session, None).await
    }

    /// [`Self::load`] as of sequence number `through` (the whole session for `None`): the
    /// messages after it, and a compaction whose cursor passed it, are left out.
    pub async fn load_through(
        store: &dyn Store,
        session: &SessionId,
        through: Option<u64>,
    ) -> Result<Self, StoreError> {
        let through = through.unwrap_or(u64::MAX);
        let compaction = store.latest_compaction(session).await?.filter(|c| c.cursor <= through);
        let cursor = compaction.as_ref().map_or(0, |c| c.cursor);
        let mut stored = store.load_messages(session, cursor).await?;
        stored.retain(|m| m.seq <= through);
        let last_seq = match stored.last() {
            Some(m) => m.seq,
            None => store.last_seq(session).await?.min(through),
        };
        let messages: Vec<Message> = stored.into_iter().map(|m| m.message).collect();
        Ok(History {
            turn_start: messages.len(),
            messages,
            last_seq,
            summary: compaction.map(|c| c.summary),
            ..History::default()
        })
    }

    /// Whether a message in memory holds the tool call `call_id`.
    pub fn has_call(&self, call_id: &str) -> bool {
        self.messages
            .iter()
            .any(|m| m.tool_calls.iter().any(|c| c.id == call_id))
    }

    /// The store's sequence number of `messages[index]`.
    pub fn seq_of(&self, index: usize) -> u64 {
        (self.last_seq + 1 + index as u64).saturating_sub(self.messages.len() as u64)
    }

    /// Appends messages in memory and writes them through to the store (if any).
    pub async fn push(
        &mut self,
        store: Option<&Arc<dyn Store>>,
        session: &SessionId,
        batch: Vec<Message>,
    ) -> Result<(), StoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        if let Some(store) = store {
            store.append_messages(session, self.last_seq + 1, &batch).await?;
        }
        self.last_seq += batch.len() as u64;
        self.messages.extend(batch);
        Ok(())
    }

    /// What the model may see: the compaction summary, then the visible messages after it,
    /// with tool results of earlier turns replaced by their compressed form.
    pub fn model_view(&self) -> Vec<Message> {
        self.view_with_turn_start(self.turn_start)
    }

    /// What the model would see on the next turn (every tool result so far is from an earlier
    /// turn by then), summary included.
    pub fn next_turn_view(&self) -> Vec<Message> {
        self.view_with_turn_start(self.messages.len())
    }

    /// [`Self::model_view`], built from the last request's messages when they are still what
    /// the model should see (same turn, no compaction since): only newer messages are cloned.
    /// With it, what the last request left for encoding the next one, vouching for the
    /// messages the two have in common.
    pub fn take_model_view(&mut self) -> (Vec<Message>, EncodingReuse) {
        match self.view_cache.take() {
            Some(cache)
                if cache.turn_start == self.turn_start
                    && cache.compacted == self.compacted
                    && cache.covers <= self.messages.len() =>
            {
                let reuse = cache.reuse.next_request(cache.messages.len());
                let mut view = cache.messages;
                self.extend_view(&mut view, cache.covers, self.turn_start);
                (view, reuse)
            }
            _ => (self.model_view(), EncodingReuse::new()),
        }
    }

    /// Keeps the messages of a request that was exactly [`Self::take_model_view`]'s answer
    /// (edited only where its `reuse` no longer vouches for them), for the next one.
    pub fn keep_model_view(&mut self, messages: Vec<Message>, reuse: EncodingReuse) {
        self.view_cache = Some(ViewCache {
            messages,
            reuse,
            covers: self.messages.len(),
            turn_start: self.turn_start,
            compacted: self.compacted,
        });
    }

    /// Forgets the kept view (the summary changed).
    pub fn forget_model_view(&mut self) {
        self.view_cache = None;
    }

    fn view_with_turn_start(&self, turn_start: usize) -> Vec<Message> {
        let from = self.compacted.min(self.messages.len());
        let mut view = Vec::with_capacity(self.messages.len() - from + 1);
        if let Some(summary) = &self.summary {
            view.push(summary_message(summary));
        }
        self.extend_view(&mut view, from, turn_start);
        view
    }

    /// Appends what the model sees of `messages[from..]`.
    fn extend_view(&self, view: &mut Vec<Message>, from: usize, turn_start: usize) {
        for (i, m) in self.messages.iter().enumerate().skip(from) {
            if !m.visibility.model {
                continue;
            }
            match (&m.compressed, i < turn_start && m.role == Role::Tool) {
                (Some(compressed), true) => {
                    let mut replay = m.clone();
                    replay.content = vec![ContentPart::text(compressed.clone())];
                    replay.compressed = None;
                    view.push(replay);
                }
                _ => view.push(m.clone()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolCall;

    fn tool_turn(history: &mut History, n: usize) {
        let call = ToolCall::new(format!("call_{n}"), "read", &serde_json::json!({}));
        history.messages.push(Message::assistant_with_tools("", vec![call]));
        let mut result = Message::tool_result(format!("call_{n}"), "read", "x".repeat(200), false);
        result.compressed = Some("x...".into());
        history.messages.push(result);
    }

    /// The view built by appending to the last request is the view built from scratch, across
    /// iterations, hidden messages, a new turn (earlier results compressed) and a summary; and
    /// it vouches for exactly the messages it kept from the last request.
    #[test]
    fn the_kept_view_plus_new_messages_is_the_model_view() {
        let mut history = History::default();
        history.messages.push(Message::user("first"));
        let mut kept = 0;
        for step in 0..3 {
            let (view, reuse) = history.take_model_view();
            assert_eq!(view, history.model_view(), "step {step}");
            assert_eq!(reuse.unchanged(), kept, "step {step}");
            kept = view.len();
            history.keep_model_view(view, reuse);
            tool_turn(&mut history, step);
            let mut hidden = Message::user("for the person only");
            hidden.visibility.model = false;
            history.messages.push(hidden);
        }
        // A new turn: the results above are now replayed compressed.
        history.turn_start = history.messages.len();
        history.messages.push(Message::user("second"));
        let (view, reuse) = history.take_model_view();
        assert_eq!(view, history.model_view());
        assert_eq!(reuse.unchanged(), 0, "a new turn vouches for nothing");
        assert!(view.iter().any(|m| m.text() == "x..."));
        let kept = view.len();
        history.keep_model_view(view, reuse);
        tool_turn(&mut history, 9);
        let (view, reuse) = history.take_model_view();
        assert_eq!(view, history.model_view());
        assert_eq!(reuse.unchanged(), kept);

        // A summary replaces what it covers.
        history.summary = Some("earlier: reads".into());
        history.compacted = 4;
        history.forget_model_view();
        let (view, reuse) = history.take_model_view();
        assert_eq!(view, history.model_view());
        assert_eq!(reuse.unchanged(), 0);
        history.keep_model_view(view, reuse);
        history.messages.push(Message::assistant("done"));
        assert_eq!(history.take_model_view().0, history.model_view());
    }
}
