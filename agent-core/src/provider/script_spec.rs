//! Scripted-provider steps as data, in the [options format](crate::options): what the bindings
//! and test fixtures write instead of building [`ScriptStep`] values in code.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ProviderError, ProviderErrorKind, ScriptStep, ScriptedReply, Usage};

/// One step of a [`ScriptedProvider`](super::ScriptedProvider) as data. Its shape says what it
/// does:
///
/// - `{"text": ..., "reasoning": ..., "tool_calls": [{"name": ..., "arguments": {...}}], "usage": {...}}`
///   streams a reply (every key optional; `arguments` as a string is sent verbatim, so a script
///   can send malformed JSON on purpose);
/// - the same with `"error": {"kind": "server", ...}` streams the reply's text and then fails,
///   or fails at once when there is no text, reasoning or tool call;
/// - `{"delay_ms": 200, "then": {...}}` waits (cancellably), then does `then`;
/// - `{"hang": "text"}` streams the text and never finishes.
///
/// A bare string is a text reply. Unknown keys are refused.
///
/// ```
/// use agent_core::{ScriptStep, ScriptStepSpec};
/// let spec: ScriptStepSpec = serde_json::from_value(serde_json::json!(
///     {"delay_ms": 50, "then": {"tool_calls": [{"name": "echo", "arguments": {"text": "hi"}}]}}
/// )).unwrap();
/// assert!(matches!(ScriptStep::try_from(spec).unwrap(), ScriptStep::Delay(..)));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ScriptStepSpec {
    /// Answer text, streamed word by word.
    pub text: Option<String>,
    /// Reasoning text, streamed before the answer.
    pub reasoning: Option<String>,
    /// Tool calls to make.
    pub tool_calls: Vec<ScriptedCallSpec>,
    /// Usage to report (an estimate when absent).
    pub usage: Option<Usage>,
    /// Fail the call with this error (after streaming the text, when there is some).
    pub error: Option<ScriptedErrorSpec>,
    /// Wait this long before doing `then`.
    #[serde(with = "crate::options::option_duration_ms")]
    #[schemars(schema_with = "crate::options::option_millis_schema")]
    pub delay_ms: Option<Duration>,
    /// The step a `delay_ms` step does after its wait.
    pub then: Option<Box<ScriptStepSpec>>,
    /// Stream this text, then never finish (until the call is cancelled).
    pub hang: Option<String>,
}

/// One tool call of a scripted reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCallSpec {
    /// The tool's name.
    pub name: String,
    /// The arguments: a JSON value, or a string sent verbatim (absent means `{}`).
    #[serde(default)]
    pub arguments: Option<Value>,
}

/// The error a scripted step fails with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptedErrorSpec {
    /// The kind of failure (`server` when absent).
    #[serde(default = "server_kind")]
    pub kind: ProviderErrorKind,
    /// The provider's message.
    #[serde(default)]
    pub message: Option<String>,
    /// The HTTP status, for `server` (default 500) and `auth` (default 401).
    #[serde(default)]
    pub status: Option<u16>,
    /// For `rate_limited`: the `Retry-After` the server sent.
    #[serde(default, with = "crate::options::option_duration_ms")]
    #[schemars(schema_with = "crate::options::option_millis_schema")]
    pub retry_after_ms: Option<Duration>,
}

fn server_kind() -> ProviderErrorKind {
    ProviderErrorKind::Server
}

impl<'de> Deserialize<'de> for ScriptStepSpec {
    /// A string is a text reply; an object names its fields (unknown ones are refused).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StepVisitor)
    }
}

struct StepVisitor;

impl<'de> serde::de::Visitor<'de> for StepVisitor {
    type Value = ScriptStepSpec;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a script step: a text reply, or an object")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(ScriptStepSpec {
            text: Some(text.to_owned()),
            ..ScriptStepSpec::default()
        })
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let StepFields {
            text,
            reasoning,
            tool_calls,
            usage,
            error,
            delay_ms,
            then,
            hang,
        } = StepFields::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
        Ok(ScriptStepSpec {
            text,
            reasoning,
            tool_calls,
            usage,
            error,
            delay_ms,
            then,
            hang,
        })
    }
}

/// The object form, read by the derived code (the spec itself also accepts a bare string).
#[derive(Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct StepFields {
    text: Option<String>,
    reasoning: Option<String>,
    tool_calls: Vec<ScriptedCallSpec>,
    usage: Option<Usage>,
    error: Option<ScriptedErrorSpec>,
    #[serde(with = "crate::options::option_duration_ms")]
    delay_ms: Option<Duration>,
    then: Option<Box<ScriptStepSpec>>,
    hang: Option<String>,
}

impl From<ScriptedErrorSpec> for ProviderError {
    fn from(spec: ScriptedErrorSpec) -> Self {
        let message = spec.message.unwrap_or_else(|| "scripted failure".to_owned());
        match spec.kind {
            ProviderErrorKind::RateLimited => ProviderError::RateLimited {
                retry_after: spec.retry_after_ms,
                message,
            },
            ProviderErrorKind::Timeout => ProviderError::Timeout(message),
            ProviderErrorKind::Transport => ProviderError::Transport(message),
            ProviderErrorKind::Server => ProviderError::Server {
                status: spec.status.unwrap_or(500),
                message,
            },
            ProviderErrorKind::Auth => ProviderError::Auth {
                status: spec.status.unwrap_or(401),
                message,
            },
            ProviderErrorKind::BadRequest => ProviderError::BadRequest(message),
            ProviderErrorKind::ContextOverflow => ProviderError::ContextOverflow(message),
            ProviderErrorKind::Malformed => ProviderError::Malformed(message),
            ProviderErrorKind::Config => ProviderError::Config(message),
            ProviderErrorKind::Cancelled => ProviderError::Cancelled,
        }
    }
}

/// Why a [`ScriptStepSpec`] is not a step.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid script step: {0}")]
pub struct ScriptStepSpecError(String);

impl TryFrom<ScriptStepSpec> for ScriptStep {
    type Error = ScriptStepSpecError;

    fn try_from(spec: ScriptStepSpec) -> Result<Self, ScriptStepSpecError> {
        let has_reply = spec.text.is_some() || spec.reasoning.is_some() || !spec.tool_calls.is_empty();
        let bad = |what: &str| Err(ScriptStepSpecError(what.to_owned()));
        if let Some(wait) = spec.delay_ms {
            let Some(then) = spec.then else {
                return bad("a `delay_ms` step needs `then`, the step to do after the wait");
            };
            if has_reply || spec.error.is_some() || spec.hang.is_some() || spec.usage.is_some() {
                return bad("a `delay_ms` step takes only `then`");
            }
            return Ok(ScriptStep::Delay(wait, Box::new(ScriptStep::try_from(*then)?)));
        }
        if spec.then.is_some() {
            return bad("`then` belongs to a `delay_ms` step");
        }
        if let Some(text) = spec.hang {
            if has_reply || spec.error.is_some() || spec.usage.is_some() {
                return bad("a `hang` step takes only its text");
            }
            return Ok(ScriptStep::Hang(text));
        }
        let error = spec.error.map(ProviderError::from);
        let mut reply = ScriptedReply::text(spec.text.unwrap_or_default());
        reply.reasoning = spec.reasoning;
        reply.usage = spec.usage;
        for call in spec.tool_calls {
            reply = match call.arguments {
                Some(Value::String(raw)) => reply.with_raw_call(call.name, raw),
                Some(Value::Null) | None => reply.with_call(call.name, Value::Object(Default::default())),
                Some(args) => reply.with_call(call.name, args),
            };
        }
        Ok(match error {
            Some(error) if has_reply => ScriptStep::FailAfter(reply, error),
            Some(error) => ScriptStep::Error(error),
            None => ScriptStep::Reply(reply),
        })
    }
}

impl ScriptStep {
    /// Reads a step from its data form ([`ScriptStepSpec`]).
    pub fn from_json(value: Value) -> Result<ScriptStep, ScriptStepSpecError> {
        let spec: ScriptStepSpec = serde_json::from_value(value).map_err(|e| ScriptStepSpecError(e.to_string()))?;
        ScriptStep::try_from(spec)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use serde_json::json;

    use super::*;

    fn step(v: Value) -> ScriptStep {
        ScriptStep::from_json(v).unwrap()
    }

    #[test]
    fn every_shape_reads_as_its_step() {
        let ScriptStep::Reply(reply) = step(json!("hello")) else {
            panic!()
        };
        assert_eq!(reply.text, "hello");

        let ScriptStep::Reply(reply) = step(json!({"tool_calls": [
            {"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": "{broken"}, {"name": "c"}
        ], "usage": {"input_tokens": 3, "output_tokens": 4}})) else {
            panic!()
        };
        assert_eq!(
            reply.tool_calls,
            vec![
                ("a".into(), r#"{"x":1}"#.into()),
                ("b".into(), "{broken".into()),
                ("c".into(), "{}".into())
            ]
        );
        assert_eq!(reply.usage.unwrap().output_tokens, 4);

        assert!(matches!(
            step(json!({"error": {"kind": "rate_limited", "retry_after_ms": 1500}})),
            ScriptStep::Error(ProviderError::RateLimited { retry_after: Some(d), .. }) if d == Duration::from_millis(1500)
        ));
        assert!(matches!(
            step(json!({"text": "partial", "error": {"kind": "transport"}})),
            ScriptStep::FailAfter(r, ProviderError::Transport(_)) if r.text == "partial"
        ));
        assert!(matches!(
            step(json!({"error": {}})),
            ScriptStep::Error(ProviderError::Server { status: 500, .. })
        ));
        assert!(matches!(
            step(json!({"delay_ms": 20, "then": "late"})),
            ScriptStep::Delay(d, inner) if d == Duration::from_millis(20) && matches!(*inner, ScriptStep::Reply(_))
        ));
        assert!(matches!(step(json!({"hang": "forever"})), ScriptStep::Hang(t) if t == "forever"));
    }

    #[test]
    fn mistakes_are_refused_with_what_to_do() {
        let err = |v: Value| ScriptStep::from_json(v).unwrap_err().to_string();
        assert!(err(json!({"delay_ms": 5})).contains("needs `then`"));
        assert!(err(json!({"then": "x"})).contains("belongs to a `delay_ms`"));
        assert!(err(json!({"hang": "x", "text": "y"})).contains("only its text"));
        assert!(err(json!({"hang": "x", "usage": {"input_tokens": 1, "output_tokens": 1}})).contains("only its text"));
        assert!(
            err(json!({"delay_ms": 1, "then": "x", "usage": {"input_tokens": 1, "output_tokens": 1}}))
                .contains("only `then`")
        );
        assert!(err(json!({"txt": "typo"})).contains("txt"));
        assert!(err(json!({"error": {"kind": "nope"}})).contains("nope"));
        assert!(err(json!(42)).contains("invalid script step"));
    }
}
