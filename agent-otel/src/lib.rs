//! OpenTelemetry export for agent-core.
//!
//! agent-core traces every turn through `tracing`, in the OpenTelemetry GenAI semantic
//! conventions: an `invoke_agent {name}` span per turn, with a `chat {model}` span per model
//! call and an `execute_tool {name}` span per tool call under it (a sub-agent's turn nests
//! under the `execute_tool` span that started it). This crate sends those spans to an
//! OTLP/HTTP endpoint (a collector, Jaeger, Langfuse, ...).
//!
//! ```no_run
//! # fn demo() -> Result<(), agent_otel::OtelError> {
//! let guard = agent_otel::install(agent_otel::OtlpConfig::new("http://127.0.0.1:4318").service_name("my-app"))?;
//! // ... run agents ...
//! drop(guard); // sends what is still buffered
//! # Ok(()) }
//! ```
//!
//! [`install`] makes the exporting subscriber the process's global one, which only the host
//! decides. A host with a subscriber of its own adds [`genai_layer`] to it instead.
//! `docs/observability.md` lists the spans and their attributes.

mod config;
mod guard;
mod layer;

pub use config::{DEFAULT_SERVICE_NAME, OtlpConfig};
pub use guard::TracingGuard;
pub use layer::{genai_layer, otlp_tracer_provider};
pub use opentelemetry_sdk::trace::SdkTracerProvider;

/// Why tracing could not be turned on, or its last spans not sent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtelError {
    /// The OTLP exporter could not be built (for example, an endpoint that is not a URL).
    #[error("the OTLP exporter could not be built: {0}")]
    Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
    /// The process already has a global tracing subscriber, which cannot be replaced.
    #[error(
        "a global tracing subscriber is already installed (tracing can be turned on once per process); add agent_otel::genai_layer to it instead"
    )]
    AlreadyInstalled,
    /// Flushing the last spans, or shutting the exporter down, failed.
    #[error("could not flush the spans: {0}")]
    Flush(#[from] opentelemetry_sdk::error::OTelSdkError),
}

/// Exports agent-core's spans to the OTLP/HTTP endpoint of `config` through a new global
/// tracing subscriber. Keep the guard for as long as spans should be sent; dropping it (or
/// [`TracingGuard::shutdown`]) sends the spans still buffered and stops the export.
///
/// Fails with [`OtelError::AlreadyInstalled`] when the process already has a global
/// subscriber (this one included: it stays installed after the guard is dropped).
pub fn install(config: OtlpConfig) -> Result<TracingGuard, OtelError> {
    use tracing_subscriber::layer::SubscriberExt;

    let provider = otlp_tracer_provider(&config)?;
    let subscriber = tracing_subscriber::registry().with(genai_layer(&provider));
    match tracing::subscriber::set_global_default(subscriber) {
        Ok(()) => Ok(TracingGuard::new(provider)),
        Err(_) => {
            // Nothing was exported through it; shutting it down only stops its thread.
            let _ = provider.shutdown();
            Err(OtelError::AlreadyInstalled)
        }
    }
}
