//! An error response of arbitrary status, headers (`retry-after`, `retry-after-ms`,
//! `x-should-retry` among them) and body, mapped to a provider error: no panic, and retry
//! hints within the longest one kept.
#![no_main]

use agent_providers::fuzzing;
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

/// Header names the mapping reads, so that most inputs exercise them.
const NAMES: [&str; 4] = ["retry-after", "retry-after-ms", "x-should-retry", "content-type"];

#[derive(Arbitrary, Debug)]
struct Input {
    status: u16,
    /// (index into `NAMES`, or any name when past it; value)
    headers: Vec<(u8, Vec<u8>, Vec<u8>)>,
    /// Whether the body was cut at the error-body cap.
    cut: bool,
    body: Vec<u8>,
}

fuzz_target!(|input: Input| {
    let headers: Vec<(Vec<u8>, Vec<u8>)> = input
        .headers
        .into_iter()
        .map(|(which, name, value)| match NAMES.get(usize::from(which)) {
            Some(known) => (known.as_bytes().to_vec(), value),
            None => (name, value),
        })
        .collect();
    fuzzing::provider_error(input.status, &headers, &input.body, input.cut);
});
