//! page_scrape's HTML-to-text pass over arbitrary bytes: it must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = agent_tools::fuzzing::html_to_text(data);
});
