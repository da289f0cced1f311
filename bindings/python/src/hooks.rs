//! Lifecycle hooks written in Python: an object with any of `before_model_call(session_id,
//! request)`, `after_model_call(session_id, response)`, `before_tool_call(call)`,
//! `after_tool_call(call, result)` and `turn_ended(session_id, outcome)`, each sync or async.
//! Values cross as dicts in the options' JSON shapes; `agent_core.Agent(hooks=[...])`
//! documents them. Only the methods the object has are called.

use std::sync::Arc;

use agent_core::{
    ContentPart, HookError, Hooks, ModelRequest, ModelResponse, Outcome, SessionId, ToolCallDecision, ToolCallInfo,
    ToolError, ToolOutput, async_trait,
};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::convert::{json_to_py, py_to_json, to_json};
use crate::host::method;
use crate::pyloop::{Callback, Loops};

/// One Python hooks object.
pub struct PyHooks {
    before_model_call: Option<Callback>,
    after_model_call: Option<Callback>,
    before_tool_call: Option<Callback>,
    after_tool_call: Option<Callback>,
    turn_ended: Option<Callback>,
    loops: Arc<Loops>,
}

impl PyHooks {
    /// Reads the hook methods `hooks` has; it must have at least one.
    pub fn from_py(hooks: &Bound<'_, PyAny>, loops: Arc<Loops>) -> PyResult<Self> {
        let m = |name| method(hooks, name, false);
        let made = PyHooks {
            before_model_call: m("before_model_call")?,
            after_model_call: m("after_model_call")?,
            before_tool_call: m("before_tool_call")?,
            after_tool_call: m("after_tool_call")?,
            turn_ended: m("turn_ended")?,
            loops,
        };
        let none = [
            &made.before_model_call,
            &made.after_model_call,
            &made.before_tool_call,
            &made.after_tool_call,
            &made.turn_ended,
        ]
        .iter()
        .all(|m| m.is_none());
        if none {
            return Err(crate::errors::config_error(
                "a hooks object needs at least one of before_model_call, after_model_call, before_tool_call, after_tool_call, turn_ended",
            ));
        }
        Ok(made)
    }

    /// Calls one hook with JSON arguments (after the session id when `with_session`), and
    /// returns what it returned as JSON (`null` for None).
    async fn call(&self, callback: &Callback, session: &SessionId, args: Vec<Value>) -> Result<Value, HookError> {
        callback
            .call(
                &self.loops,
                session,
                move |py| {
                    let items = args.iter().map(|a| json_to_py(py, a)).collect::<PyResult<Vec<_>>>()?;
                    PyTuple::new(py, items)
                },
                |py, result| match result.and_then(|v| py_to_json(&v)) {
                    Ok(v) => Ok(v),
                    Err(e) => {
                        let value = e.value(py);
                        let kind = value.get_type().name().map(|n| n.to_string()).unwrap_or_default();
                        let text = value.str().map(|s| s.to_string()).unwrap_or_default();
                        Err(HookError::new(if text.is_empty() {
                            kind
                        } else {
                            format!("{kind}: {text}")
                        }))
                    }
                },
            )
            .await
            .unwrap_or_else(|e| Err(HookError::new(e)))
    }
}

/// A replacement a hook returned (None keeps the value as it is).
fn replace<T: DeserializeOwned>(value: &mut T, returned: Value, what: &str) -> Result<(), HookError> {
    if returned.is_null() {
        return Ok(());
    }
    *value = serde_json::from_value(returned)
        .map_err(|e| HookError::new(format!("it returned an invalid {what} ({e}); return None to keep it")))?;
    Ok(())
}

fn call_json(call: &ToolCallInfo<'_>) -> Value {
    json!({
        "session_id": call.session_id.as_str(),
        "call_id": call.call_id,
        "tool": call.tool,
        "arguments": call.arguments,
        "origin": to_json(call.origin),
    })
}

/// A tool's result as hooks see it: `{"ok": true, "content": [...], "structured": ...,
/// "truncated": ...}` or `{"ok": false, "error": "...", "fatal": ...}`.
fn result_json(result: &Result<ToolOutput, ToolError>) -> Value {
    match result {
        Ok(out) => json!({
            "ok": true,
            "content": to_json(&out.content),
            "structured": out.structured,
            "truncated": out.truncated,
        }),
        Err(e) => json!({"ok": false, "error": e.to_string(), "fatal": e.is_fatal()}),
    }
}

/// Reads a replacement result; the output keeps where its text came from.
fn result_from(
    returned: Value,
    old: &Result<ToolOutput, ToolError>,
) -> Result<Result<ToolOutput, ToolError>, HookError> {
    let invalid = |why: &str| {
        HookError::new(format!(
            "it returned an invalid result ({why}); return None, {{\"ok\": True, \"content\": [...]}} or {{\"ok\": False, \"error\": \"...\"}}"
        ))
    };
    match returned.get("ok").and_then(Value::as_bool) {
        Some(true) => {
            let content: Vec<ContentPart> = match returned.get("content") {
                Some(c) => serde_json::from_value(c.clone()).map_err(|e| invalid(&e.to_string()))?,
                None => return Err(invalid("no content")),
            };
            Ok(Ok(ToolOutput {
                content,
                structured: returned.get("structured").filter(|s| !s.is_null()).cloned(),
                truncated: returned.get("truncated").and_then(Value::as_bool).unwrap_or(false),
                provenance: old.as_ref().ok().and_then(|o| o.provenance.clone()),
            }))
        }
        Some(false) => {
            let message = returned
                .get("error")
                .and_then(Value::as_str)
                .ok_or_else(|| invalid("no error"))?;
            Ok(Err(if returned.get("fatal").and_then(Value::as_bool) == Some(true) {
                ToolError::fatal(message)
            } else {
                ToolError::model(message)
            }))
        }
        None => Err(invalid("no ok")),
    }
}

#[async_trait]
impl Hooks for PyHooks {
    async fn before_model_call(&self, session: &SessionId, request: &mut ModelRequest) -> Result<(), HookError> {
        let Some(cb) = &self.before_model_call else {
            return Ok(());
        };
        let returned = self
            .call(cb, session, vec![json!(session.as_str()), to_json(&*request)])
            .await?;
        replace(request, returned, "request")
    }

    async fn after_model_call(&self, session: &SessionId, response: &mut ModelResponse) -> Result<(), HookError> {
        let Some(cb) = &self.after_model_call else {
            return Ok(());
        };
        let returned = self
            .call(cb, session, vec![json!(session.as_str()), to_json(&*response)])
            .await?;
        replace(response, returned, "response")
    }

    async fn before_tool_call(&self, call: ToolCallInfo<'_>) -> Result<ToolCallDecision, HookError> {
        let Some(cb) = &self.before_tool_call else {
            return Ok(ToolCallDecision::Allow);
        };
        let returned = self.call(cb, call.session_id, vec![call_json(&call)]).await?;
        match &returned {
            Value::Null | Value::Bool(true) => Ok(ToolCallDecision::Allow),
            Value::Object(o) if o.len() == 1 && o.get("deny").is_some_and(Value::is_string) => {
                Ok(ToolCallDecision::Deny {
                    reason: o.get("deny").and_then(Value::as_str).unwrap_or_default().to_owned(),
                })
            }
            Value::Object(o) if o.len() == 1 && o.get("arguments").is_some_and(Value::is_object) => {
                Ok(ToolCallDecision::Rewrite {
                    arguments: o.get("arguments").cloned().unwrap_or_default(),
                })
            }
            other => Err(HookError::new(format!(
                "it returned {other}; return None or True to allow, {{\"deny\": \"reason\"}} or {{\"arguments\": {{...}}}}"
            ))),
        }
    }

    async fn after_tool_call(
        &self,
        call: ToolCallInfo<'_>,
        result: &mut Result<ToolOutput, ToolError>,
    ) -> Result<(), HookError> {
        let Some(cb) = &self.after_tool_call else { return Ok(()) };
        let returned = self
            .call(cb, call.session_id, vec![call_json(&call), result_json(result)])
            .await?;
        if !returned.is_null() {
            *result = result_from(returned, result)?;
        }
        Ok(())
    }

    async fn turn_ended(&self, session: &SessionId, outcome: &Outcome) -> Result<(), HookError> {
        let Some(cb) = &self.turn_ended else { return Ok(()) };
        self.call(cb, session, vec![json!(session.as_str()), to_json(outcome)])
            .await
            .map(drop)
    }
}
