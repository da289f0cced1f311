//! The OTLP exporter and the tracing layer that feeds it agent-core's spans.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Subscriber;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::registry::LookupSpan;

use crate::{OtelError, OtlpConfig};

/// A tracer provider that batches spans and POSTs them as OTLP protobuf to
/// [`OtlpConfig::traces_url`]. Shut it down (or drop the [`crate::TracingGuard`] holding it) to
/// send what is still buffered.
pub fn otlp_tracer_provider(config: &OtlpConfig) -> Result<SdkTracerProvider, OtelError> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(config.traces_url())
        .with_timeout(config.timeout)
        .build()?;
    let resource = Resource::builder()
        .with_service_name(config.service_name.clone())
        .build();
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build())
}

/// A layer that turns agent-core's spans (and its warnings, as span events) into
/// OpenTelemetry spans of `provider`, for a host that builds its own subscriber. Other crates'
/// spans pass it by unless they are warnings or errors.
pub fn genai_layer<S>(provider: &SdkTracerProvider) -> impl Layer<S> + Send + Sync + 'static
where
    S: Subscriber + for<'span> LookupSpan<'span> + Send + Sync,
{
    let targets = Targets::new()
        .with_target("agent_core", LevelFilter::INFO)
        .with_default(LevelFilter::WARN);
    tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("agent-core"))
        // The conventions' attributes only: no source locations, threads or busy/idle times.
        .with_location(false)
        .with_threads(false)
        .with_tracked_inactivity(false)
        .with_filter(targets)
}
