//! Calls that are often done at once, answered without a round trip through the runtime.

use std::future::Future;
use std::task::{Context, Poll, Waker};

use napi::bindgen_prelude::*;

/// Polls `fut` once on the calling (JS) thread, inside the runtime's context, and returns its
/// value if that finished it; otherwise spawns it on the runtime and returns a promise of it.
/// JS awaits either. Spawning alone would wake a runtime worker, and the worker then the JS
/// thread: two thread switches for a session created in memory, about a fifth of what a
/// session of ten tool steps costs in switches one at a time.
///
/// Only for futures whose first poll does no blocking work: it runs on the JS thread.
pub fn value_or_promise<'env, T, F>(env: &'env Env, fut: F) -> Result<Either<T, PromiseRaw<'env, T>>>
where
    T: 'static + Send + ToNapiValue,
    F: 'static + Send + Future<Output = Result<T>>,
{
    let mut fut = Box::pin(fut);
    // The waker does nothing: a future that is not ready is polled again by the runtime,
    // which registers its own.
    let first = within_runtime_if_available(|| fut.as_mut().poll(&mut Context::from_waker(Waker::noop())));
    match first {
        Poll::Ready(value) => value.map(Either::A),
        Poll::Pending => env.spawn_future(fut).map(Either::B),
    }
}
