//! What several fuzz targets share: the SSE input (a body and where to cut it) and how it is
//! run through a provider's stream decoder.

use agent_providers::fuzzing::{self, Wire};
use arbitrary::Arbitrary;

/// A response body of arbitrary bytes and the points where it is cut into chunks.
#[derive(Arbitrary, Debug)]
pub struct SseInput<'a> {
    /// Where the body is cut into chunks (modulo its length).
    cuts: Vec<u16>,
    /// Small caps, so that inputs of a few KiB reach them; or the defaults.
    small_limits: bool,
    body: &'a [u8],
}

/// Runs `input` through the SSE parser and `wire`'s decoder, as streamed (within the response
/// cap) and as a non-streamed body: no panic, the caps hold, and the SSE events do not depend
/// on the cuts.
pub fn sse_stream(wire: Wire, input: SseInput<'_>) {
    let cuts: Vec<usize> = input.cuts.iter().map(|&c| usize::from(c)).collect();
    let limits = if input.small_limits {
        fuzzing::small_limits()
    } else {
        agent_providers::Limits::default()
    };
    fuzzing::sse_stream(wire, input.body, &cuts, limits);
}
