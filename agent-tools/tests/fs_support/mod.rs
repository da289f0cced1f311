//! Shared fixture for the filesystem and shell tests: a temporary root, a sibling
//! directory outside it holding a secret, and the tools confined to the root.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use agent_core::{SessionId, Tool, ToolContext, ToolError, ToolOutput};
use agent_tools::{FsPolicy, fs_tools};
use serde_json::Value;

pub struct Fx {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub outside: PathBuf,
    pub tools: Vec<Arc<dyn Tool>>,
}

/// The fixture with the default policy for its root, adjusted by `adjust`.
pub fn fx_with(adjust: impl FnOnce(&mut FsPolicy)) -> Fx {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "TOP SECRET").unwrap();
    let mut policy = FsPolicy::root(&root);
    adjust(&mut policy);
    Fx {
        _dir: dir,
        root,
        outside,
        tools: fs_tools(policy),
    }
}

pub fn fx() -> Fx {
    fx_with(|_| {})
}

pub fn cx() -> ToolContext {
    ToolContext::detached(SessionId::new_random(), "call-1")
}

pub async fn call(fx: &Fx, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
    call_with(fx, name, args, cx()).await
}

pub async fn call_with(fx: &Fx, name: &str, args: Value, cx: ToolContext) -> Result<ToolOutput, ToolError> {
    let tool = fx.tools.iter().find(|t| t.spec().name == name).unwrap();
    tool.call(args, cx).await
}

/// The message of an error meant for the model; anything else fails the test.
pub fn refusal(r: Result<ToolOutput, ToolError>) -> String {
    match r {
        Err(ToolError::ForModel { message, .. }) => message,
        Err(e) => panic!("expected an error for the model, got fatal {e}"),
        Ok(o) => panic!("expected a refusal, got {:?}", o.text_content()),
    }
}
