//! A OpenAI-compatible Chat Completions response body of arbitrary bytes, cut at arbitrary points, through the SSE
//! parser and the wire decoder (as streamed, within the response cap) and as a non-streamed
//! body: no panic, the caps hold, and the SSE events do not depend on the cuts.
#![no_main]

use agent_providers::fuzzing::{self, Wire};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    /// Where the body is cut into chunks (modulo its length).
    cuts: Vec<u16>,
    /// Small caps, so that inputs of a few KiB reach them; or the defaults.
    small_limits: bool,
    body: &'a [u8],
}

fuzz_target!(|input: Input<'_>| {
    let cuts: Vec<usize> = input.cuts.iter().map(|&c| usize::from(c)).collect();
    let limits = if input.small_limits {
        fuzzing::small_limits()
    } else {
        agent_providers::Limits::default()
    };
    fuzzing::sse_stream(Wire::OpenAi, input.body, &cuts, limits);
});
