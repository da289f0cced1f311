//! A tool's JSON Schema of arbitrary bytes translated for Gemini: no panic, and an output
//! bounded by the translation's budget however the `$ref`s and `anyOf`s repeat.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    agent_providers::fuzzing::gemini_schema(data);
});
