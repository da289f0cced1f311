//! Model providers for JavaScript: the scripted provider now, real adapters as they land.

use std::sync::Arc;
use std::time::Duration;

use agent_core::{Provider, ProviderError, ScriptStep, ScriptedProvider, ScriptedReply, Usage};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;

use crate::error::coded;

/// A model provider, shared by the agents built with it.
#[napi]
pub struct NativeProvider {
    pub(crate) inner: Arc<dyn Provider>,
    scripted: Option<Arc<ScriptedProvider>>,
}

#[napi]
impl NativeProvider {
    /// A provider that replays `stepsJson` (a JSON array of steps), one per model call.
    #[napi(factory)]
    pub fn scripted(steps_json: String, record_requests: Option<bool>) -> Result<NativeProvider> {
        let steps: Vec<Value> =
            serde_json::from_str(&steps_json).map_err(|e| coded("invalid_argument", format!("steps: {e}")))?;
        let steps = steps.iter().map(parse_step).collect::<Result<Vec<_>>>()?;
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
    /// `(requestJson) => stepJson`, called once per model call.
    #[napi(factory, ts_args_type = "choose: (requestJson: string) => string")]
    pub fn scripted_fn(choose: Function<'_, String, String>) -> Result<NativeProvider> {
        let tsfn: crate::callbacks::Callback<String, String> =
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

    /// The requests the scripted provider received, as JSON text (empty array otherwise).
    #[napi]
    pub fn requests_json(&self) -> String {
        let requests = self.scripted.as_ref().map(|s| s.requests()).unwrap_or_default();
        let value = crate::convert::camel_keys(serde_json::to_value(requests).unwrap_or(Value::Null));
        value.to_string()
    }
}

/// Asks the JS script function for the next step, blocking this worker thread (not the JS
/// thread) until it answers.
fn ask_script(tsfn: &crate::callbacks::Callback<String, String>, request: &agent_core::ModelRequest) -> ScriptStep {
    use napi::threadsafe_function::ThreadsafeFunctionCallMode;
    let failed = |m: String| ScriptStep::Error(ProviderError::BadRequest(format!("scripted provider: {m}")));
    let json = crate::convert::camel_keys(serde_json::to_value(request).unwrap_or(Value::Null)).to_string();
    let (tx, rx) = std::sync::mpsc::channel::<Result<String>>();
    let status = tsfn.call_with_return_value(json, ThreadsafeFunctionCallMode::NonBlocking, move |r, _env| {
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
        Ok(Ok(text)) => match serde_json::from_str::<Value>(&text) {
            Ok(step) => parse_step(&step).unwrap_or_else(|e| failed(e.reason.clone())),
            Err(e) => failed(format!("the script function returned malformed JSON: {e}")),
        },
        Ok(Err(e)) => failed(format!("the script function threw: {}", e.reason)),
        Err(_) => failed("the script function did not answer within 60 s".to_owned()),
    }
}

fn field<'a>(step: &'a Value, key: &str) -> Option<&'a Value> {
    step.get(key).filter(|v| !v.is_null())
}

fn parse_step(step: &Value) -> Result<ScriptStep> {
    if !step.is_object() {
        return Err(coded(
            "invalid_argument",
            format!("a script step must be an object, got {step}"),
        ));
    }
    if let Some(ms) = field(step, "delayMs") {
        let ms = ms
            .as_f64()
            .ok_or_else(|| coded("invalid_argument", "delayMs must be a number"))?;
        let then = field(step, "then").ok_or_else(|| coded("invalid_argument", "a delay step needs `then`"))?;
        return Ok(ScriptStep::Delay(
            Duration::from_secs_f64(ms.max(0.0) / 1000.0),
            Box::new(parse_step(then)?),
        ));
    }
    if let Some(text) = field(step, "hang") {
        return Ok(ScriptStep::Hang(text.as_str().unwrap_or_default().to_owned()));
    }
    let has_reply = ["text", "toolCalls", "reasoning"]
        .iter()
        .any(|k| field(step, k).is_some());
    if let Some(error) = field(step, "error") {
        let error = parse_error(error)?;
        return Ok(if has_reply {
            ScriptStep::FailAfter(parse_reply(step)?, error)
        } else {
            ScriptStep::Error(error)
        });
    }
    Ok(ScriptStep::Reply(parse_reply(step)?))
}

fn parse_reply(step: &Value) -> Result<ScriptedReply> {
    let mut reply = ScriptedReply::text(field(step, "text").and_then(Value::as_str).unwrap_or_default());
    if let Some(r) = field(step, "reasoning").and_then(Value::as_str) {
        reply = reply.with_reasoning(r);
    }
    if let Some(calls) = field(step, "toolCalls") {
        let calls = calls
            .as_array()
            .ok_or_else(|| coded("invalid_argument", "toolCalls must be an array"))?;
        for call in calls {
            let name = call
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| coded("invalid_argument", "a tool call needs a name"))?;
            reply = match call.get("arguments") {
                Some(Value::String(raw)) => reply.with_raw_call(name, raw.clone()),
                Some(args) if !args.is_null() => reply.with_call(name, args.clone()),
                _ => reply.with_call(name, serde_json::json!({})),
            };
        }
    }
    if let Some(u) = field(step, "usage") {
        let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
        reply.usage = Some(Usage {
            input_tokens: n("inputTokens"),
            output_tokens: n("outputTokens"),
            cached_input_tokens: n("cachedInputTokens"),
            reasoning_tokens: n("reasoningTokens"),
        });
    }
    Ok(reply)
}

fn parse_error(error: &Value) -> Result<ProviderError> {
    let kind = error.get("kind").and_then(Value::as_str).unwrap_or("server");
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("scripted failure")
        .to_owned();
    let status = error.get("status").and_then(Value::as_u64).map(|s| s as u16);
    Ok(match kind {
        "rate_limited" => ProviderError::RateLimited {
            retry_after: error
                .get("retryAfterMs")
                .and_then(Value::as_u64)
                .map(Duration::from_millis),
            message,
        },
        "timeout" => ProviderError::Timeout(message),
        "transport" => ProviderError::Transport(message),
        "server" => ProviderError::Server {
            status: status.unwrap_or(500),
            message,
        },
        "auth" => ProviderError::Auth {
            status: status.unwrap_or(401),
            message,
        },
        "bad_request" => ProviderError::BadRequest(message),
        "context_overflow" => ProviderError::ContextOverflow(message),
        "malformed" => ProviderError::Malformed(message),
        "config" => ProviderError::Config(message),
        other => {
            return Err(coded(
                "invalid_argument",
                format!(
                    "unknown provider error kind {other:?}; use rate_limited, timeout, transport, server, auth, bad_request, context_overflow, malformed or config"
                ),
            ));
        }
    })
}

/// How to reach a real model service.
#[napi(object)]
pub struct ProviderOptions {
    /// `openai-compatible`, `anthropic` or `gemini`.
    pub kind: String,
    /// The model name.
    pub model: String,
    /// The API key (empty for local servers that need none).
    pub api_key: Option<String>,
    /// Overrides the default base URL (for example `http://127.0.0.1:8080/v1`).
    pub base_url: Option<String>,
    /// Stream over SSE (default true).
    pub streaming: Option<bool>,
    /// The model's context window in tokens, when known.
    pub max_input_tokens: Option<f64>,
    /// Extra request headers.
    pub headers: Option<std::collections::HashMap<String, String>>,
    /// Attempts per call, retries included (default from the adapter).
    pub max_attempts: Option<u32>,
    /// The whole call's timeout, in ms.
    pub call_timeout_ms: Option<f64>,
}

#[napi]
impl NativeProvider {
    /// A real provider adapter (OpenAI-compatible, Anthropic or Gemini).
    #[napi(factory)]
    pub fn connect(options: ProviderOptions) -> Result<NativeProvider> {
        use agent_providers::{ProviderConfig, ProviderKind};
        let kind: ProviderKind = options.kind.parse().map_err(|e: ProviderError| coded("config", e))?;
        let mut config = ProviderConfig::new(kind, options.model, options.api_key.unwrap_or_default());
        if let Some(url) = options.base_url {
            config = config.with_base_url(url);
        }
        if let Some(streaming) = options.streaming {
            config = config.with_streaming(streaming);
        }
        config.max_input_tokens = options.max_input_tokens.map(|n| n as u64);
        for (name, value) in options.headers.unwrap_or_default() {
            config = config.with_header(name, value);
        }
        if let Some(n) = options.max_attempts {
            config.http.max_attempts = n.max(1);
        }
        if let Some(ms) = options.call_timeout_ms {
            config.http.call_timeout = Duration::from_secs_f64(ms.max(0.0) / 1000.0);
        }
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
