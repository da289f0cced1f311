//! Runs agents under a subscriber that keeps their spans in memory, and reads the spans.

use std::future::Future;

use opentelemetry::trace::SpanId;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tracing_subscriber::layer::SubscriberExt;

/// The spans `work` produced, in the order they ended. The test's runtime must be the
/// current-thread one (`#[tokio::test]`): the turns it spawns then run on this thread, under
/// this thread's subscriber.
pub async fn spans_of<F: Future>(work: F) -> (F::Output, Vec<SpanData>) {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry().with(agent_otel::genai_layer(&provider));
    let output = {
        let _default = tracing::subscriber::set_default(subscriber);
        work.await
    };
    provider.force_flush().unwrap();
    (output, exporter.get_finished_spans().unwrap())
}

/// The one span named `name`.
pub fn one<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    let found: Vec<&SpanData> = spans.iter().filter(|s| s.name == name).collect();
    assert_eq!(found.len(), 1, "one {name:?} span among {:?}", names(spans));
    found[0]
}

/// Every span named `name`, in the order they ended.
pub fn all<'a>(spans: &'a [SpanData], name: &str) -> Vec<&'a SpanData> {
    spans.iter().filter(|s| s.name == name).collect()
}

pub fn names(spans: &[SpanData]) -> Vec<String> {
    spans.iter().map(|s| s.name.to_string()).collect()
}

/// An attribute's value as text, if the span has it.
pub fn attr(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

pub fn is_child_of(span: &SpanData, parent: &SpanData) -> bool {
    span.parent_span_id == parent.span_context.span_id()
        && span.span_context.trace_id() == parent.span_context.trace_id()
}

pub fn is_root(span: &SpanData) -> bool {
    span.parent_span_id == SpanId::INVALID
}
