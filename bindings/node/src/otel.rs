//! `enableTracing`: the agent's OpenTelemetry GenAI spans exported over OTLP/HTTP
//! (agent-otel), behind a handle whose `shutdown()` sends what is still buffered.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_otel::{OtlpConfig, TracingGuard};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::error::coded;

/// Options of `enableTracing`.
#[napi(object)]
pub struct TracingOptions {
    /// The collector's base URL, such as `http://127.0.0.1:4318`.
    pub endpoint: String,
    /// The `service.name` of the spans (default `agent-core`).
    pub service_name: Option<String>,
    /// How long one export request may take, in ms (default 10 000).
    pub timeout_ms: Option<u32>,
}

/// The running export.
#[napi]
pub struct NativeTracing {
    guard: Arc<Mutex<Option<TracingGuard>>>,
}

/// Runs `work` on the guard off the JS thread: exporting waits for the endpoint, which may be
/// a server of this very process.
async fn off_thread(
    guard: Arc<Mutex<Option<TracingGuard>>>,
    work: fn(&mut Option<TracingGuard>) -> std::result::Result<(), agent_otel::OtelError>,
) -> Result<()> {
    let done = tokio::task::spawn_blocking(move || match guard.lock() {
        Ok(mut guard) => work(&mut guard).map_err(|e| coded("tracing", e)),
        Err(_) => Err(coded("tracing", "the tracing handle is poisoned")),
    });
    done.await.map_err(|e| coded("tracing", e))?
}

#[napi]
impl NativeTracing {
    /// Sends the spans still buffered, keeping the export running.
    #[napi]
    pub async fn flush(&self) -> Result<()> {
        off_thread(self.guard.clone(), |guard| {
            guard.as_ref().map_or(Ok(()), TracingGuard::flush)
        })
        .await
    }

    /// Sends the spans still buffered and stops the export (a second call does nothing).
    #[napi]
    pub async fn shutdown(&self) -> Result<()> {
        off_thread(self.guard.clone(), |guard| {
            guard.take().map_or(Ok(()), TracingGuard::shutdown)
        })
        .await
    }
}

/// Installs the process's tracing subscriber, exporting to `options.endpoint` (once per
/// process).
#[napi]
pub fn enable_tracing(options: TracingOptions) -> Result<NativeTracing> {
    let mut config = OtlpConfig::new(options.endpoint);
    if let Some(name) = options.service_name {
        config = config.service_name(name);
    }
    if let Some(ms) = options.timeout_ms {
        config = config.timeout(Duration::from_millis(u64::from(ms)));
    }
    let guard = agent_otel::install(config).map_err(|e| match e {
        agent_otel::OtelError::AlreadyInstalled => coded("tracing", e),
        other => coded("config", other),
    })?;
    Ok(NativeTracing {
        guard: Arc::new(Mutex::new(Some(guard))),
    })
}
