//! JSON compression over arbitrary tool-result JSON (from pages, files, MCP servers) and
//! arbitrary settings: never panics, always yields valid JSON, and the in-place form agrees
//! with the pure one.
#![no_main]

use agent_core::{CompressionConfig, compress_json, compress_json_in_place};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    max_depth: u8,
    max_array_items: u8,
    keep_array_items: u8,
    max_value_chars: u16,
    head_chars: u16,
    tail_chars: u16,
    json: &'a [u8],
}

fuzz_target!(|input: Input<'_>| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(input.json) else {
        return;
    };
    for config in [
        CompressionConfig::default(),
        CompressionConfig {
            max_depth: input.max_depth as usize,
            max_array_items: input.max_array_items as usize,
            keep_array_items: input.keep_array_items as usize,
            max_value_chars: input.max_value_chars as usize,
            head_chars: input.head_chars as usize,
            tail_chars: input.tail_chars as usize,
        },
    ] {
        let pure = compress_json(&value, &config);
        let mut in_place = value.clone();
        compress_json_in_place(&mut in_place, &config);
        assert_eq!(pure, in_place);
        let text = pure.to_string();
        assert!(serde_json::from_str::<serde_json::Value>(&text).is_ok());
    }
});
