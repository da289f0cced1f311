//! Where spans go and what they say they come from.

use std::time::Duration;

/// `service.name` of the exported spans unless [`OtlpConfig::service_name`] sets one.
pub const DEFAULT_SERVICE_NAME: &str = "agent-core";

/// The OTLP/HTTP endpoint and the service the spans belong to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtlpConfig {
    /// The collector's base URL (`http://127.0.0.1:4318`); spans are POSTed to
    /// `{endpoint}/v1/traces` unless the URL already ends with `/v1/traces`.
    pub endpoint: String,
    /// The `service.name` resource attribute (default [`DEFAULT_SERVICE_NAME`]).
    pub service_name: String,
    /// How long one export request may take (default 10 s).
    pub timeout: Duration,
}

impl OtlpConfig {
    /// Spans to `endpoint`, as the service [`DEFAULT_SERVICE_NAME`].
    pub fn new(endpoint: impl Into<String>) -> Self {
        OtlpConfig {
            endpoint: endpoint.into(),
            service_name: DEFAULT_SERVICE_NAME.to_owned(),
            timeout: Duration::from_secs(10),
        }
    }

    /// Sets the `service.name` resource attribute.
    pub fn service_name(mut self, name: impl Into<String>) -> Self {
        self.service_name = name.into();
        self
    }

    /// Sets how long one export request may take.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The URL spans are POSTed to.
    pub fn traces_url(&self) -> String {
        let base = self.endpoint.trim_end_matches('/');
        if base.ends_with("/v1/traces") {
            base.to_owned()
        } else {
            format!("{base}/v1/traces")
        }
    }
}
