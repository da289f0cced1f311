//! Tab handles with 10 000 open tabs: prefix resolution (handles, short and long prefixes,
//! full UUIDs, misses), one tab's handle, every tab's handle, and opening/closing a tab.
//!
//! Run: `cargo bench -p agent-core --bench tab_handles`
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::hint::black_box;

use agent_core::tabs::HandleIndex;
use agent_core::tabs::TabId;
use criterion::{Criterion, criterion_group, criterion_main};

const TABS: usize = 10_000;

/// Deterministic pseudo-random UUID v4 ids (xorshift), so runs compare.
fn ids(n: usize) -> Vec<TabId> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..n)
        .map(|_| {
            let (a, b) = (next(), next());
            let text = format!(
                "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
                a >> 32,
                (a >> 16) & 0xffff,
                a & 0xfff,
                b >> 52,
                b & 0xffff_ffff_ffff
            );
            TabId::parse(&text).unwrap()
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let ids = ids(TABS);
    let mut index = HandleIndex::new();
    for id in &ids {
        index.insert(id.clone());
    }
    let handles: Vec<String> = ids.iter().map(|id| index.handle(id).unwrap()).collect();
    let longest = handles.iter().map(String::len).max().unwrap();
    println!("{TABS} open tabs: handles are 4 to {longest} characters");

    let mut group = c.benchmark_group("tab_handles_10k");
    let mut i = 0;
    group.bench_function("resolve_handle", |b| {
        b.iter(|| {
            i = (i + 1) % TABS;
            black_box(index.resolve(black_box(&handles[i])))
        })
    });
    let upper: Vec<String> = ids.iter().map(|id| id.as_str().to_uppercase()).collect();
    group.bench_function("resolve_full_uuid_uppercase", |b| {
        b.iter(|| {
            i = (i + 1) % TABS;
            black_box(index.resolve(black_box(&upper[i])))
        })
    });
    let four: Vec<String> = ids.iter().map(|id| id.as_str()[..4].to_owned()).collect();
    group.bench_function("resolve_4_chars_ok_or_ambiguous", |b| {
        b.iter(|| {
            i = (i + 1) % TABS;
            black_box(index.resolve(black_box(&four[i])))
        })
    });
    group.bench_function("resolve_miss_lists_open_handles", |b| {
        b.iter(|| black_box(index.resolve(black_box("0000000"))))
    });
    group.bench_function("resolve_invalid", |b| {
        b.iter(|| black_box(index.resolve(black_box("6fe%"))))
    });
    group.bench_function("handle_of_one_tab", |b| {
        b.iter(|| {
            i = (i + 1) % TABS;
            black_box(index.handle(black_box(&ids[i])))
        })
    });
    group.bench_function("handles_of_all_tabs", |b| b.iter(|| black_box(index.handles())));
    let extra = self::ids(TABS + 1).pop().unwrap();
    let mut scratch = index.clone();
    group.bench_function("open_then_close_one_tab", |b| {
        b.iter(|| {
            scratch.insert(black_box(extra.clone()));
            scratch.remove(black_box(&extra));
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
