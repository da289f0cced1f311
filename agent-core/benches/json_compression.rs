//! JSON compression throughput on a ~1 MB realistic tool result (a scraped page: link records
//! with nested metadata and long text fields).
//!
//! Run: `cargo bench -p agent-core --bench json_compression`
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agent_core::compress::compress_text;
use agent_core::{CompressionConfig, compress_json};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};

fn realistic_result() -> Value {
    let paragraph = "Agents read pages as untrusted data; the loop caps and compresses what they return. ".repeat(8);
    let links: Vec<Value> = (0..1800)
        .map(|i| {
            json!({
                "ref": format!("e{i}"),
                "href": format!("https://docs.example.test/section/{}/page-{i}.html?utm_source=nav&ref=sidebar", i % 40),
                "text": format!("Link number {i} to a documentation page"),
                "attrs": {"rel": "noopener", "class": ["nav", "link", "sidebar"], "data": {"index": i, "visible": i % 3 == 0}},
                "excerpt": if i % 4 == 0 { paragraph.clone() } else { String::new() },
            })
        })
        .collect();
    json!({"url": "https://docs.example.test/", "title": "Docs", "links": links, "count": 1800})
}

fn bench(c: &mut Criterion) {
    let value = realistic_result();
    let text = serde_json::to_string(&value).unwrap();
    let config = CompressionConfig::default();
    let mut group = c.benchmark_group("json_compression");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("compress_json_value", |b| {
        b.iter(|| compress_json(std::hint::black_box(&value), &config))
    });
    group.bench_function("parse_compress_serialize_text", |b| {
        b.iter(|| compress_text(std::hint::black_box(&text), &config))
    });
    group.finish();
    eprintln!("input size: {} bytes", text.len());
}

criterion_group!(benches, bench);
criterion_main!(benches);
