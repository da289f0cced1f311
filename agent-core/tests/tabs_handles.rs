//! Short handles and prefix resolution: display, growth and shrinking, the resolution answers,
//! input sanitising, and the tab store's literal prefix query.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod tabs_support;

use agent_core::tabs::TabId;
use agent_core::tabs::{
    HandleIndex, MemoryTabStore, Resolution, TabHub, TabPermissions, TabRecord, TabStore, normalize_prefix,
};
use agent_core::{Agent, ScriptedProvider, ScriptedReply, SessionId};
use proptest::prelude::*;
use tabs_support::id;

fn index(ids: &[&TabId]) -> HandleIndex {
    let mut index = HandleIndex::new();
    for id in ids {
        index.insert((*id).clone());
    }
    index
}

#[test]
fn a_single_tab_shows_four_characters() {
    let a = id("6fe8a1");
    let index = index(&[&a]);
    assert_eq!(index.handle(&a).as_deref(), Some("6fe8"));
}

#[test]
fn handles_grow_to_five_on_collision_and_shrink_back_on_close() {
    let a = id("6fe8a");
    let b = id("6fe8b");
    let c = id("1234");
    let mut index = index(&[&a, &c]);
    assert_eq!(index.handle(&a).as_deref(), Some("6fe8"));

    index.insert(b.clone());
    assert_eq!(index.handle(&a).as_deref(), Some("6fe8a"));
    assert_eq!(index.handle(&b).as_deref(), Some("6fe8b"));
    assert_eq!(index.handle(&c).as_deref(), Some("1234"), "unrelated tabs keep 4");

    // A third tab sharing five characters with a grows both of them to six.
    let a2 = id("6fe8a9");
    index.insert(a2.clone());
    assert_eq!(index.handle(&a).as_deref(), Some("6fe8a0"));
    assert_eq!(index.handle(&a2).as_deref(), Some("6fe8a9"));
    assert_eq!(index.handle(&b).as_deref(), Some("6fe8b"));

    index.remove(&a2);
    assert_eq!(index.handle(&a).as_deref(), Some("6fe8a"));
    index.remove(&b);
    assert_eq!(
        index.handle(&a).as_deref(),
        Some("6fe8"),
        "shrinks back once the collision is gone"
    );
    assert_eq!(index.handle(&b), None, "closed tabs have no handle");
}

#[test]
fn handles_lists_every_open_tab_sorted() {
    let a = id("6fe8a");
    let b = id("6fe8b");
    let c = id("1234");
    let index = index(&[&a, &b, &c]);
    let handles: Vec<String> = index.handles().into_iter().map(|(_, h)| h).collect();
    assert_eq!(handles, ["1234", "6fe8a", "6fe8b"]);
}

#[test]
fn resolution_answers_ok_none_and_ambiguous() {
    let a = id("6fe8a");
    let b = id("6fe8b");
    let c = id("1234");
    let index = index(&[&a, &b, &c]);

    // Exact full UUID.
    assert_eq!(index.resolve(a.as_str()).tab(), Some(&a));
    // A 4-char unique prefix.
    assert_eq!(
        index.resolve("1234"),
        Resolution::Ok {
            tab: c.clone(),
            handle: "1234".into()
        }
    );
    // A longer prefix than the handle still resolves.
    assert_eq!(index.resolve("6fe8b000").tab(), Some(&b));
    // A colliding prefix lists both matches by their handles.
    match index.resolve("6fe8") {
        Resolution::Ambiguous { matches, match_count } => {
            assert_eq!(matches, ["6fe8a", "6fe8b"]);
            assert_eq!(match_count, 2);
        }
        other => panic!("expected ambiguous, got {other:?}"),
    }
    let text = index.resolve("6fe8").explain("6fe8").unwrap();
    assert!(
        text.contains("6fe8a, 6fe8b") && text.contains("one more character"),
        "{text}"
    );
    // Unknown prefix lists the open handles.
    match index.resolve("ffff") {
        Resolution::None {
            open_handles,
            open_count,
        } => {
            assert_eq!(open_handles, ["1234", "6fe8a", "6fe8b"]);
            assert_eq!(open_count, 3);
        }
        other => panic!("expected none, got {other:?}"),
    }
    assert!(
        index
            .resolve("ffff")
            .explain("ffff")
            .unwrap()
            .contains("1234, 6fe8a, 6fe8b")
    );
}

#[test]
fn resolution_is_case_insensitive_and_trims() {
    let a = id("6fe8a");
    let index = index(&[&a]);
    assert_eq!(index.resolve("6FE8").tab(), Some(&a));
    assert_eq!(index.resolve("  6Fe8A ").tab(), Some(&a));
    assert_eq!(index.resolve(&a.as_str().to_uppercase()).tab(), Some(&a));
}

#[test]
fn wildcards_and_other_characters_never_widen_a_match() {
    let a = id("6fe8a");
    let b = id("6fe8b");
    let index = index(&[&a, &b]);
    for input in [
        "%", "6fe8%", "6fe_", "6f_8a", "____", "%%%%", "6fe8*", "6fe8a'", "6fe8 a", "g000", "6fé8",
    ] {
        assert!(
            matches!(index.resolve(input), Resolution::Invalid { .. }),
            "{input:?} must be refused, got {:?}",
            index.resolve(input)
        );
    }
    assert!(normalize_prefix("6fe_").unwrap_err().contains("'_'"));
}

#[test]
fn the_minimum_length_is_enforced() {
    let a = id("6fe8a");
    let index = index(&[&a]);
    for input in ["", "6", "6f", "6fe", " 6fe "] {
        match index.resolve(input) {
            Resolution::Invalid { reason } => assert!(reason.contains("at least 4"), "{reason}"),
            other => panic!("{input:?}: expected invalid, got {other:?}"),
        }
    }
    assert!(matches!(index.resolve("6fe8"), Resolution::Ok { .. }));
}

#[test]
fn long_listings_are_capped_with_a_count() {
    let mut index = HandleIndex::new();
    for i in 0..50 {
        index.insert(id(&format!("abcd{i:02x}")));
    }
    match index.resolve("abcd") {
        Resolution::Ambiguous { matches, match_count } => {
            assert_eq!(match_count, 50);
            assert_eq!(matches.len(), agent_core::tabs::MAX_LISTED_HANDLES);
        }
        other => panic!("expected ambiguous, got {other:?}"),
    }
    assert!(index.resolve("abcd").explain("abcd").unwrap().contains("and 30 more"));
}

fn scripted_hub() -> agent_core::tabs::TabHubBuilder {
    TabHub::builder()
        .agent_factory(|_| Agent::builder().provider(ScriptedProvider::new([ScriptedReply::text("ok").into()])))
}

#[tokio::test]
async fn closed_tabs_are_excluded_from_matches_and_handles() {
    let hub = scripted_hub().build().await.unwrap();
    let a = id("6fe8a");
    let b = id("6fe8b");
    hub.open_tab_with(a.clone(), TabPermissions::none()).await.unwrap();
    hub.open_tab_with(b.clone(), TabPermissions::none()).await.unwrap();
    assert!(matches!(hub.resolve("6fe8"), Resolution::Ambiguous { .. }));
    assert_eq!(hub.handle(&a).as_deref(), Some("6fe8a"));

    hub.close_tab(&b).await.unwrap();
    assert_eq!(
        hub.resolve("6fe8").tab(),
        Some(&a),
        "no phantom ambiguity from a closed tab"
    );
    assert!(matches!(hub.resolve("6fe8b"), Resolution::None { .. }));
    assert_eq!(hub.handle(&a).as_deref(), Some("6fe8"));
    assert_eq!(hub.tab(&b).unwrap().handle, None);

    hub.reopen_tab(&b).await.unwrap();
    assert_eq!(hub.handle(&a).as_deref(), Some("6fe8a"));
    assert_eq!(hub.resolve("6fe8b").tab(), Some(&b));
}

fn record(tab: &TabId, open: bool) -> TabRecord {
    let mut r = TabRecord::new(tab.clone(), SessionId::new_random(), 6, TabPermissions::none());
    r.open = open;
    r
}

#[tokio::test]
async fn memory_tab_store_prefix_query_is_literal_and_open_only() {
    let store = MemoryTabStore::new();
    let a = id("6fe8a");
    let b = id("6fe8b");
    let closed = id("6fe8c");
    for r in [record(&a, true), record(&b, true), record(&closed, false)] {
        store.save_tab(&r).await.unwrap();
    }
    let ids = |v: Vec<TabRecord>| v.into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.find_open_by_prefix("6fe8").await.unwrap()),
        [a.clone(), b.clone()]
    );
    assert_eq!(
        ids(store.find_open_by_prefix("6fe8b").await.unwrap()),
        std::slice::from_ref(&b)
    );
    assert_eq!(
        ids(store.find_open_by_prefix(a.as_str()).await.unwrap()),
        std::slice::from_ref(&a)
    );
    for wildcard in ["%", "6fe8%", "6fe_", "_", "6f%a"] {
        assert!(
            store.find_open_by_prefix(wildcard).await.unwrap().is_empty(),
            "{wildcard:?} must match nothing"
        );
    }
    assert_eq!(store.list_tabs().await.unwrap().len(), 3);
    store.delete_tab(&a).await.unwrap();
    assert!(store.tab(&a).await.unwrap().is_none());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every handle is unique, at least 4 characters, resolves to its own tab, and is the
    /// shortest such prefix (one character less is ambiguous), unless it is the 4-char floor.
    #[test]
    fn handles_are_shortest_unique_prefixes(seeds in proptest::collection::vec(0u32..4096, 1..40)) {
        let mut index = HandleIndex::new();
        // Few distinct leading characters so that collisions are common.
        for s in &seeds {
            index.insert(id(&format!("ab{:03x}", s)));
        }
        let all = index.handles();
        // Listings (none / ambiguous) show the same handles as the tabs themselves.
        for prefix in ["ab00", "ab01", "ab0f", "abff", "ab7"] {
            let expected: Vec<String> = all
                .iter()
                .filter(|(t, _)| t.as_str().starts_with(prefix))
                .map(|(_, h)| h.clone())
                .take(agent_core::tabs::MAX_LISTED_HANDLES)
                .collect();
            match index.resolve(prefix) {
                Resolution::Ambiguous { matches, .. } => prop_assert_eq!(matches, expected),
                Resolution::Ok { handle, .. } => prop_assert_eq!(vec![handle], expected),
                Resolution::None { open_handles, .. } => {
                    prop_assert!(expected.is_empty());
                    let first: Vec<String> = all.iter().map(|(_, h)| h.clone()).take(20).collect();
                    prop_assert_eq!(open_handles, first);
                }
                Resolution::Invalid { .. } => prop_assert!(prefix.len() < 4),
            }
        }
        for (tab, handle) in all {
            prop_assert!(handle.len() >= 4);
            prop_assert!(tab.as_str().starts_with(&handle));
            let resolved = index.resolve(&handle);
            prop_assert_eq!(resolved.tab(), Some(&tab));
            if handle.len() > 4 {
                let shorter = &handle[..handle.len() - 1];
                let shorter = shorter.trim_end_matches('-');
                let is_ambiguous = matches!(index.resolve(shorter), Resolution::Ambiguous { .. });
                prop_assert!(is_ambiguous, "{} could be shorter", handle);
            }
        }
    }
}
