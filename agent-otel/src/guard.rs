//! [`TracingGuard`]: keeps the export running, and flushes it when dropped.

use opentelemetry_sdk::trace::SdkTracerProvider;

use crate::OtelError;

/// Keeps the OTLP export of [`crate::install`] running; dropping it sends the spans still
/// buffered and stops the export (spans of later turns are no longer sent).
#[derive(Debug)]
#[must_use = "dropping the guard stops the export"]
pub struct TracingGuard {
    provider: Option<SdkTracerProvider>,
}

impl TracingGuard {
    pub(crate) fn new(provider: SdkTracerProvider) -> Self {
        TracingGuard {
            provider: Some(provider),
        }
    }

    /// Sends the spans still buffered without stopping the export.
    pub fn flush(&self) -> Result<(), OtelError> {
        match &self.provider {
            Some(provider) => Ok(provider.force_flush()?),
            None => Ok(()),
        }
    }

    /// Sends the spans still buffered and stops the export, saying whether the last spans
    /// were sent (dropping the guard does the same and ignores the answer).
    pub fn shutdown(mut self) -> Result<(), OtelError> {
        self.stop()
    }

    fn stop(&mut self) -> Result<(), OtelError> {
        match self.provider.take() {
            Some(provider) => Ok(provider.shutdown()?),
            None => Ok(()),
        }
    }
}

impl Drop for TracingGuard {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            tracing::warn!(error = %e, "the last spans could not be sent");
        }
    }
}
