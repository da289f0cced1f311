//! Python binding of agent-core: the native module `agent_core._native`.
//!
//! The public, documented API is the pure-Python package `agent_core` (see
//! `bindings/python/python/agent_core`); this module holds the handles it wraps.

mod adapters;
mod agent;
mod agent_config;
mod allocator;
mod approvals;
mod cdp;
mod convert;
mod errors;
mod hooks;
mod host;
mod hub_browser;
mod interpreter;
mod loop_bridge;
mod mcp;
mod otel;
mod postgres;
mod prompt;
mod provider;
mod pyloop;
mod python_thread;
mod runtime;
mod store;
mod tabs;
mod tool;

use pyo3::prelude::*;

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    allocator::configure();
    runtime::configure();
    m.add_class::<agent::NativeAgentParts>()?;
    m.add_class::<agent::NativeAgent>()?;
    m.add_class::<agent::NativeSession>()?;
    m.add_class::<agent::NativeRun>()?;
    m.add_class::<agent::NativeEvents>()?;
    m.add_class::<provider::NativeProvider>()?;
    m.add_class::<provider::NativeStore>()?;
    m.add_class::<provider::NativeTool>()?;
    m.add_class::<store::NativeSqlite>()?;
    m.add_class::<store::NativeKeyStore>()?;
    m.add_class::<postgres::NativePostgres>()?;
    m.add_class::<tabs::NativeTabHub>()?;
    m.add_class::<tabs::NativeTabEvents>()?;
    m.add_class::<cdp::NativeCdpHost>()?;
    m.add_class::<mcp::NativeMcpClient>()?;
    m.add_class::<mcp::NativeMcpHttpServer>()?;
    m.add_class::<otel::NativeTracing>()?;
    m.add_function(wrap_pyfunction!(mcp::new_bearer_token, m)?)?;
    m.add_function(wrap_pyfunction!(otel::enable_tracing, m)?)?;
    m.add_function(wrap_pyfunction!(agent::agent_tool, m)?)?;
    m.add_function(wrap_pyfunction!(adapters::filesystem_tools, m)?)?;
    m.add_function(wrap_pyfunction!(adapters::provider_configured, m)?)?;
    m.add_function(wrap_pyfunction!(adapters::provider_from_env, m)?)?;
    m.add_function(wrap_pyfunction!(adapters::provider_fallback, m)?)?;
    m.add_function(wrap_pyfunction!(interpreter::shutdown, m)?)?;
    m.add_function(wrap_pyfunction!(host::page_tools, m)?)?;
    m.add_function(wrap_pyfunction!(prompt::browser_prompt, m)?)?;
    m.add("CORE_VERSION", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
