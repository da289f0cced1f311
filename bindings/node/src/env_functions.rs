//! JS functions the native module calls on hot paths, found or compiled once per environment.
//!
//! Node runs one environment per thread (the main one, each worker); an embedder may run
//! several on one thread (a frame each). Each environment's functions are kept as references
//! in a thread-local list, and one cleanup hook per environment forgets them when it goes, so
//! a later environment at the same address never sees them.

use std::cell::RefCell;
use std::ffi::{CStr, c_void};
use std::ptr;

use napi::sys;

/// A function kept per environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvFunction {
    /// The environment's own `JSON.parse`, as it was at its first use: one a host replaces
    /// later is never called.
    JsonParse,
    /// [`MAKE_OUTCOME`], compiled in the environment.
    MakeOutcome,
}

/// Builds a turn's outcome from its common fields, passed as arguments. The generic way (its
/// JSON text through `JSON.parse`) took 18.8k instructions on the JS thread for an outcome's
/// 14 values (`callgrind`); values passed as arguments cost no more than themselves, and V8
/// builds the literal in a few dozen. The keys are in the order the generic conversion gives
/// them (serde's, sorted), so both make the same object.
pub const MAKE_OUTCOME: &CStr = c"(function makeOutcome(costUsd, error, errorKind, finalText, iterations, sessionCostUsd, status, toolCalls, cacheWriteTokens, cachedInputTokens, inputTokens, outputTokens, reasoningTokens) {
  return { costUsd, error, errorKind, finalText, iterations, sessionCostUsd, status, toolCalls,
    usage: { cacheWriteTokens, cachedInputTokens, inputTokens, outputTokens, reasoningTokens } }
})";

struct Kept {
    env: usize,
    function: EnvFunction,
    reference: sys::napi_ref,
}

thread_local! {
    static KEPT: RefCell<Vec<Kept>> = const { RefCell::new(Vec::new()) };
}

/// `function` of this environment, found or compiled on first use; `None` when it cannot be
/// had (the caller then takes its generic path).
///
/// # Safety
/// Call only on the JS thread of `env`, with a handle scope open.
pub unsafe fn get(env: sys::napi_env, function: EnvFunction) -> Option<sys::napi_value> {
    let ok = sys::Status::napi_ok;
    let (kept, env_known) = KEPT.with_borrow(|kept| {
        let mine = kept.iter().filter(|k| k.env == env as usize);
        let mut known = false;
        let mut found = None;
        for k in mine {
            known = true;
            if k.function == function {
                found = Some(k.reference);
            }
        }
        (found, known)
    });
    // SAFETY: on the JS thread with a handle scope open (caller's contract); a kept reference
    // belongs to this environment and is forgotten before the environment goes.
    unsafe {
        if let Some(reference) = kept {
            // Never made again for this environment once kept: its cleanup hook is
            // registered once (Node aborts on a second registration of the same hook).
            let mut value = ptr::null_mut();
            let found = sys::napi_get_reference_value(env, reference, &mut value) == ok;
            return (found && !value.is_null()).then_some(value);
        }
        let value = match function {
            EnvFunction::JsonParse => find_json_parse(env),
            EnvFunction::MakeOutcome => compile(env, MAKE_OUTCOME),
        };
        let Some(value) = value else {
            let mut thrown = ptr::null_mut();
            sys::napi_get_and_clear_last_exception(env, &mut thrown);
            return None;
        };
        let mut reference = ptr::null_mut();
        if sys::napi_create_reference(env, value, 1, &mut reference) == ok {
            let hooked = env_known || sys::napi_add_env_cleanup_hook(env, Some(forget), env.cast::<c_void>()) == ok;
            if hooked {
                KEPT.with_borrow_mut(|kept| {
                    kept.push(Kept {
                        env: env as usize,
                        function,
                        reference,
                    })
                });
            } else {
                // Not kept without a hook to forget it: made again next time.
                sys::napi_delete_reference(env, reference);
            }
        }
        Some(value)
    }
}

/// `JSON.parse` of the environment's global object.
unsafe fn find_json_parse(env: sys::napi_env) -> Option<sys::napi_value> {
    let ok = sys::Status::napi_ok;
    let mut global = ptr::null_mut();
    let mut json = ptr::null_mut();
    let mut function = ptr::null_mut();
    // SAFETY: on the JS thread with a handle scope open (the caller's contract).
    unsafe {
        let found = sys::napi_get_global(env, &mut global) == ok
            && sys::napi_get_named_property(env, global, c"JSON".as_ptr(), &mut json) == ok
            && sys::napi_get_named_property(env, json, c"parse".as_ptr(), &mut function) == ok;
        (found && is_function(env, function)).then_some(function)
    }
}

/// The function that `source`, an expression, evaluates to.
unsafe fn compile(env: sys::napi_env, source: &CStr) -> Option<sys::napi_value> {
    let ok = sys::Status::napi_ok;
    let mut script = ptr::null_mut();
    let mut function = ptr::null_mut();
    // SAFETY: on the JS thread with a handle scope open (the caller's contract).
    unsafe {
        let made = sys::napi_create_string_utf8(env, source.as_ptr(), source.count_bytes() as isize, &mut script) == ok
            && sys::napi_run_script(env, script, &mut function) == ok;
        (made && is_function(env, function)).then_some(function)
    }
}

unsafe fn is_function(env: sys::napi_env, value: sys::napi_value) -> bool {
    let mut kind = sys::ValueType::napi_undefined;
    // SAFETY: on the JS thread (the caller's contract).
    unsafe { sys::napi_typeof(env, value, &mut kind) == sys::Status::napi_ok && kind == sys::ValueType::napi_function }
}

/// The environment `env` is going: its references go with it.
unsafe extern "C" fn forget(env: *mut c_void) {
    // `try_with`: a hook that ran as its thread ends must not panic across the FFI boundary.
    let _ = KEPT.try_with(|kept| {
        if let Ok(mut kept) = kept.try_borrow_mut() {
            kept.retain(|k| k.env != env as usize);
        }
    });
}
