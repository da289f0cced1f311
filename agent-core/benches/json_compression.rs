//! JSON compression throughput on a ~1 MB realistic tool result (a scraped page: link records
//! with nested metadata and long text fields).
//!
//! Run: `cargo bench -p agent-core --bench json_compression`
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agent_core::compress_text;
use agent_core::{CompressionConfig, compress_json, compress_json_in_place};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
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

/// The same records keyed by ref: objects are never shortened, so compression visits every
/// value (the worst case; the array form above is cut to 3 records almost at once).
fn keyed_result() -> Value {
    let mut records = serde_json::Map::new();
    if let Value::Array(links) = &realistic_result()["links"] {
        for link in links {
            records.insert(link["ref"].as_str().unwrap_or_default().to_owned(), link.clone());
        }
    }
    json!({"url": "https://docs.example.test/", "records": records})
}

fn bench(c: &mut Criterion) {
    let config = CompressionConfig::default();
    let mut group = c.benchmark_group("json_compression");
    for (name, value) in [
        ("array_of_records", realistic_result()),
        ("object_of_records", keyed_result()),
    ] {
        let text = serde_json::to_string(&value).unwrap();
        eprintln!("{name}: input size {} bytes", text.len());
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(format!("{name}/compress_value"), |b| {
            b.iter(|| compress_json(std::hint::black_box(&value), &config))
        });
        group.bench_function(format!("{name}/compress_in_place"), |b| {
            b.iter_batched(
                || value.clone(),
                |mut v| compress_json_in_place(&mut v, &config),
                BatchSize::LargeInput,
            )
        });
        group.bench_function(format!("{name}/parse_compress_serialize"), |b| {
            b.iter(|| compress_text(std::hint::black_box(&text), &config))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
