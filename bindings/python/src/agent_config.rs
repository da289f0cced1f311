//! Reading an AgentConfig options dict, where `max_tool_calls: None` means unlimited.
//!
//! Everywhere else in an options dict None keeps the default. `max_tool_calls` is the one key
//! whose Rust type gives null a meaning of its own (no cap; the default is 12), and a Python
//! caller who wants no cap has no other way to say so: the package leaves the key out to keep
//! the default and passes None only when the caller asked for unlimited.

use agent_core::AgentConfig;
use pyo3::prelude::*;
use serde_json::Value;

use crate::convert::{from_options, options_json, py_to_json};

/// The AgentConfig an options dict describes (see the module docs).
pub fn agent_config(dict: Option<&Bound<'_, PyAny>>) -> PyResult<AgentConfig> {
    let unlimited = match dict {
        Some(d) if !d.is_none() => {
            matches!(py_to_json(d)?.get("max_tool_calls"), Some(Value::Null))
        }
        _ => false,
    };
    let mut config: AgentConfig = from_options("AgentConfig", options_json(dict)?)?;
    if unlimited {
        config.max_tool_calls = None;
    }
    Ok(config)
}
