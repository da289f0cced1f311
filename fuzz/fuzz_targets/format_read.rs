//! page_read's snapshot format and the refusal format over arbitrary page JSON (what a hostile
//! page could make page.js return): they must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    agent_tools::fuzzing::format_read(data);
});
