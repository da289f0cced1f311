//! Filesystem and shell tools: fs_read, fs_write, fs_list, fs_mkdir, fs_delete and shell_exec.

mod env;
mod kind;
mod list;
mod policy;
mod shell;
mod tools;
mod write;

use std::sync::Arc;

use agent_core::Tool;

pub use env::ShellEnv;
pub use policy::{
    DEFAULT_MAX_LIST_ENTRIES, DEFAULT_MAX_READ_BYTES, DEFAULT_MAX_SHELL_OUTPUT, DEFAULT_MAX_WRITE_BYTES, FsPolicy,
};
pub use shell::{DEFAULT_SHELL_TIMEOUT_MS, MAX_SHELL_TIMEOUT_MS, shell_tool};
pub use tools::fs_file_tools;

/// All six filesystem and shell tools over one policy: fs_read, fs_write, fs_list, fs_mkdir,
/// fs_delete and shell_exec. fs_write, fs_delete and shell_exec are gated.
///
/// ```
/// use agent_tools::{FsPolicy, fs_tools};
/// let tools = fs_tools(FsPolicy::root("/tmp"));
/// let gated: Vec<_> = tools.iter().filter(|t| t.spec().gated).map(|t| t.spec().name.clone()).collect();
/// assert_eq!(gated, ["fs_write", "fs_delete", "shell_exec"]);
/// ```
pub fn fs_tools(policy: FsPolicy) -> Vec<Arc<dyn Tool>> {
    let mut tools = fs_file_tools(policy.clone());
    tools.push(shell_tool(policy));
    tools
}
