//! Larger JSON values go to JavaScript as text through V8's own `JSON.parse`.
//!
//! napi builds an object one call per object but names every key with a JS string of its own,
//! and sets an array's elements one call each: about 1 300 instructions per key. V8's parser
//! builds the same objects from the text in a few dozen instructions per value, and gives the
//! same result: keys as own data properties (a `"__proto__"` key stays an ordinary key), every
//! number a JS number.

use std::cell::RefCell;
use std::ffi::c_void;
use std::ptr;

use napi::sys;
use serde_json::Value;

/// Values (the value itself and everything inside it) from which the parser is the cheaper
/// way: below this, the call into JS costs more than the properties it saves.
pub const PARSE_FROM: usize = 4;

thread_local! {
    /// `JSON.parse` of each environment running on this thread, looked up once per
    /// environment. Node runs one per thread (the main one, each worker); an embedder may run
    /// several on one thread (a frame each). A cleanup hook forgets an environment's reference
    /// when it goes, so a later one at the same address never sees it.
    static CACHED_PARSE: RefCell<Vec<(usize, sys::napi_ref)>> = const { RefCell::new(Vec::new()) };
}

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
/// conversion serves it for its life: one that a host replaces later is never called.
///
/// # Safety
/// Call only on the JS thread of `env`, with a handle scope open.
pub unsafe fn parse(env: sys::napi_env, value: &Value) -> Option<sys::napi_value> {
    let text = serde_json::to_string(value).ok()?;
    // SAFETY: on the JS thread with a handle scope open (caller's contract).
    unsafe {
        let parse = cached_parse(env)?;
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

/// This environment's `JSON.parse`.
///
/// # Safety
/// Call only on the JS thread of `env`, with a handle scope open.
unsafe fn cached_parse(env: sys::napi_env) -> Option<sys::napi_value> {
    let ok = sys::Status::napi_ok;
    let mut function = ptr::null_mut();
    // SAFETY: on the JS thread with a handle scope open (caller's contract); the cached
    // reference belongs to this environment and is forgotten before the environment goes.
    unsafe {
        let cached = CACHED_PARSE.with_borrow(|cache| {
            cache
                .iter()
                .find(|(owner, _)| *owner == env as usize)
                .map(|(_, reference)| *reference)
        });
        if let Some(reference) = cached {
            // Never looked up again for this environment: its cleanup hook is registered
            // once (Node aborts on a second registration of the same hook).
            let found = sys::napi_get_reference_value(env, reference, &mut function) == ok;
            return (found && !function.is_null()).then_some(function);
        }
        let mut global = ptr::null_mut();
        let mut json = ptr::null_mut();
        let mut kind = sys::ValueType::napi_undefined;
        let found = sys::napi_get_global(env, &mut global) == ok
            && sys::napi_get_named_property(env, global, c"JSON".as_ptr(), &mut json) == ok
            && sys::napi_get_named_property(env, json, c"parse".as_ptr(), &mut function) == ok
            && sys::napi_typeof(env, function, &mut kind) == ok
            && kind == sys::ValueType::napi_function;
        if !found {
            let mut thrown = ptr::null_mut();
            sys::napi_get_and_clear_last_exception(env, &mut thrown);
            return None;
        }
        let mut reference = ptr::null_mut();
        if sys::napi_create_reference(env, function, 1, &mut reference) == ok {
            if sys::napi_add_env_cleanup_hook(env, Some(forget_parse), env.cast::<c_void>()) == ok {
                CACHED_PARSE.with_borrow_mut(|cache| cache.push((env as usize, reference)));
            } else {
                // Not cached without a hook to forget it: looked up again next time.
                sys::napi_delete_reference(env, reference);
            }
        }
        Some(function)
    }
}

/// The environment `env` is going: its reference goes with it.
unsafe extern "C" fn forget_parse(env: *mut c_void) {
    // `try_with`: a hook that ran as its thread ends must not panic across the FFI boundary.
    let _ = CACHED_PARSE.try_with(|cache| {
        if let Ok(mut cache) = cache.try_borrow_mut() {
            cache.retain(|(owner, _)| *owner != env as usize);
        }
    });
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
