//! The environment shell_exec's commands get: by default only what programs need to run, so API
//! keys and tokens in the host's environment never reach a command the model wrote.

use std::ffi::{OsStr, OsString};

use serde::{Deserialize, Serialize};

/// The variables a command inherits from the host by default (the same list stdio MCP servers
/// get).
pub(crate) use agent_core::SAFE_ENV_VARS;

/// Which of the host's environment variables shell_exec's commands see, and what is added.
///
/// The default passes only [`SAFE_ENV_VARS`]: `LLM_API_KEY`, `OPENAI_API_KEY` and every other
/// `*_KEY`, `*_TOKEN` or `*_SECRET` stay in the host unless the host names them in
/// [`passthrough`](Self::passthrough) or sets [`inherit_all`](Self::inherit_all).
///
/// ```
/// use agent_tools::ShellEnv;
/// let env = ShellEnv {
///     passthrough: vec!["CARGO_HOME".into()],
///     set: vec![("CI".into(), "1".into())],
///     ..ShellEnv::default()
/// };
/// assert!(!env.inherit_all);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ShellEnv {
    /// Inherit the host's whole environment, secrets included (for hosts whose commands need
    /// it and that trust the model with it).
    pub inherit_all: bool,
    /// More variables to inherit, by exact name, on top of [`SAFE_ENV_VARS`].
    pub passthrough: Vec<String>,
    /// Variables set for every command (they win over inherited ones).
    #[serde(with = "agent_core::options::string_pairs")]
    #[schemars(schema_with = "agent_core::options::string_pairs_schema")]
    pub set: Vec<(String, String)>,
}

impl ShellEnv {
    /// The environment a command gets, given the host's (`parent`). `None` means "inherit
    /// everything" (nothing to filter).
    pub(crate) fn filter(
        &self,
        parent: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Option<Vec<(OsString, OsString)>> {
        if self.inherit_all {
            return None;
        }
        let keep = |key: &OsStr| {
            key.to_str()
                .is_some_and(|k| SAFE_ENV_VARS.contains(&k) || self.passthrough.iter().any(|p| p == k))
        };
        Some(parent.into_iter().filter(|(k, _)| keep(k)).collect())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn parent() -> Vec<(OsString, OsString)> {
        [
            ("PATH", "/usr/bin"),
            ("HOME", "/home/u"),
            ("LLM_API_KEY", "k1"),
            ("OPENAI_API_KEY", "k2"),
            ("ANTHROPIC_API_KEY", "k3"),
            ("GITHUB_TOKEN", "t"),
            ("AWS_SECRET", "s"),
            ("CARGO_HOME", "/c"),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect()
    }

    fn names(env: Option<Vec<(OsString, OsString)>>) -> Vec<String> {
        env.unwrap()
            .into_iter()
            .map(|(k, _)| k.into_string().unwrap())
            .collect()
    }

    #[test]
    fn default_keeps_only_the_safe_list() {
        assert_eq!(names(ShellEnv::default().filter(parent())), ["PATH", "HOME"]);
    }

    #[test]
    fn passthrough_adds_named_variables_only() {
        let env = ShellEnv {
            passthrough: vec!["CARGO_HOME".into(), "GITHUB_TOKEN".into()],
            ..ShellEnv::default()
        };
        assert_eq!(
            names(env.filter(parent())),
            ["PATH", "HOME", "GITHUB_TOKEN", "CARGO_HOME"]
        );
    }

    #[test]
    fn inherit_all_filters_nothing() {
        let env = ShellEnv {
            inherit_all: true,
            ..ShellEnv::default()
        };
        assert!(env.filter(parent()).is_none());
    }
}
