//! Rust values to the plain objects JavaScript sees: serde JSON with camelCase keys.
//!
//! Keys are the Rust field names in camelCase; values (event `type`s, statuses) keep their
//! snake_case wire names. User data (tool arguments, questions) is passed through unchanged.

use agent_core::{AgentEvent, ErrorKind, Outcome, RunStatus};
use napi::bindgen_prelude::*;
use napi::sys;
use serde_json::{Map, Number, Value};

use crate::env_functions::{self, EnvFunction};
use crate::error::JsErrorRef;
use crate::json_parse;

/// A JSON value handed to JavaScript as plain objects, arrays and primitives, made the way
/// `JSON.parse` makes them: object keys are defined as own data properties (a `"__proto__"`
/// key from a model's tool arguments is an ordinary key, never the object's prototype), and
/// every number is a JS number (an integer past 2^53 loses precision, as with `JSON.parse`,
/// instead of becoming a BigInt).
#[derive(Debug, Clone, PartialEq)]
pub struct Json(pub Value);

/// Nesting past this is refused (serde_json reads at most 128 levels; the core's values stay
/// well inside).
const MAX_DEPTH: u32 = 256;

fn check(status: sys::napi_status, what: &str) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Error::new(
            Status::GenericFailure,
            format!("converting a value to JS: {what} failed"),
        ))
    }
}

unsafe fn js_string(env: sys::napi_env, s: &str) -> Result<sys::napi_value> {
    let mut out = std::ptr::null_mut();
    check(
        unsafe { sys::napi_create_string_utf8(env, s.as_ptr().cast(), s.len() as isize, &mut out) },
        "napi_create_string_utf8",
    )?;
    Ok(out)
}

unsafe fn to_js(env: sys::napi_env, value: &Value, depth: u32) -> Result<sys::napi_value> {
    let mut out = std::ptr::null_mut();
    match value {
        Value::Null => check(unsafe { sys::napi_get_null(env, &mut out) }, "napi_get_null")?,
        Value::Bool(b) => check(unsafe { sys::napi_get_boolean(env, *b, &mut out) }, "napi_get_boolean")?,
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            check(
                unsafe { sys::napi_create_double(env, f, &mut out) },
                "napi_create_double",
            )?
        }
        Value::String(s) => out = unsafe { js_string(env, s)? },
        Value::Array(items) => {
            if depth == 0 {
                return Err(Error::new(Status::GenericFailure, "a value nested too deeply for JS"));
            }
            check(
                unsafe { sys::napi_create_array_with_length(env, items.len(), &mut out) },
                "napi_create_array_with_length",
            )?;
            for (i, item) in items.iter().enumerate() {
                let v = unsafe { to_js(env, item, depth - 1)? };
                check(
                    unsafe { sys::napi_set_element(env, out, i as u32, v) },
                    "napi_set_element",
                )?;
            }
        }
        Value::Object(map) => {
            if depth == 0 {
                return Err(Error::new(Status::GenericFailure, "a value nested too deeply for JS"));
            }
            check(unsafe { sys::napi_create_object(env, &mut out) }, "napi_create_object")?;
            let mut props = Vec::with_capacity(map.len());
            for (key, v) in map {
                props.push(sys::napi_property_descriptor {
                    utf8name: std::ptr::null(),
                    name: unsafe { js_string(env, key)? },
                    method: None,
                    getter: None,
                    setter: None,
                    value: unsafe { to_js(env, v, depth - 1)? },
                    attributes: sys::PropertyAttributes::writable
                        | sys::PropertyAttributes::enumerable
                        | sys::PropertyAttributes::configurable,
                    data: std::ptr::null_mut(),
                });
            }
            if !props.is_empty() {
                check(
                    unsafe { sys::napi_define_properties(env, out, props.len(), props.as_ptr()) },
                    "napi_define_properties",
                )?;
            }
        }
    }
    Ok(out)
}

impl ToNapiValue for Json {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        let values = json_parse::count_values(&val.0, MAX_DEPTH)
            .ok_or_else(|| Error::new(Status::GenericFailure, "a value nested too deeply for JS"))?;
        if values >= json_parse::PARSE_FROM
            // SAFETY: on the JS thread with a handle scope open (the trait's contract).
            && let Some(parsed) = unsafe { json_parse::parse(env, &val.0) }
        {
            return Ok(parsed);
        }
        unsafe { to_js(env, &val.0, MAX_DEPTH) }
    }
}

impl FromNapiValue for Json {
    unsafe fn from_napi_value(env: sys::napi_env, napi_val: sys::napi_value) -> Result<Self> {
        let mut value = unsafe { Value::from_napi_value(env, napi_val)? };
        integral_numbers(&mut value);
        Ok(Json(value))
    }
}

impl TypeName for Json {
    fn type_name() -> &'static str {
        "any"
    }

    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

/// A serializable Rust value as JS sees it: [`camel_keys`] of its JSON.
pub fn js<T: serde::Serialize + ?Sized>(value: &T) -> Json {
    Json(camel_keys(serde_json::to_value(value).unwrap_or(Value::Null)))
}

/// Keys whose values are user data and keep their own keys.
/// (`opaque` is a provider's reasoning payload, echoed back unchanged; `decisions` of
/// `approval_resolved` is keyed by call id.)
const OPAQUE: &[&str] = &[
    "arguments",
    "decisions",
    "question",
    "data",
    "structured",
    "parameters",
    "metadata",
    "opaque",
];

/// `snake_case` to `camelCase`.
pub fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' && !out.is_empty() {
            upper = true;
        } else if upper {
            if c.is_ascii() {
                out.push(c.to_ascii_uppercase());
            } else {
                out.extend(c.to_uppercase());
            }
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// [`camel`] of a key the caller owns: a key without `_` (most of them) is kept as it is.
fn camel_owned(key: String) -> String {
    if key.contains('_') { camel(&key) } else { key }
}

/// Renames every object key to camelCase, except inside user data.
pub fn camel_keys(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (k, v) in map {
                let v = if OPAQUE.contains(&k.as_str()) { v } else { camel_keys(v) };
                out.insert(camel_owned(k), v);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(camel_keys).collect()),
        other => other,
    }
}

/// `camelCase` to `snake_case`.
pub fn snake(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Renames every object key to snake_case, except inside user data.
pub fn snake_keys(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (k, v) in map {
                let key = snake(&k);
                let v = if OPAQUE.contains(&key.as_str()) {
                    v
                } else {
                    snake_keys(v)
                };
                out.insert(key, v);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(snake_keys).collect()),
        other => other,
    }
}

/// An outcome as JS sees it; `errorId` names the original JS error of a fatal tool error.
pub fn outcome(outcome: &Outcome) -> Json {
    Json(outcome_value(outcome))
}

fn outcome_value(outcome: &Outcome) -> Value {
    let mut value = camel_keys(serde_json::to_value(outcome).unwrap_or(Value::Null));
    if let (Some(id), Value::Object(map)) = (js_error_id(outcome), &mut value) {
        map.insert("errorId".into(), Value::from(id));
    }
    value
}

/// The JS layer's id of the JS error that ended the turn, if one did.
fn js_error_id(outcome: &Outcome) -> Option<u32> {
    let error: &(dyn std::error::Error + Send + Sync + 'static) = &***outcome.error_source.as_ref()?;
    error.downcast_ref::<JsErrorRef>().map(|r| r.id).or_else(|| {
        // A fatal error may wrap the JS error one level down.
        error
            .source()
            .and_then(|s| s.downcast_ref::<JsErrorRef>().map(|r| r.id))
    })
}

/// A turn's outcome handed to JavaScript: the object [`outcome`] describes. An outcome without
/// optional parts ([`Outcome::has_optional_parts`], most of them) is made by the environment's
/// [`MAKE_OUTCOME`](crate::env_functions::MAKE_OUTCOME) from its values; any other goes the
/// generic way. Both give the same object, keys in the same order.
pub struct JsOutcome(pub Outcome);

impl ToNapiValue for JsOutcome {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        // SAFETY: on the JS thread with a handle scope open (the trait's contract).
        unsafe {
            if let Some(made) = make_outcome(env, &val.0)? {
                return Ok(made);
            }
            Json::to_napi_value(env, outcome(&val.0))
        }
    }
}

impl TypeName for JsOutcome {
    fn type_name() -> &'static str {
        "any"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

/// The outcome made by the environment's outcome maker, or `None` when it has a field the
/// maker does not set, or the maker cannot be had or threw.
unsafe fn make_outcome(env: sys::napi_env, o: &Outcome) -> Result<Option<sys::napi_value>> {
    if o.has_optional_parts() || js_error_id(o).is_some() {
        return Ok(None);
    }
    // SAFETY: on the JS thread with a handle scope open (the caller's contract).
    unsafe {
        let Some(make) = env_functions::get(env, EnvFunction::MakeOutcome) else {
            return Ok(None);
        };
        let usage = &o.usage;
        let args = [
            js_number_or_null(env, o.cost_usd)?,
            js_string_or_null(env, o.error.as_deref())?,
            js_string_or_null(env, o.error_kind.map(ErrorKind::as_str))?,
            js_string_or_null(env, o.final_text.as_deref())?,
            js_number(env, f64::from(o.iterations))?,
            js_number_or_null(env, o.session_cost_usd)?,
            js_string(env, o.status.as_str())?,
            js_number(env, f64::from(o.tool_calls))?,
            // As JSON would give them: an integer past 2^53 loses precision.
            js_number(env, usage.cache_write_tokens as f64)?,
            js_number(env, usage.cached_input_tokens as f64)?,
            js_number(env, usage.input_tokens as f64)?,
            js_number(env, usage.output_tokens as f64)?,
            js_number(env, usage.reasoning_tokens as f64)?,
        ];
        let mut receiver = std::ptr::null_mut();
        check(sys::napi_get_undefined(env, &mut receiver), "napi_get_undefined")?;
        let mut out = std::ptr::null_mut();
        if sys::napi_call_function(env, receiver, make, args.len(), args.as_ptr(), &mut out) != sys::Status::napi_ok {
            // Nothing is left pending for the generic conversion to trip over.
            let mut thrown = std::ptr::null_mut();
            sys::napi_get_and_clear_last_exception(env, &mut thrown);
            return Ok(None);
        }
        Ok(Some(out))
    }
}

unsafe fn js_null(env: sys::napi_env) -> Result<sys::napi_value> {
    let mut out = std::ptr::null_mut();
    check(unsafe { sys::napi_get_null(env, &mut out) }, "napi_get_null")?;
    Ok(out)
}

/// A number as JSON would give it: a value that is not finite is `null`.
unsafe fn js_number(env: sys::napi_env, n: f64) -> Result<sys::napi_value> {
    if !n.is_finite() {
        return unsafe { js_null(env) };
    }
    let mut out = std::ptr::null_mut();
    check(
        unsafe { sys::napi_create_double(env, n, &mut out) },
        "napi_create_double",
    )?;
    Ok(out)
}

unsafe fn js_number_or_null(env: sys::napi_env, n: Option<f64>) -> Result<sys::napi_value> {
    match n {
        Some(n) => unsafe { js_number(env, n) },
        None => unsafe { js_null(env) },
    }
}

unsafe fn js_string_or_null(env: sys::napi_env, s: Option<&str>) -> Result<sys::napi_value> {
    match s {
        Some(s) => unsafe { js_string(env, s) },
        None => unsafe { js_null(env) },
    }
}

/// An event as JS sees it.
pub fn event(event: &AgentEvent) -> Json {
    let mut value = camel_keys(serde_json::to_value(event).unwrap_or(Value::Null));
    // The outcome inside final events gets its errorId too.
    let outcome_of = match &event.kind {
        agent_core::EventKind::RunCompleted { outcome: o }
        | agent_core::EventKind::RunFailed { outcome: o }
        | agent_core::EventKind::RunCancelled { outcome: o }
        | agent_core::EventKind::RunCapped { outcome: o } => Some(o),
        _ => None,
    };
    if let (Some(o), Value::Object(map)) = (outcome_of, &mut value) {
        map.insert("outcome".into(), outcome_value(o));
    }
    Json(value)
}

/// A status snapshot as JS sees it.
pub fn status(status: &RunStatus) -> Json {
    js(status)
}

/// Turns integral doubles into JSON integers, everywhere in `value` (what `JSON.stringify`
/// followed by `serde_json::from_str` would have produced).
pub fn integral_numbers(value: &mut Value) {
    match value {
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64())
                && f.fract() == 0.0
                && f.abs() < 1e19
            {
                let int = if f >= 0.0 {
                    Number::from(f as u64)
                } else {
                    Number::from(f as i64)
                };
                // Only when the integer is exactly the double (always below 2^63; checked anyway).
                if int.as_f64() == Some(f) {
                    *n = int;
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_numbers),
        Value::Object(map) => map.values_mut().for_each(integral_numbers),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn camel_cases_keys_but_not_user_data() {
        let v = serde_json::json!({"call_id": "c", "arguments": {"snake_key": 1}, "usage": {"input_tokens": 2}});
        let out = camel_keys(v);
        assert_eq!(
            out,
            serde_json::json!({"callId": "c", "arguments": {"snake_key": 1}, "usage": {"inputTokens": 2}})
        );
        assert_eq!(camel("type"), "type");
        assert_eq!(camel("final_text"), "finalText");
        for key in [
            "type",
            "final_text",
            "_private",
            "__x",
            "a__b",
            "trailing_",
            "ümlaut_ärger",
            "x_ß",
        ] {
            assert_eq!(camel_owned(key.to_owned()), camel(key), "{key}");
        }
        assert_eq!(camel("ümlaut_ärger"), "ümlautÄrger");
    }
}
