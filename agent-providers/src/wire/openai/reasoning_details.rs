//! OpenRouter's streamed `reasoning_details`: items merged by `index` and `type`, kept as
//! opaque reasoning that must go back unchanged.

use std::collections::HashMap;

use serde_json::Value;

/// The merged items, in first-seen order. Items are found by key through a map, so a stream
/// of many items costs linear time (a scan of the list per item would be quadratic).
#[derive(Debug, Default)]
pub(crate) struct ReasoningDetails {
    list: Vec<Value>,
    /// `(index, type as JSON text)` to the position in `list`.
    by_key: HashMap<(u64, Option<String>), usize>,
}

impl ReasoningDetails {
    /// Merges one streamed item into the list, by its `index` and `type`: text-like fields are
    /// concatenated, other fields take the latest value. An item without an index is added.
    pub(crate) fn merge(&mut self, item: Value) {
        let key = item
            .get("index")
            .and_then(Value::as_u64)
            .map(|i| (i, item.get("type").map(Value::to_string)));
        let existing = key.as_ref().and_then(|k| self.by_key.get(k).copied());
        match (existing.and_then(|at| self.list.get_mut(at)), item) {
            (Some(Value::Object(target)), Value::Object(source)) => {
                for (key, value) in source {
                    match (target.get_mut(&key), &value) {
                        (Some(Value::String(old)), Value::String(new))
                            if matches!(key.as_str(), "text" | "summary" | "data") =>
                        {
                            old.push_str(new)
                        }
                        (_, Value::Null) => {}
                        _ => {
                            target.insert(key, value);
                        }
                    }
                }
            }
            (_, item) => {
                if let Some(key) = key {
                    self.by_key.insert(key, self.list.len());
                }
                self.list.push(item);
            }
        }
    }

    /// Takes the merged items out.
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = Value> + '_ {
        self.by_key.clear();
        self.list.drain(..)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    #[test]
    fn items_merge_by_index_and_type() {
        let mut details = ReasoningDetails::default();
        for item in [
            json!({"type": "reasoning.text", "index": 0, "text": "a", "format": "x"}),
            json!({"type": "reasoning.encrypted", "index": 0, "data": "e1"}),
            json!({"type": "reasoning.text", "index": 0, "text": "b", "signature": null}),
            json!({"type": "reasoning.text", "text": "no index"}),
            json!({"type": "reasoning.encrypted", "index": 0, "data": "e2", "id": "r1"}),
            json!("not an object"),
        ] {
            details.merge(item);
        }
        let merged: Vec<Value> = details.drain().collect();
        assert_eq!(
            merged,
            vec![
                json!({"type": "reasoning.text", "index": 0, "text": "ab", "format": "x"}),
                json!({"type": "reasoning.encrypted", "index": 0, "data": "e1e2", "id": "r1"}),
                json!({"type": "reasoning.text", "text": "no index"}),
                json!("not an object"),
            ]
        );
    }

    #[test]
    fn many_items_merge_in_linear_time() {
        // With a scan per item this is about 10^10 comparisons.
        let mut details = ReasoningDetails::default();
        for i in 0..200_000u64 {
            details.merge(json!({"type": "t", "index": i}));
            details.merge(json!({"type": "t", "index": i / 2, "text": "x"}));
        }
        assert_eq!(details.drain().count(), 200_000);
    }
}
