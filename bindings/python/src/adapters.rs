//! Real model providers (agent-providers) and the filesystem/shell tools (agent-tools).

use std::sync::Arc;
use std::time::Duration;

use agent_core::ProviderError;
use agent_providers::{FallbackRouter, HttpConfig, ProviderConfig, ProviderKind};
use agent_tools::{FsPolicy, fs_tools, with_gated};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{config_error, new_error};
use crate::provider::{NativeProvider, NativeTool};
use crate::tool::seconds;

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

fn http_config(http: Option<&Bound<'_, PyDict>>) -> PyResult<HttpConfig> {
    let mut c = HttpConfig::default();
    let Some(http) = http else {
        return Ok(c);
    };
    for (key, value) in http.iter() {
        let key: String = key.extract()?;
        let secs = || -> PyResult<Duration> { seconds(value.extract()?) };
        match key.as_str() {
            "connect_timeout" => c.connect_timeout = secs()?,
            "read_timeout" => c.read_timeout = secs()?,
            "idle_timeout" => c.idle_timeout = secs()?,
            "call_timeout" => c.call_timeout = secs()?,
            "max_attempts" => c.max_attempts = value.extract()?,
            "backoff_base" => c.backoff_base = secs()?,
            "backoff_max" => c.backoff_max = secs()?,
            "max_retry_after" => c.max_retry_after = secs()?,
            "user_agent" => c.user_agent = value.extract()?,
            "max_response_bytes" => c.max_response_bytes = value.extract()?,
            "max_error_body_bytes" => c.max_error_body_bytes = value.extract()?,
            "max_tool_args_bytes" => c.max_tool_args_bytes = value.extract()?,
            "max_tool_calls" => c.max_tool_calls = value.extract()?,
            other => return Err(config_error(format!("unknown HTTP setting {other:?}"))),
        }
    }
    Ok(c)
}

/// A real provider: `kind` is `openai-compatible`, `anthropic` or `gemini`.
#[pyfunction]
#[pyo3(signature = (kind, model, api_key, base_url=None, streaming=true, max_input_tokens=None, headers=None, http=None))]
#[allow(clippy::too_many_arguments)]
pub fn provider_configured(
    kind: &str,
    model: String,
    api_key: String,
    base_url: Option<String>,
    streaming: bool,
    max_input_tokens: Option<u64>,
    headers: Option<Vec<(String, String)>>,
    http: Option<Bound<'_, PyDict>>,
) -> PyResult<NativeProvider> {
    let kind: ProviderKind = kind.parse().map_err(provider_error)?;
    let mut config = ProviderConfig::new(kind, model, api_key)
        .with_streaming(streaming)
        .with_http(http_config(http.as_ref())?);
    if let Some(url) = base_url {
        config = config.with_base_url(url);
    }
    config.max_input_tokens = max_input_tokens;
    for (name, value) in headers.unwrap_or_default() {
        config = config.with_header(name, value);
    }
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

/// fs_read, fs_write, fs_list, fs_mkdir, fs_delete and shell_exec, confined to `root` (or
/// unrestricted when `root` is None and `unrestricted` is true). `gated` overrides gating per
/// tool name; `max_write_bytes` and the `shell_*` options are `FsPolicy`'s (`shell_env`'s
/// `inherit_all`, `passthrough` and `set`), None keeping the Rust default.
#[pyfunction]
#[pyo3(signature = (root=None, unrestricted=false, gated=None, max_write_bytes=None, shell_inherit_all=false, shell_passthrough=None, shell_set=None))]
pub fn filesystem_tools(
    root: Option<std::path::PathBuf>,
    unrestricted: bool,
    gated: Option<std::collections::HashMap<String, bool>>,
    max_write_bytes: Option<usize>,
    shell_inherit_all: bool,
    shell_passthrough: Option<Vec<String>>,
    shell_set: Option<Vec<(String, String)>>,
) -> PyResult<Vec<NativeTool>> {
    let mut policy = match (root, unrestricted) {
        (Some(root), false) => FsPolicy::root(root),
        (None, true) => FsPolicy::unrestricted(),
        _ => return Err(config_error("give either root=<directory> or unrestricted=True")),
    };
    if let Some(n) = max_write_bytes {
        policy.max_write_bytes = n;
    }
    policy.shell_env.inherit_all = shell_inherit_all;
    policy.shell_env.passthrough = shell_passthrough.unwrap_or_default();
    policy.shell_env.set = shell_set.unwrap_or_default();
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
