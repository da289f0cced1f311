//! SSE decoding throughput of each adapter: recorded bodies through the SSE parser and the wire
//! decoder, fed in 1 KiB pieces (a typical network read), as events per second and bytes per
//! second.
//!
//! Run: `cargo bench -p agent-providers --bench sse_decode`
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::PathBuf;

use agent_providers::sse::SseParser;
use agent_providers::{WireDecoder, anthropic::AnthropicDecoder, gemini::GeminiDecoder, openai::OpenAiDecoder};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn fixture(path: &str) -> Vec<u8> {
    std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(path),
    )
    .unwrap()
}

fn decode<D: WireDecoder>(mut decoder: D, body: &[u8]) -> usize {
    let mut parser = SseParser::new();
    let mut sse = Vec::new();
    let mut out = Vec::new();
    for piece in body.chunks(1024) {
        parser.push(piece, &mut sse).unwrap();
        for event in sse.drain(..) {
            decoder.on_event(&event, &mut out).unwrap();
        }
    }
    parser.finish(&mut sse).unwrap();
    for event in sse.drain(..) {
        decoder.on_event(&event, &mut out).unwrap();
    }
    decoder.on_end(&mut out).unwrap();
    out.len()
}

fn bench(c: &mut Criterion) {
    let cases: [(&str, &str); 6] = [
        ("openai/text", "openai/stream-text.sse"),
        ("openai/two-tool-calls", "openai/stream-two-tool-calls.sse"),
        ("anthropic/text", "anthropic/stream-text.sse"),
        ("anthropic/thinking+tool", "anthropic/stream-thinking.sse"),
        ("gemini/text", "gemini/stream-text.sse"),
        ("gemini/parallel-calls", "gemini/stream-parallel-function-calls.sse"),
    ];
    let mut group = c.benchmark_group("sse_decode");
    for (name, path) in cases {
        let body = fixture(path);
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| match name.split('/').next() {
                Some("openai") => decode(OpenAiDecoder::new(), black_box(&body)),
                Some("anthropic") => decode(AnthropicDecoder::new(), black_box(&body)),
                _ => decode(GeminiDecoder::new(), black_box(&body)),
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
