//! Where the loop calls the host's [`Hooks`]: each function runs every hook of one point in
//! order and turns a failure into the turn's error message. Callers skip them when the agent
//! has no hooks.

use crate::agent::Outcome;
use crate::agent::hooks::{HookError, Hooks, ToolCallDecision, ToolCallInfo};
use crate::provider::{ModelRequest, ModelResponse};
use crate::session::SessionId;
use crate::tool::{ToolError, ToolOutput};

/// The turn's error when a hook at `point` failed.
fn failed(point: &str, e: HookError) -> String {
    format!("the host's {point} hook failed: {e}")
}

pub(crate) async fn before_model_call(
    hooks: &[std::sync::Arc<dyn Hooks>],
    session: &SessionId,
    request: &mut ModelRequest,
) -> Result<(), String> {
    for hook in hooks {
        hook.before_model_call(session, request)
            .await
            .map_err(|e| failed("before_model_call", e))?;
    }
    Ok(())
}

pub(crate) async fn after_model_call(
    hooks: &[std::sync::Arc<dyn Hooks>],
    session: &SessionId,
    response: &mut ModelResponse,
) -> Result<(), String> {
    for hook in hooks {
        hook.after_model_call(session, response)
            .await
            .map_err(|e| failed("after_model_call", e))?;
    }
    Ok(())
}

/// What the hooks decided about a call: run it (with these arguments) or not (why).
pub(crate) enum Decided {
    Run(serde_json::Value),
    Denied(String),
}

/// Runs the before_tool_call hooks in order: a denial stops there, a rewrite is what the next
/// hook sees.
pub(crate) async fn before_tool_call(
    hooks: &[std::sync::Arc<dyn Hooks>],
    call: ToolCallInfo<'_>,
) -> Result<Decided, String> {
    let mut arguments = call.arguments.clone();
    for hook in hooks {
        let info = ToolCallInfo {
            arguments: &arguments,
            ..call
        };
        match hook
            .before_tool_call(info)
            .await
            .map_err(|e| failed("before_tool_call", e))?
        {
            ToolCallDecision::Allow => {}
            ToolCallDecision::Deny { reason } => return Ok(Decided::Denied(reason)),
            ToolCallDecision::Rewrite { arguments: new } => arguments = new,
        }
    }
    Ok(Decided::Run(arguments))
}

pub(crate) async fn after_tool_call(
    hooks: &[std::sync::Arc<dyn Hooks>],
    call: ToolCallInfo<'_>,
    result: &mut Result<ToolOutput, ToolError>,
) -> Result<(), String> {
    for hook in hooks {
        hook.after_tool_call(call, result)
            .await
            .map_err(|e| failed("after_tool_call", e))?;
    }
    Ok(())
}

pub(crate) async fn turn_ended(
    hooks: &[std::sync::Arc<dyn Hooks>],
    session: &SessionId,
    outcome: &Outcome,
) -> Result<(), String> {
    for hook in hooks {
        hook.turn_ended(session, outcome)
            .await
            .map_err(|e| failed("turn_ended", e))?;
    }
    Ok(())
}
