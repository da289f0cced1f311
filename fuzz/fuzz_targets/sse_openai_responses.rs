//! An OpenAI Responses response body of arbitrary bytes, cut at arbitrary points, through the
//! SSE parser and the wire decoder (see `agent_fuzz::sse_stream`).
#![no_main]

use agent_fuzz::{SseInput, sse_stream};
use agent_providers::fuzzing::Wire;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: SseInput<'_>| sse_stream(Wire::OpenAiResponses, input));
