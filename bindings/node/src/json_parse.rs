//! Larger JSON values go to JavaScript as text through V8's own `JSON.parse`.
//!
//! napi builds an object one call per object but names every key with a JS string of its own,
//! and sets an array's elements one call each: about 1 300 instructions per key. V8's parser
//! builds the same objects from the text in a few dozen instructions per value, and gives the
//! same result: keys as own data properties (a `"__proto__"` key stays an ordinary key), every
//! number a JS number.

use std::ptr;

use napi::sys;
use serde_json::Value;

use crate::env_functions::{self, EnvFunction};

/// Values (the value itself and everything inside it) from which the parser is the cheaper
/// way: below this, the call into JS costs more than the properties it saves.
pub const PARSE_FROM: usize = 4;

/// How many values `value` holds, itself included, or `None` when it nests deeper than
/// `depth` levels of arrays and objects.
pub fn count_values(value: &Value, depth: u32) -> Option<usize> {
    match value {
        Value::Array(items) => {
            let inner = depth.checked_sub(1)?;
            items.iter().try_fold(1, |n, item| Some(n + count_values(item, inner)?))
        }
        Value::Object(map) => {
            let inner = depth.checked_sub(1)?;
            map.values().try_fold(1, |n, item| Some(n + count_values(item, inner)?))
        }
        _ => Some(1),
    }
}

/// `JSON.parse` of `value`'s text, or `None` when the parser cannot be reached or throws; the
/// caller then builds the value itself. The `JSON.parse` an environment had at its first
/// conversion serves it for its life (see [`EnvFunction::JsonParse`]).
///
/// # Safety
/// Call only on the JS thread of `env`, with a handle scope open.
pub unsafe fn parse(env: sys::napi_env, value: &Value) -> Option<sys::napi_value> {
    let text = serde_json::to_string(value).ok()?;
    // SAFETY: on the JS thread with a handle scope open (caller's contract).
    unsafe {
        let parse = env_functions::get(env, EnvFunction::JsonParse)?;
        let mut arg = ptr::null_mut();
        let mut receiver = ptr::null_mut();
        let mut out = ptr::null_mut();
        let ready = sys::napi_create_string_utf8(env, text.as_ptr().cast(), text.len() as isize, &mut arg)
            == sys::Status::napi_ok
            && sys::napi_get_undefined(env, &mut receiver) == sys::Status::napi_ok;
        if !ready {
            return None;
        }
        if sys::napi_call_function(env, receiver, parse, 1, &arg, &mut out) != sys::Status::napi_ok {
            // Nothing is left pending for the caller's own conversion to trip over.
            let mut thrown = ptr::null_mut();
            sys::napi_get_and_clear_last_exception(env, &mut thrown);
            return None;
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_every_value_and_refuses_what_nests_too_deep() {
        let value = serde_json::json!({"a": [1, 2, {"b": null}], "c": "d"});
        assert_eq!(count_values(&value, 3), Some(7));
        assert_eq!(count_values(&value, 2), None);
        assert_eq!(count_values(&serde_json::json!("text"), 0), Some(1));
        assert_eq!(count_values(&serde_json::json!([]), 1), Some(1));
        assert_eq!(count_values(&serde_json::json!([]), 0), None);
    }
}
