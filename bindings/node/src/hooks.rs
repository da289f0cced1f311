//! Lifecycle hooks written in JavaScript: an object with any of `beforeModelCall(sessionId,
//! request)`, `afterModelCall(sessionId, response)`, `beforeToolCall(call)`,
//! `afterToolCall(call, result)` and `turnEnded(sessionId, outcome)`, each sync or async.
//!
//! Each method the object has is a weak threadsafe function called with `call_async_catch`,
//! as the gate is; a method it lacks is `None` here and costs nothing. Values go to JS as
//! objects in the binding's camelCase shapes (the request as `ScriptedProvider.requests()`
//! shows it, the outcome as `run.outcome` does); a replacement comes back as JSON text (the
//! faster way from JS to Rust, see `ToolReply`), with its keys renamed to snake_case.

use agent_core::{
    ContentPart, HookError, Hooks, ModelRequest, ModelResponse, Outcome, SessionId, ToolCallDecision, ToolCallInfo,
    ToolError, ToolOutput, async_trait,
};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::callbacks::{Callback, GateInput};
use crate::convert::{Json, camel_keys, js, snake_keys};

/// What a JS hook wrapper receives.
#[napi(object, object_from_js = false)]
pub struct HookInput {
    /// The session.
    pub session_id: String,
    /// The tool call (tool hooks only), in the gate's shape.
    pub call: Option<GateInput>,
    /// The request, the response, the tool's result or the outcome (none for
    /// `beforeToolCall`).
    #[napi(ts_type = "any")]
    pub value: Option<Json>,
}

/// What a JS hook wrapper answers.
#[napi(object)]
pub struct HookReply {
    /// The hook threw or its promise rejected: the message.
    pub error: Option<String>,
    /// What the hook returned, as JSON text; absent when it returned `undefined`.
    pub json: Option<String>,
}

/// What a hook answers the core.
type HookResult<T> = std::result::Result<T, HookError>;

/// One hook method as the JS layer hands it over. The promise comes first: every field of a
/// reply is optional, so a promise would read as an empty reply.
pub type HookFn = Callback<HookInput, Either<Promise<HookReply>, HookReply>>;

/// The method names, in the order `NativeAgentBuilder.hooks` takes them.
const NAMES: [&str; 5] = [
    "beforeModelCall",
    "afterModelCall",
    "beforeToolCall",
    "afterToolCall",
    "turnEnded",
];

/// One JS hooks object: the methods it has.
pub struct JsHooks {
    before_model_call: Option<HookFn>,
    after_model_call: Option<HookFn>,
    before_tool_call: Option<HookFn>,
    after_tool_call: Option<HookFn>,
    turn_ended: Option<HookFn>,
}

impl JsHooks {
    /// The hooks of one object; `None` when it has none of the methods.
    pub fn new(
        before_model_call: Option<HookFn>,
        after_model_call: Option<HookFn>,
        before_tool_call: Option<HookFn>,
        after_tool_call: Option<HookFn>,
        turn_ended: Option<HookFn>,
    ) -> Option<Self> {
        let hooks = JsHooks {
            before_model_call,
            after_model_call,
            before_tool_call,
            after_tool_call,
            turn_ended,
        };
        let any = [
            &hooks.before_model_call,
            &hooks.after_model_call,
            &hooks.before_tool_call,
            &hooks.after_tool_call,
            &hooks.turn_ended,
        ]
        .iter()
        .any(|f| f.is_some());
        any.then_some(hooks)
    }
}

/// The names of the five methods, for messages.
pub fn method_names() -> String {
    NAMES.join(", ")
}

/// Calls one hook method; what it returned as JSON (`None` for `undefined`).
async fn call(func: &HookFn, input: HookInput) -> HookResult<Option<Value>> {
    let reply = match func.call_async_catch(input).await {
        Ok(Either::A(promise)) => promise.await,
        Ok(Either::B(reply)) => Ok(reply),
        Err(e) => Err(e),
    }
    .map_err(|e| HookError::new(e.reason))?;
    if let Some(message) = reply.error {
        return Err(HookError::new(message));
    }
    match reply.json {
        None => Ok(None),
        Some(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| HookError::new(format!("its answer is not JSON ({e})"))),
    }
}

/// A value of the core's types read from the binding's camelCase shape.
fn from_js<T: DeserializeOwned>(value: Value) -> serde_json::Result<T> {
    serde_json::from_value(snake_keys(value))
}

/// Replaces `value` with what a hook returned, if it returned something (`null` keeps it too).
fn replace<T: DeserializeOwned>(value: &mut T, returned: Option<Value>, method: &str, what: &str) -> HookResult<()> {
    let Some(returned) = returned.filter(|r| !r.is_null()) else {
        return Ok(());
    };
    *value = from_js(returned).map_err(|e| {
        HookError::new(format!(
            "{method} returned an invalid {what} ({e}); return the {what} (edited or new) or undefined to keep it"
        ))
    })?;
    Ok(())
}

fn call_input(call: &ToolCallInfo<'_>, value: Option<Json>) -> HookInput {
    HookInput {
        session_id: call.session_id.to_string(),
        call: Some(GateInput {
            session_id: call.session_id.to_string(),
            call_id: call.call_id.to_owned(),
            tool: call.tool.to_owned(),
            arguments: Json(call.arguments.clone()),
            origin: call.origin.into(),
            // Hooks see the call before the gate, when its page's host has not been read.
            host: None,
        }),
        value,
    }
}

fn session_input(session: &SessionId, value: Json) -> HookInput {
    HookInput {
        session_id: session.to_string(),
        call: None,
        value: Some(value),
    }
}

/// A tool's result as hooks see it: `{ ok: true, content, structured?, truncated }` or
/// `{ ok: false, error, fatal }`.
pub fn result_value(result: &std::result::Result<ToolOutput, ToolError>) -> Value {
    match result {
        Ok(out) => {
            let mut value = json!({
                "ok": true,
                "content": camel_keys(serde_json::to_value(&out.content).unwrap_or(Value::Null)),
                "truncated": out.truncated,
            });
            if let (Some(structured), Value::Object(map)) = (&out.structured, &mut value) {
                map.insert("structured".into(), structured.clone());
            }
            value
        }
        Err(e) => json!({ "ok": false, "error": e.to_string(), "fatal": e.is_fatal() }),
    }
}

/// Reads a replacement result; an output keeps where its text came from (its provenance).
pub fn result_from(
    returned: Value,
    old: &std::result::Result<ToolOutput, ToolError>,
) -> HookResult<std::result::Result<ToolOutput, ToolError>> {
    let invalid = |why: &str| {
        HookError::new(format!(
            "afterToolCall returned an invalid result ({why}); return undefined, {{ ok: true, content: [...], structured?, truncated? }} or {{ ok: false, error: '...', fatal? }}"
        ))
    };
    match returned.get("ok").and_then(Value::as_bool) {
        Some(true) => {
            let content: Vec<ContentPart> = match returned.get("content") {
                Some(c) => from_js(c.clone()).map_err(|e| invalid(&format!("content: {e}")))?,
                None => return Err(invalid("no content")),
            };
            let truncated = match returned.get("truncated") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Err(invalid("truncated is not a boolean")),
            };
            Ok(Ok(ToolOutput {
                content,
                structured: returned.get("structured").filter(|s| !s.is_null()).cloned(),
                truncated,
                provenance: old.as_ref().ok().and_then(|o| o.provenance.clone()),
            }))
        }
        Some(false) => {
            let message = returned
                .get("error")
                .and_then(Value::as_str)
                .ok_or_else(|| invalid("error is not a string"))?;
            let fatal = match returned.get("fatal") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Err(invalid("fatal is not a boolean")),
            };
            Ok(Err(if fatal {
                ToolError::fatal(message)
            } else {
                ToolError::model(message)
            }))
        }
        None => Err(invalid("ok is not a boolean")),
    }
}

/// What `beforeToolCall` returned, as a decision.
pub fn decision(returned: Option<Value>) -> HookResult<ToolCallDecision> {
    match returned {
        None | Some(Value::Null) | Some(Value::Bool(true)) => Ok(ToolCallDecision::Allow),
        Some(Value::Object(o)) if o.len() == 1 && o.get("deny").is_some_and(Value::is_string) => {
            Ok(ToolCallDecision::Deny {
                reason: o.get("deny").and_then(Value::as_str).unwrap_or_default().to_owned(),
            })
        }
        Some(Value::Object(mut o)) if o.len() == 1 && o.get("arguments").is_some_and(Value::is_object) => {
            Ok(ToolCallDecision::Rewrite {
                arguments: o.remove("arguments").unwrap_or_default(),
            })
        }
        Some(other) => Err(HookError::new(format!(
            "beforeToolCall returned {other}; return undefined or true to allow, {{ deny: 'reason' }} to deny or {{ arguments: {{...}} }} to rewrite"
        ))),
    }
}

#[async_trait]
impl Hooks for JsHooks {
    async fn before_model_call(&self, session: &SessionId, request: &mut ModelRequest) -> HookResult<()> {
        let Some(f) = &self.before_model_call else {
            return Ok(());
        };
        let returned = call(f, session_input(session, js(&*request))).await?;
        replace(request, returned, "beforeModelCall", "request")
    }

    async fn after_model_call(&self, session: &SessionId, response: &mut ModelResponse) -> HookResult<()> {
        let Some(f) = &self.after_model_call else { return Ok(()) };
        let returned = call(f, session_input(session, js(&*response))).await?;
        replace(response, returned, "afterModelCall", "response")
    }

    async fn before_tool_call(&self, info: ToolCallInfo<'_>) -> HookResult<ToolCallDecision> {
        let Some(f) = &self.before_tool_call else {
            return Ok(ToolCallDecision::Allow);
        };
        decision(call(f, call_input(&info, None)).await?)
    }

    async fn after_tool_call(
        &self,
        info: ToolCallInfo<'_>,
        result: &mut std::result::Result<ToolOutput, ToolError>,
    ) -> HookResult<()> {
        let Some(f) = &self.after_tool_call else { return Ok(()) };
        let returned = call(f, call_input(&info, Some(Json(result_value(result))))).await?;
        if let Some(returned) = returned.filter(|r| !r.is_null()) {
            *result = result_from(returned, result)?;
        }
        Ok(())
    }

    async fn turn_ended(&self, session: &SessionId, outcome: &Outcome) -> HookResult<()> {
        let Some(f) = &self.turn_ended else { return Ok(()) };
        call(f, session_input(session, crate::convert::outcome(outcome)))
            .await
            .map(drop)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use agent_core::{FinishReason, Message, Reasoning, ToolCall, Usage};
    use std::sync::Arc;

    fn through_js<T: serde::Serialize + DeserializeOwned>(value: &T) -> T {
        // What JS sees, as JSON text and back, as a hook returning it unchanged would.
        let text = serde_json::to_string(&js(value).0).unwrap();
        from_js(serde_json::from_str(&text).unwrap()).unwrap()
    }

    #[test]
    fn requests_and_responses_survive_the_round_trip() {
        let mut assistant = Message::assistant("thinking done");
        assistant.tool_calls.push(ToolCall::new(
            "c1",
            "echo",
            &json!({"snake_key": 1, "camelKey": [true]}),
        ));
        assistant.reasoning = Some(Box::new(Reasoning {
            text: "r".into(),
            signature: Some("sig".into()),
            opaque: vec![json!({"thoughtSignature": "x", "reasoning_details": 2})],
        }));
        let request = ModelRequest {
            system: Some("be brief".into()),
            messages: vec![
                Message::user("hi"),
                assistant.clone(),
                Message::tool_result("c1", "echo", "out", true),
            ],
            tools: Arc::new(vec![agent_core::ToolSchema {
                name: "echo".into(),
                description: "d".into(),
                parameters: json!({"type": "object", "properties": {"some_text": {"type": "string"}}}),
            }]),
            max_output_tokens: Some(1024),
            temperature: Some(0.5),
            output_schema: None,
            reuse: Default::default(),
        };
        assert_eq!(through_js(&request), request);
        let response = ModelResponse {
            message: assistant,
            usage: Some(Usage {
                input_tokens: 3,
                output_tokens: 4,
                ..Usage::default()
            }),
            finish_reason: FinishReason::ToolCalls,
            served_by: Some(("a".into(), "b".into())),
        };
        assert_eq!(through_js(&response), response);
    }

    #[test]
    fn results_round_trip_and_keep_provenance() {
        let out = ToolOutput {
            content: vec![ContentPart::text("t")],
            structured: Some(json!({"a_b": 1})),
            truncated: true,
            provenance: None,
        };
        let old = Ok(out.clone());
        let back = result_from(result_value(&old), &old).unwrap().unwrap();
        assert_eq!(back, out);
        let err: std::result::Result<ToolOutput, ToolError> = Err(ToolError::fatal("boom"));
        let back = result_from(result_value(&err), &err).unwrap();
        assert!(matches!(back, Err(ToolError::Fatal { ref message, .. }) if message == "boom"));
        assert!(result_from(json!({"ok": true}), &old).is_err());
        assert!(result_from(json!({"ok": "yes"}), &old).is_err());
    }

    #[test]
    fn decisions() {
        assert_eq!(decision(None).unwrap(), ToolCallDecision::Allow);
        assert_eq!(decision(Some(json!(true))).unwrap(), ToolCallDecision::Allow);
        assert_eq!(
            decision(Some(json!({"deny": "no"}))).unwrap(),
            ToolCallDecision::Deny { reason: "no".into() }
        );
        assert_eq!(
            decision(Some(json!({"arguments": {"x": 1}}))).unwrap(),
            ToolCallDecision::Rewrite {
                arguments: json!({"x": 1})
            }
        );
        for bad in [
            json!(false),
            json!("allow"),
            json!({"deny": 1}),
            json!({"arguments": [1]}),
        ] {
            let e = decision(Some(bad)).unwrap_err();
            assert!(e.0.contains("return undefined or true to allow"), "{e}");
        }
    }
}
