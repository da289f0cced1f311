//! Model providers for JavaScript: the scripted provider now, real adapters as they land.

use std::sync::Arc;
use std::time::Duration;

use agent_core::{Provider, ProviderError, ScriptStep, ScriptStepSpec, ScriptedProvider};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;

use crate::convert::{Json, js};
use crate::error::coded;

/// A model provider, shared by the agents built with it.
#[napi]
pub struct NativeProvider {
    pub(crate) inner: Arc<dyn Provider>,
    scripted: Option<Arc<ScriptedProvider>>,
}

#[napi]
impl NativeProvider {
    /// A provider that replays `steps` (an array of `ScriptStepSpec` objects, plain JSON data),
    /// one per model call.
    #[napi(factory, ts_args_type = "steps: any[], recordRequests?: boolean | undefined | null")]
    pub fn scripted(steps: Unknown<'_>, record_requests: Option<bool>) -> Result<NativeProvider> {
        let steps = steps_of(crate::options::value_of("steps", steps)?)?;
        let mut provider = ScriptedProvider::new(steps);
        if record_requests.unwrap_or(true) {
            provider = provider.record_requests();
        }
        let provider = Arc::new(provider);
        Ok(NativeProvider {
            inner: provider.clone(),
            scripted: Some(provider),
        })
    }

    /// A scripted provider whose steps come from a synchronous JS function
    /// `(request) => step` (a `ScriptStepSpec` object, plain JSON data), called once per model
    /// call.
    #[napi(factory, ts_args_type = "choose: (request: any) => any")]
    pub fn scripted_fn(choose: Function<'_, Json, Value>) -> Result<NativeProvider> {
        let tsfn: crate::callbacks::Callback<Json, Value> =
            choose.build_threadsafe_function().weak::<true>().build()?;
        let tsfn = Arc::new(tsfn);
        let provider = Arc::new(ScriptedProvider::from_fn(move |request| ask_script(&tsfn, request)).record_requests());
        Ok(NativeProvider {
            inner: provider.clone(),
            scripted: Some(provider),
        })
    }

    /// The provider's id (`scripted`, `openai-compatible`, ...).
    #[napi(getter)]
    pub fn id(&self) -> String {
        self.inner.id().to_owned()
    }

    /// The model's name.
    #[napi(getter)]
    pub fn model(&self) -> String {
        self.inner.model().to_owned()
    }

    /// Model calls made so far (scripted providers only; 0 otherwise).
    #[napi(getter)]
    pub fn call_count(&self) -> u32 {
        self.scripted.as_ref().map_or(0, |s| s.call_count() as u32)
    }

    /// The requests the scripted provider received (empty otherwise).
    #[napi(ts_return_type = "any[]")]
    pub fn requests(&self) -> Json {
        let requests = self.scripted.as_ref().map(|s| s.requests()).unwrap_or_default();
        js(&requests)
    }
}

/// Asks the JS script function for the next step, blocking this worker thread (not the JS
/// thread) until it answers.
fn ask_script(tsfn: &crate::callbacks::Callback<Json, Value>, request: &agent_core::ModelRequest) -> ScriptStep {
    use napi::threadsafe_function::ThreadsafeFunctionCallMode;
    let failed = |m: String| ScriptStep::Error(ProviderError::BadRequest(format!("scripted provider: {m}")));
    let (tx, rx) = std::sync::mpsc::channel::<Result<Value>>();
    let status = tsfn.call_with_return_value(js(request), ThreadsafeFunctionCallMode::NonBlocking, move |r, _env| {
        let _ = tx.send(r);
        Ok(())
    });
    if status != Status::Ok {
        return failed(format!("the script function could not be called ({status})"));
    }
    let wait = move || rx.recv_timeout(Duration::from_secs(60));
    let answer = match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => tokio::task::block_in_place(wait),
        _ => wait(),
    };
    match answer {
        Ok(Ok(mut step)) => {
            crate::convert::integral_numbers(&mut step);
            step_of("the script function's step", step)
                .unwrap_or_else(|e| failed(e.reason.trim_start_matches("[invalid_argument] ").to_owned()))
        }
        Ok(Err(e)) => failed(format!("the script function threw: {}", e.reason)),
        Err(_) => failed("the script function did not answer within 60 s".to_owned()),
    }
}

/// Script steps (plain JSON data, camelCase keys of `ScriptStepSpec`) as steps: the options
/// path of the other options, then the spec's own checks.
fn steps_of(mut value: Value) -> Result<Vec<ScriptStep>> {
    crate::convert::integral_numbers(&mut value);
    let Value::Array(items) = value else {
        return Err(coded("invalid_argument", "the script steps must be an array"));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, step)| step_of(&format!("script step {i}"), step))
        .collect()
}

/// One script step (see [`steps_of`]); `what` names it in errors.
fn step_of(what: &str, value: Value) -> Result<ScriptStep> {
    let spec: ScriptStepSpec = crate::options::parse(what, value)?;
    ScriptStep::try_from(spec).map_err(|e| crate::options::invalid(what, e))
}

#[napi]
impl NativeProvider {
    /// A real provider adapter (OpenAI-compatible, Anthropic or Gemini): a `ProviderConfig`
    /// options object (camelCase keys of the options format, `kind` and `model` required).
    #[napi(factory, ts_args_type = "options: object")]
    pub fn connect(options: Unknown<'_>) -> Result<NativeProvider> {
        let value = crate::options::value_of("provider options", options)?;
        let config: agent_providers::ProviderConfig = crate::options::parse("provider options", value)?;
        let inner = config.build().map_err(|e| coded("config", e))?;
        Ok(NativeProvider { inner, scripted: None })
    }

    /// A router trying this provider first and `fallback` when a call fails with a retryable
    /// error before any content streamed.
    #[napi]
    pub fn with_fallback(&self, fallback: &NativeProvider) -> NativeProvider {
        let router = agent_providers::FallbackRouter::new(self.inner.clone()).with_fallback(fallback.inner.clone());
        NativeProvider {
            inner: Arc::new(router),
            scripted: None,
        }
    }

    /// The provider the `LLM_PROVIDER`, `LLM_MODEL`, `LLM_API_KEY` and `LLM_BASE_URL`
    /// environment variables describe.
    #[napi(factory)]
    pub fn from_env() -> Result<NativeProvider> {
        let inner = agent_providers::from_env().map_err(|e| coded("config", e))?;
        Ok(NativeProvider { inner, scripted: None })
    }
}
