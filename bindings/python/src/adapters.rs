//! Real model providers (agent-providers) and the filesystem/shell tools (agent-tools).

use std::sync::Arc;

use agent_core::ProviderError;
use agent_providers::{FallbackRouter, ProviderConfig};
use agent_tools::{FsPolicy, fs_tools, with_gated};
use pyo3::prelude::*;

use crate::convert::options;
use crate::errors::new_error;
use crate::provider::{NativeProvider, NativeTool};

/// A provider error raised while building a provider: configuration problems are
/// `ConfigError`, anything else `ProviderError`; the text is the Rust error's.
pub fn provider_error(e: ProviderError) -> PyErr {
    match e {
        ProviderError::Config(_) => new_error("ConfigError", e.to_string(), Some("provider.config")),
        other => new_error(
            "ProviderError",
            other.to_string(),
            Some(&format!("provider.{}", other.kind())),
        ),
    }
}

/// A real provider from a ProviderConfig dict (`kind`, `model`, `api_key`, `base_url`, `http`,
/// `streaming`, `max_input_tokens`, `headers`).
#[pyfunction]
pub fn provider_configured(config: &Bound<'_, PyAny>) -> PyResult<NativeProvider> {
    let config = options::<ProviderConfig>("ProviderConfig", Some(config))?;
    Ok(NativeProvider::new(config.build().map_err(provider_error)?))
}

/// The provider the `LLM_PROVIDER`, `LLM_MODEL`, `LLM_API_KEY` and `LLM_BASE_URL`
/// environment variables describe.
#[pyfunction]
pub fn provider_from_env() -> PyResult<NativeProvider> {
    Ok(NativeProvider::new(
        agent_providers::from_env().map_err(provider_error)?,
    ))
}

/// A router trying `primary`, then each fallback on retryable errors before any content.
#[pyfunction]
pub fn provider_fallback(primary: &NativeProvider, fallbacks: Vec<PyRef<'_, NativeProvider>>) -> NativeProvider {
    let mut router = FallbackRouter::new(primary.inner.clone());
    for f in &fallbacks {
        router = router.with_fallback(f.inner.clone());
    }
    NativeProvider::new(Arc::new(router))
}

/// fs_read, fs_write, fs_list, fs_mkdir, fs_delete and shell_exec under an FsPolicy dict
/// (`root` or `unrestricted: true`, the caps, `shell_env`). `gated` overrides gating per tool
/// name (a binding-level option, not part of FsPolicy).
#[pyfunction]
#[pyo3(signature = (policy, gated=None))]
pub fn filesystem_tools(
    policy: &Bound<'_, PyAny>,
    gated: Option<std::collections::HashMap<String, bool>>,
) -> PyResult<Vec<NativeTool>> {
    let policy = options::<FsPolicy>("FsPolicy", Some(policy))?;
    let gated = gated.unwrap_or_default();
    Ok(fs_tools(policy)
        .into_iter()
        .map(|tool| {
            let tool = match gated.get(&tool.spec().name) {
                Some(g) => with_gated(tool, *g),
                None => tool,
            };
            NativeTool::new(tool)
        })
        .collect())
}
