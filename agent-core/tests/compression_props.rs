//! Property tests: JSON compression always yields valid JSON within its limits.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use agent_core::{CompressionConfig, compress_json, compress_json_in_place};
use proptest::prelude::*;
use serde_json::Value;

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,800}".prop_map(Value::String),
    ];
    leaf.prop_recursive(10, 400, 12, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..12).prop_map(Value::Array),
            prop::collection::btree_map(".{0,12}", inner, 0..8).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn depth(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

fn check_limits(v: &Value, config: &CompressionConfig) {
    match v {
        Value::String(s) => {
            let limit = config.max_value_chars.max(config.head_chars + config.tail_chars + 40);
            assert!(s.chars().count() <= limit, "string of {} chars", s.chars().count());
        }
        Value::Array(a) => {
            assert!(a.len() <= config.max_array_items);
            a.iter().for_each(|x| check_limits(x, config));
        }
        Value::Object(o) => o.values().for_each(|x| check_limits(x, config)),
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn compression_always_yields_valid_bounded_json(input in arb_json()) {
        let config = CompressionConfig::default();
        let out = compress_json(&input, &config);
        let mut in_place = input.clone();
        let changed = compress_json_in_place(&mut in_place, &config);
        prop_assert_eq!(&in_place, &out, "in-place and copying compression agree");
        prop_assert_eq!(changed, out != input);
        let text = serde_json::to_string(&out).unwrap();
        let reparsed: Value = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(&reparsed, &out);
        // Wrapping arrays adds one object level per array, so depth grows by at most 2x.
        prop_assert!(depth(&out) <= 2 * (config.max_depth + 2));
        check_limits(&out, &config);
        // (Compressing the output again is not a fixed point: wrapping arrays pushes values one
        // level deeper, where the depth rule may replace them.)
    }
}
