//! Tab handle resolution over arbitrary open tabs and arbitrary model-written handles: never
//! panics; every handle resolves back to its own tab; an `ok` answer names a tab that starts
//! with the normalised input.
#![no_main]

use agent_core::tabs::TabId;
use agent_core::tabs::{HandleIndex, Resolution, normalize_prefix};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    /// Raw 128-bit ids; small values make long shared prefixes likely.
    tabs: Vec<u128>,
    /// What the model typed.
    queries: Vec<String>,
}

fn tab_id(raw: u128) -> Option<TabId> {
    // The layout of a UUID v4 (version and variant digits fixed), so TabId::parse accepts it.
    let hex = format!("{raw:032x}");
    let text = format!(
        "{}-{}-4{}-8{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        &hex[17..20],
        &hex[20..32]
    );
    TabId::parse(&text).ok()
}

fuzz_target!(|input: Input| {
    let mut index = HandleIndex::new();
    for raw in input.tabs.iter().take(64) {
        if let Some(id) = tab_id(*raw) {
            index.insert(id);
        }
    }
    for id in index.iter().cloned().collect::<Vec<_>>() {
        let handle = index.handle(&id).expect("an open tab has a handle");
        assert!(id.as_str().starts_with(&handle));
        match index.resolve(&handle) {
            Resolution::Ok { tab, .. } => assert_eq!(tab, id),
            other => panic!("handle {handle} of {id} resolved to {other:?}"),
        }
    }
    for query in input.queries.iter().take(16) {
        if let Resolution::Ok { tab, .. } = index.resolve(query) {
            let prefix = normalize_prefix(query).expect("an ok resolution had a valid prefix");
            assert!(tab.as_str().starts_with(&prefix));
        }
    }
});
