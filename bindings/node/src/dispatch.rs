//! Calling JS tools from the runtime's workers through one libuv async handle.
//!
//! A threadsafe function wakes the JS thread while holding its queue's lock; on one CPU the
//! woken thread runs at once, finds the lock held and sleeps again, so each call cost four
//! thread switches instead of two. A dispatcher queues calls under its own lock, releases it,
//! then wakes the JS thread with `uv_async_send`, which coalesces: the JS thread takes every
//! queued call at once and hands them to one JS function (`dispatch`) that runs them, answering
//! plain results at once and promises later through [`NativeToolDispatcher::reply`].
//!
//! The handle lives until the last tool using it is dropped (then the JS thread closes it) or
//! the environment is torn down, and it never keeps the process alive (`uv_unref`).

use std::collections::HashMap;
use std::ffi::{CStr, c_int, c_void};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use tokio::sync::oneshot;

use crate::convert::Json;

/// One call for the JS `dispatch` function, which receives it as `CALL_FIELDS` values in a
/// row of its arguments, in this order.
pub struct DispatchedCall {
    /// The index the tool was registered under.
    pub tool: u32,
    /// The validated arguments.
    pub args: Json,
    /// The session.
    pub session_id: String,
    /// The call's id, as the model gave it.
    pub call_id: String,
    /// A number naming this invocation, for the abort hook and for `reply`.
    pub invocation: u32,
}

/// Values per call among the arguments `dispatch` receives: the tool's index, the arguments,
/// the session id, the call id and the invocation number.
///
/// Plain arguments, not an object per call: napi sets an object's properties one by one by
/// name (about 9 000 instructions for a call's five), and even an array's elements one call
/// each (about 1 000 per element); arguments cost nothing beyond their values, and the JS
/// side makes its objects itself, which V8 does in a few instructions.
const CALL_FIELDS: usize = 5;

/// The most calls handed to `dispatch` at once: every argument takes a slot on the JS
/// thread's stack, so a larger batch goes in several calls.
const MAX_BATCH: usize = 1024;

/// What the JS tool wrapper answers: an object, or for kind `text` just its text (a string
/// is read in one conversion, an object property by property).
#[napi(object)]
pub struct ToolReply {
    /// `text`, `json`, `error` (for the model) or `fatal` (ends the turn).
    pub kind: String,
    /// The text result, or the error message (kind `image`: the media type).
    pub text: Option<String>,
    /// The JSON result as JSON text (kind `json`), or the base64 data (kind `image`).
    ///
    /// Text on purpose, unlike the other values crossing the binding: from JS to Rust,
    /// `JSON.stringify` plus serde_json reads a value 1.7 to 2.6 times faster than napi's
    /// property-by-property object conversion (measured: 0.4 vs 0.7 µs for `{n: 1}`, 10 vs
    /// 26 µs for 800 bytes), and a tool's result is on the per-step hot path.
    pub json: Option<String>,
    /// Whether an `error` may succeed when retried.
    pub retryable: Option<bool>,
    /// The JS layer's id of the original error object (kind `fatal`).
    pub error_id: Option<u32>,
}

impl ToolReply {
    /// A text result.
    fn text(text: String) -> Self {
        ToolReply {
            kind: "text".to_owned(),
            text: Some(text),
            json: None,
            retryable: None,
            error_id: None,
        }
    }
}

/// What a call's waiter receives: the reply, or why there is none.
pub type Answer = std::result::Result<ToolReply, String>;

/// A call queued for the JS thread.
struct Queued {
    call: DispatchedCall,
    answer: oneshot::Sender<Answer>,
}

type HandleCallback = Option<unsafe extern "C" fn(*mut c_void)>;
type AsyncInit = unsafe extern "C" fn(*mut sys::uv_loop_s, *mut c_void, HandleCallback) -> c_int;
type AsyncSend = unsafe extern "C" fn(*mut c_void) -> c_int;
type Close = unsafe extern "C" fn(*mut c_void, HandleCallback);
type Unref = unsafe extern "C" fn(*mut c_void);

/// libuv's functions, looked up in the host process (Node exports them for addons).
struct Uv {
    async_init: AsyncInit,
    async_send: AsyncSend,
    close: Close,
    unref: Unref,
}

fn uv() -> Option<&'static Uv> {
    static UV: OnceLock<Option<Uv>> = OnceLock::new();
    UV.get_or_init(|| {
        fn find(name: &CStr) -> Option<*mut c_void> {
            // SAFETY: dlsym with a NUL-terminated name only reads the process's symbol tables.
            let found = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
            (!found.is_null()).then_some(found)
        }
        // SAFETY: the symbols are libuv's, whose signatures these types restate.
        unsafe {
            Some(Uv {
                async_init: std::mem::transmute::<*mut c_void, AsyncInit>(find(c"uv_async_init")?),
                async_send: std::mem::transmute::<*mut c_void, AsyncSend>(find(c"uv_async_send")?),
                close: std::mem::transmute::<*mut c_void, Close>(find(c"uv_close")?),
                unref: std::mem::transmute::<*mut c_void, Unref>(find(c"uv_unref")?),
            })
        }
    })
    .as_ref()
}

/// Room for a `uv_async_t` (128 bytes on 64-bit Linux), whose first field is the `data`
/// pointer libuv leaves to its users.
#[repr(C, align(16))]
struct AsyncHandle([u8; 512]);

/// The raw handle, shared with the workers that wake it.
#[derive(Clone, Copy)]
struct HandlePtr(*mut AsyncHandle);
// SAFETY: `uv_async_send` is the one libuv call that is safe from any thread; every other use
// happens on the JS thread.
unsafe impl Send for HandlePtr {}
unsafe impl Sync for HandlePtr {}

/// The JS side: the environment, the `dispatch` function and the async context to call it in.
/// Used only on the JS thread.
struct JsSide {
    env: sys::napi_env,
    dispatch: sys::napi_ref,
    context: sys::napi_async_context,
}
// SAFETY: only read on the JS thread (the async callback, reply, close), never from workers.
unsafe impl Send for JsSide {}
unsafe impl Sync for JsSide {}

/// Calls by invocation number. Every call goes in and out once, on the JS thread: foldhash
/// hashes a number in a few instructions, the standard SipHash in about a hundred.
type Waiting = HashMap<u32, oneshot::Sender<Answer>, foldhash::fast::RandomState>;

struct Shared {
    queue: Mutex<Vec<Queued>>,
    /// Calls handed to JS whose promise has not settled yet.
    waiting: Mutex<Waiting>,
    /// `None` once closed: calls are refused.
    handle: RwLock<Option<HandlePtr>>,
    js: JsSide,
    /// Tools using this dispatcher; the last one to go asks the JS thread to close it.
    users: AtomicUsize,
}

/// Queues JS tool calls for the JS thread (see the module docs). Made by the JS layer with its
/// `dispatch` function; tools are registered with `NativeAgentBuilder.tool`.
#[napi]
pub struct NativeToolDispatcher {
    shared: Arc<Shared>,
}

#[napi]
impl NativeToolDispatcher {
    /// A dispatcher calling `dispatch` with batches of calls; it answers each call with a
    /// reply, or `undefined` when the reply comes later through `reply`.
    #[napi(
        constructor,
        ts_args_type = "dispatch: (...calls: unknown[]) => Array<string | ToolReply | undefined>"
    )]
    pub fn new(env: Env, dispatch: Function<'_, Unknown<'_>, Unknown<'_>>) -> Result<Self> {
        let uv = uv().ok_or_else(|| {
            Error::from_reason("this JavaScript runtime does not export libuv (uv_async_send): JS tools need Node.js")
        })?;
        let raw = env.raw();
        // SAFETY: napi calls on the JS thread with its live environment; the handle memory
        // is owned by the dispatcher until libuv's close callback frees it.
        unsafe {
            let mut event_loop = ptr::null_mut();
            check(
                sys::napi_get_uv_event_loop(raw, &mut event_loop),
                "napi_get_uv_event_loop",
            )?;
            let mut dispatch_ref = ptr::null_mut();
            check(
                sys::napi_create_reference(raw, dispatch.value().value, 1, &mut dispatch_ref),
                "napi_create_reference",
            )?;
            let mut resource = ptr::null_mut();
            check(sys::napi_create_object(raw, &mut resource), "napi_create_object")?;
            let mut name = ptr::null_mut();
            let label = c"agent-core tool call";
            check(
                sys::napi_create_string_utf8(raw, label.as_ptr(), label.count_bytes() as isize, &mut name),
                "napi_create_string_utf8",
            )?;
            let mut context = ptr::null_mut();
            check(
                sys::napi_async_init(raw, resource, name, &mut context),
                "napi_async_init",
            )?;
            let handle = Box::into_raw(Box::new(AsyncHandle([0; 512])));
            if (uv.async_init)(event_loop, handle.cast(), Some(on_wake)) != 0 {
                drop(Box::from_raw(handle));
                sys::napi_delete_reference(raw, dispatch_ref);
                sys::napi_async_destroy(raw, context);
                return Err(Error::from_reason("uv_async_init failed"));
            }
            (uv.unref)(handle.cast());
            let shared = Arc::new(Shared {
                queue: Mutex::new(Vec::new()),
                waiting: Mutex::new(Waiting::default()),
                handle: RwLock::new(Some(HandlePtr(handle))),
                js: JsSide {
                    env: raw,
                    dispatch: dispatch_ref,
                    context,
                },
                users: AtomicUsize::new(0),
            });
            // The handle's `data`: one reference, given back by the close callback.
            *handle.cast::<*const Shared>() = Arc::into_raw(shared.clone());
            // Teardown of the environment closes the handle if the tools have not.
            let hook = Arc::into_raw(shared.clone()) as *mut c_void;
            check(
                sys::napi_add_env_cleanup_hook(raw, Some(on_env_teardown), hook),
                "napi_add_env_cleanup_hook",
            )?;
            Ok(NativeToolDispatcher { shared })
        }
    }

    /// Answers a call whose tool returned a promise: a reply, or a text result as a string.
    #[napi]
    pub fn reply(&self, invocation: u32, reply: Either<String, ToolReply>) {
        let reply = match reply {
            Either::A(text) => ToolReply::text(text),
            Either::B(reply) => reply,
        };
        let waiter = self.shared.waiting.lock().ok().and_then(|mut w| w.remove(&invocation));
        if let Some(waiter) = waiter {
            let _ = waiter.send(Ok(reply));
        }
    }
}

impl NativeToolDispatcher {
    /// A handle for one tool: keeps the dispatcher open while the tool exists.
    pub fn user(&self) -> Dispatcher {
        self.shared.users.fetch_add(1, Ordering::AcqRel);
        Dispatcher {
            shared: self.shared.clone(),
        }
    }
}

/// A tool's way to its dispatcher.
pub struct Dispatcher {
    shared: Arc<Shared>,
}

impl Dispatcher {
    /// Queues a call for the JS thread and waits for its reply. Dropped before the reply
    /// (cancelled, timed out), it forgets the call, so a promise that never settles leaves
    /// nothing behind.
    pub async fn call(&self, call: DispatchedCall) -> Answer {
        let _forget = ForgetOnDrop {
            shared: &self.shared,
            invocation: call.invocation,
        };
        let (answer, reply) = oneshot::channel();
        let first = match self.shared.queue.lock() {
            Ok(mut queue) => {
                queue.push(Queued { call, answer });
                queue.len() == 1
            }
            Err(_) => return Err("the JS tool queue is poisoned".to_owned()),
        };
        // The first call of a batch wakes the JS thread; after the queue's lock is released
        // (see the module docs), and after the worker has run its other ready tasks, whose
        // calls join the batch (a yielded task resumes when the worker runs out of work or
        // polls for I/O, every few dozen tasks at the latest).
        if first {
            let mut wake = WakeOnDrop(Some(&self.shared));
            tokio::task::yield_now().await;
            wake.0 = None;
            if !self.shared.wake() {
                self.shared.forget_queued();
                return Err(GONE.to_owned());
            }
        }
        reply.await.unwrap_or_else(|_| Err(GONE.to_owned()))
    }
}

/// Removes a call's waiter when its caller stops waiting (whoever answers removes it too).
struct ForgetOnDrop<'a> {
    shared: &'a Shared,
    invocation: u32,
}

impl Drop for ForgetOnDrop<'_> {
    fn drop(&mut self) {
        if let Ok(mut waiting) = self.shared.waiting.lock() {
            waiting.remove(&self.invocation);
        }
    }
}

/// Wakes the JS thread for a batch whose first call was dropped before waking it.
struct WakeOnDrop<'a>(Option<&'a Shared>);

impl Drop for WakeOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(shared) = self.0 {
            shared.wake();
        }
    }
}

impl Drop for Dispatcher {
    fn drop(&mut self) {
        if self.shared.users.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.shared.wake();
        }
    }
}

const GONE: &str = "the JavaScript environment of this tool is gone (the Node.js thread exited)";

impl Shared {
    /// Wakes the JS thread; false when the handle is closed.
    fn wake(&self) -> bool {
        let Ok(handle) = self.handle.read() else {
            return false;
        };
        match (*handle, uv()) {
            // SAFETY: the handle is open while it is in the lock, and uv_async_send is
            // thread-safe.
            (Some(h), Some(uv)) => unsafe { (uv.async_send)(h.0.cast()) == 0 },
            _ => false,
        }
    }

    /// Drops the queued calls: their waiters see the environment is gone.
    fn forget_queued(&self) {
        if let Ok(mut queue) = self.queue.lock() {
            queue.clear();
        }
    }

    /// On the JS thread: closes the handle and releases the JS function. Idempotent.
    ///
    /// # Safety
    /// Call only on the JS thread, with the environment alive.
    unsafe fn close(&self) {
        let Some(handle) = self.handle.write().ok().and_then(|mut h| h.take()) else {
            return;
        };
        self.forget_queued();
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.clear();
        }
        // SAFETY: on the JS thread (caller's contract); the handle is open (it was in the
        // lock), and its memory is freed by `on_closed` after libuv is done with it.
        unsafe {
            sys::napi_delete_reference(self.js.env, self.js.dispatch);
            sys::napi_async_destroy(self.js.env, self.js.context);
            if let Some(uv) = uv() {
                (uv.close)(handle.0.cast(), Some(on_closed));
            }
        }
    }

    /// On the JS thread: hands every queued call to `dispatch` and answers the plain replies.
    ///
    /// # Safety
    /// Call only on the JS thread, from the libuv callback.
    unsafe fn run_queued(&self) {
        let queued = match self.queue.lock() {
            Ok(mut queue) => std::mem::take(&mut *queue),
            Err(_) => return,
        };
        let env = self.js.env;
        let mut queued = queued.into_iter().peekable();
        while queued.peek().is_some() {
            let batch: Vec<Queued> = queued.by_ref().take(MAX_BATCH).collect();
            // SAFETY: on the JS thread, inside a handle scope opened here.
            unsafe {
                let mut scope = ptr::null_mut();
                if sys::napi_open_handle_scope(env, &mut scope) != sys::Status::napi_ok {
                    return;
                }
                self.dispatch_batch(env, batch);
                sys::napi_close_handle_scope(env, scope);
            }
        }
    }

    /// Calls `dispatch` with the batch and answers the plain replies; on failure, answers the
    /// batch's calls with why.
    unsafe fn dispatch_batch(&self, env: sys::napi_env, queued: Vec<Queued>) {
        let mut calls = Vec::with_capacity(queued.len());
        let mut invocations = Vec::with_capacity(queued.len());
        // Every waiter is registered before JS runs: a promise that settles at once is
        // answered (through `reply`) while `dispatch` is still being called.
        if let Ok(mut waiting) = self.waiting.lock() {
            for q in queued {
                invocations.push(q.call.invocation);
                waiting.insert(q.call.invocation, q.answer);
                calls.push(q.call);
            }
        }
        // SAFETY: on the JS thread with a handle scope open (caller's contract).
        let result = unsafe { self.call_dispatch(env, calls) };
        let answer = |invocation: u32, reply: Answer| {
            let waiter = self.waiting.lock().ok().and_then(|mut w| w.remove(&invocation));
            if let Some(waiter) = waiter {
                let _ = waiter.send(reply);
            }
        };
        let result = match result {
            Ok(result) => result,
            Err(why) => {
                for invocation in invocations {
                    answer(invocation, Err(why.clone()));
                }
                return;
            }
        };
        for (index, invocation) in invocations.into_iter().enumerate() {
            let mut element = ptr::null_mut();
            // SAFETY: as above; `result` is the value `dispatch` returned.
            let reply = unsafe {
                if sys::napi_get_element(env, result, index as u32, &mut element) == sys::Status::napi_ok {
                    reply_of(env, element)
                } else {
                    Some(Err("the JS tool dispatcher answered no list".to_owned()))
                }
            };
            // `None`: a promise, answered later through `reply`.
            if let Some(reply) = reply {
                answer(invocation, reply);
            }
        }
    }

    /// Calls `dispatch` with the calls; its answer, or why it failed.
    unsafe fn call_dispatch(
        &self,
        env: sys::napi_env,
        calls: Vec<DispatchedCall>,
    ) -> std::result::Result<sys::napi_value, String> {
        // SAFETY: on the JS thread with a handle scope open (caller's contract).
        unsafe {
            let args = calls_to_js(env, calls).map_err(|e| format!("cannot pass the tool calls to JS: {e}"))?;
            let mut dispatch = ptr::null_mut();
            let mut recv = ptr::null_mut();
            let mut result = ptr::null_mut();
            let ready = sys::napi_get_reference_value(env, self.js.dispatch, &mut dispatch) == sys::Status::napi_ok
                && !dispatch.is_null()
                // make_callback wants an object as `this`.
                && sys::napi_get_global(env, &mut recv) == sys::Status::napi_ok;
            let status = if ready {
                // make_callback, not call_function: it runs the microtasks the tools queued.
                sys::napi_make_callback(
                    env,
                    self.js.context,
                    recv,
                    dispatch,
                    args.len(),
                    args.as_ptr(),
                    &mut result,
                )
            } else {
                sys::Status::napi_generic_failure
            };
            if status == sys::Status::napi_ok {
                return Ok(result);
            }
            let mut pending = false;
            sys::napi_is_exception_pending(env, &mut pending);
            let mut why = "the JS tool dispatcher failed".to_owned();
            if pending {
                let mut exception = ptr::null_mut();
                sys::napi_get_and_clear_last_exception(env, &mut exception);
                if let Ok(text) = String::from_napi_value(env, coerce_to_string(env, exception)) {
                    why = format!("the JS tool dispatcher threw: {text}");
                }
            }
            Err(why)
        }
    }
}

/// The calls as `dispatch`'s arguments, [`CALL_FIELDS`] values per call.
///
/// # Safety
/// Call only on the JS thread, with a handle scope open.
unsafe fn calls_to_js(env: sys::napi_env, calls: Vec<DispatchedCall>) -> Result<Vec<sys::napi_value>> {
    let mut args = Vec::with_capacity(calls.len() * CALL_FIELDS);
    // SAFETY: on the JS thread with a handle scope open (caller's contract).
    unsafe {
        for call in calls {
            args.extend([
                u32::to_napi_value(env, call.tool)?,
                Json::to_napi_value(env, call.args)?,
                String::to_napi_value(env, call.session_id)?,
                String::to_napi_value(env, call.call_id)?,
                u32::to_napi_value(env, call.invocation)?,
            ]);
        }
    }
    Ok(args)
}

/// A plain reply (a string is a text result), or `None` for `undefined` (answered later).
unsafe fn reply_of(env: sys::napi_env, value: sys::napi_value) -> Option<Answer> {
    let mut kind = sys::ValueType::napi_undefined;
    let invalid = |e: Error| format!("the JS tool answered an invalid reply: {e}");
    // SAFETY: on the JS thread with a live value (caller's contract).
    unsafe {
        sys::napi_typeof(env, value, &mut kind);
        match kind {
            sys::ValueType::napi_undefined => None,
            sys::ValueType::napi_string => Some(
                String::from_napi_value(env, value)
                    .map(ToolReply::text)
                    .map_err(invalid),
            ),
            _ => Some(ToolReply::from_napi_value(env, value).map_err(invalid)),
        }
    }
}

unsafe fn coerce_to_string(env: sys::napi_env, value: sys::napi_value) -> sys::napi_value {
    let mut text = ptr::null_mut();
    // SAFETY: on the JS thread (caller's contract).
    unsafe { sys::napi_coerce_to_string(env, value, &mut text) };
    text
}

fn check(status: sys::napi_status, what: &str) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Error::from_reason(format!("{what} failed (napi status {status})")))
    }
}

/// libuv's callback on the JS thread: runs the queued calls, or closes the handle once its
/// last tool is gone.
unsafe extern "C" fn on_wake(handle: *mut c_void) {
    // SAFETY: `data` holds a reference to the Shared until `on_closed` takes it back.
    let shared = unsafe { &**handle.cast::<*const Shared>() };
    // SAFETY: libuv calls this on the JS thread.
    unsafe {
        shared.run_queued();
        // No tool left: nothing can queue a call any more (tools are registered before the
        // first call, and a wake comes from a call or from the last tool going).
        if shared.users.load(Ordering::Acquire) == 0 {
            sys::napi_remove_env_cleanup_hook(
                shared.js.env,
                Some(on_env_teardown),
                ptr::from_ref(shared) as *mut c_void,
            );
            shared.close();
            // The reference the cleanup hook held.
            drop(Arc::from_raw(ptr::from_ref(shared)));
        }
    }
}

/// The environment is being torn down: close the handle now.
unsafe extern "C" fn on_env_teardown(data: *mut c_void) {
    // SAFETY: `data` is the reference given to the hook; taken back here.
    unsafe {
        let shared = Arc::from_raw(data as *const Shared);
        shared.close();
    }
}

/// libuv is done with the handle: free it and drop the reference its `data` held.
unsafe extern "C" fn on_closed(handle: *mut c_void) {
    // SAFETY: the handle was made by `Box::into_raw` and `data` by `Arc::into_raw`; libuv
    // never touches either again.
    unsafe {
        drop(Arc::from_raw(*handle.cast::<*const Shared>()));
        drop(Box::from_raw(handle.cast::<AsyncHandle>()));
    }
}
