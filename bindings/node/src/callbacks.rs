//! JavaScript functions the core calls: tools, the gate, the event observer and the hook that
//! aborts a running JS tool.
//!
//! Every function is held as a *weak* threadsafe function (it does not keep the Node process
//! alive) and called with `call_async_catch` (a JS throw becomes an `Err`, never a crash). The
//! JS layer wraps user functions so that they return plain reply objects, sync or as promises.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use agent_core::{
    ContentPart, Gate, GateDecision, GateRequest, ImageSource, Tool, ToolContext, ToolError, ToolOutput, ToolSpec,
    TurnOrigin, async_trait,
};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use serde_json::Value;

use crate::convert::Json;
use crate::dispatch::{DispatchedCall, Dispatcher, ToolReply};
use crate::error::JsErrorRef;

/// A weak, non-callee-handled threadsafe function with one argument.
pub type Callback<In, Out> = ThreadsafeFunction<In, Out, In, Status, false, true>;

/// A tool's definition from JS.
#[napi(object)]
pub struct ToolDefinition {
    /// The tool's name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of the arguments (plain JSON data).
    pub parameters: Value,
    /// Whether the gate must allow each call.
    pub gated: Option<bool>,
    /// Whether it may run alongside other parallel-safe tools.
    pub parallel_safe: Option<bool>,
    /// The tool's own timeout in milliseconds.
    pub timeout_ms: Option<f64>,
}

/// The hook that aborts an invocation's AbortSignal.
pub type AbortFn = Callback<u32, ()>;

/// A tool implemented in JavaScript.
pub struct JsTool {
    spec: ToolSpec,
    dispatcher: Dispatcher,
    /// The index the JS layer's dispatcher knows the tool by.
    index: u32,
    abort: Option<Arc<AbortFn>>,
    next: Arc<AtomicU32>,
}

impl JsTool {
    /// A JS tool that its dispatcher knows by `index`.
    pub fn new(
        def: ToolDefinition,
        dispatcher: Dispatcher,
        index: u32,
        abort: Option<Arc<AbortFn>>,
        next: Arc<AtomicU32>,
    ) -> Result<Self> {
        let mut parameters = def.parameters;
        crate::convert::integral_numbers(&mut parameters);
        let mut spec = ToolSpec::new(def.name, def.description, parameters)
            .gated(def.gated.unwrap_or(false))
            .parallel_safe(def.parallel_safe.unwrap_or(false));
        if let Some(ms) = def.timeout_ms.filter(|ms| ms.is_finite() && *ms > 0.0) {
            spec = spec.timeout(Duration::from_secs_f64(ms / 1000.0));
        }
        Ok(JsTool {
            spec,
            dispatcher,
            index,
            abort,
            next,
        })
    }
}

/// Aborts the JS side of an invocation when the call is dropped (cancelled or timed out)
/// before it finished.
struct AbortOnDrop {
    abort: Option<Arc<AbortFn>>,
    invocation: u32,
    armed: bool,
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if self.armed
            && let Some(abort) = &self.abort
        {
            abort.call(self.invocation, ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

#[async_trait]
impl Tool for JsTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Value, cx: ToolContext) -> std::result::Result<ToolOutput, ToolError> {
        let invocation = self.next.fetch_add(1, Ordering::Relaxed);
        let mut guard = AbortOnDrop {
            abort: self.abort.clone(),
            invocation,
            armed: true,
        };
        let call = DispatchedCall {
            tool: self.index,
            args: Json(args),
            session_id: cx.session_id.to_string(),
            call_id: cx.call_id.clone(),
            invocation,
        };
        let reply = tokio::select! {
            reply = self.dispatcher.call(call) => reply,
            // Cancellation: the guard aborts the JS side when this future is dropped.
            _ = cx.cancel.cancelled() => return Err(ToolError::model("the tool call was cancelled")),
        };
        guard.armed = false;
        let reply = reply.map_err(|e| ToolError::model(format!("the tool failed: {e}")))?;
        reply_to_output(reply)
    }
}

/// Calls a JS function that answers a value or a promise of one.
pub async fn call_either<
    In: 'static + JsValuesTupleIntoVec,
    Out: FromNapiValue + ValidateNapiValue + TypeName + Send + 'static,
>(
    func: &Callback<In, Either<Out, Promise<Out>>>,
    input: In,
) -> Result<Out> {
    match func.call_async_catch(input).await? {
        Either::A(value) => Ok(value),
        Either::B(promise) => promise.await,
    }
}

fn reply_to_output(reply: ToolReply) -> std::result::Result<ToolOutput, ToolError> {
    let text = reply.text.clone().unwrap_or_default();
    match reply.kind.as_str() {
        "json" => {
            let raw = reply.json.unwrap_or_else(|| "null".to_owned());
            match serde_json::from_str::<Value>(&raw) {
                Ok(value) => Ok(ToolOutput::json(value)),
                Err(_) => Ok(ToolOutput::text(raw)),
            }
        }
        "error" if reply.retryable.unwrap_or(false) => Err(ToolError::retryable(text)),
        "error" => Err(ToolError::model(text)),
        "fatal" => Err(match reply.error_id {
            Some(id) => ToolError::Fatal {
                message: text.clone(),
                source: Some(Box::new(JsErrorRef { id, message: text })),
            },
            None => ToolError::fatal(text),
        }),
        "image" => {
            let data = reply.json.unwrap_or_default();
            let media_type = reply.text.clone().unwrap_or_else(|| "image/png".to_owned());
            Ok(ToolOutput {
                content: vec![ContentPart::Image {
                    media_type,
                    source: ImageSource::Base64 { data },
                }],
                structured: None,
                provenance: None,
                truncated: false,
            })
        }
        _ => Ok(ToolOutput::text(text)),
    }
}

/// What the JS gate receives.
#[napi(object, object_from_js = false)]
pub struct GateInput {
    /// The session asking.
    pub session_id: String,
    /// The call's id.
    pub call_id: String,
    /// The tool's name.
    pub tool: String,
    /// The validated arguments.
    #[napi(ts_type = "any")]
    pub arguments: Json,
    /// Who started the turn.
    pub origin: GateOrigin,
    /// The host of the web page the call acts on, when its tool names one (the page tools).
    pub host: Option<String>,
}

/// Who started a turn: `person`, or `tab` (another tab's agent) with its id and handle.
#[napi(object)]
pub struct GateOrigin {
    /// `person` or `tab`.
    pub kind: String,
    /// The sending tab's id, for `tab`.
    pub tab_id: Option<String>,
    /// The sending tab's handle, for `tab`.
    pub handle: Option<String>,
}

impl From<&TurnOrigin> for GateOrigin {
    fn from(origin: &TurnOrigin) -> Self {
        match origin {
            TurnOrigin::Person => GateOrigin {
                kind: "person".into(),
                tab_id: None,
                handle: None,
            },
            TurnOrigin::Tab { tab_id, handle } => GateOrigin {
                kind: "tab".into(),
                tab_id: tab_id.clone(),
                handle: handle.clone(),
            },
        }
    }
}

/// What the JS gate wrapper answers.
#[napi(object)]
pub struct GateReply {
    /// Whether the call may run.
    pub allow: bool,
    /// Why not, when denied.
    pub reason: Option<String>,
    /// Ask the person: the turn parks until the approval is resolved (when `allow` is false).
    pub ask: Option<bool>,
    /// What to ask the person, with `ask`.
    pub prompt: Option<String>,
}

/// The gate function as the JS layer hands it over.
pub type GateFn = Callback<GateInput, Either<GateReply, Promise<GateReply>>>;

/// A consent gate implemented in JavaScript. A gate that throws denies the call.
pub struct JsGate(pub GateFn);

#[async_trait]
impl Gate for JsGate {
    async fn check(&self, request: &GateRequest) -> GateDecision {
        let input = GateInput {
            session_id: request.session_id.to_string(),
            call_id: request.call_id.clone(),
            tool: request.tool.clone(),
            arguments: Json(request.arguments.clone()),
            origin: (&request.origin).into(),
            host: request.host.clone(),
        };
        match call_either(&self.0, input).await {
            Ok(GateReply { allow: true, .. }) => GateDecision::Allow,
            Ok(GateReply {
                ask: Some(true),
                prompt,
                ..
            }) => GateDecision::Ask { prompt },
            Ok(GateReply { reason, .. }) => GateDecision::Deny { reason },
            Err(e) => GateDecision::deny(format!("the gate failed: {}", e.reason)),
        }
    }
}
