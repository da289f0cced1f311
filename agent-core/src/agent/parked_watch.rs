//! The watcher every parked turn gets (a clarification question, an approval): it ends what
//! the turn is parked on when its time to live runs out or the parked run is cancelled, unless
//! the person resolves it first.

use std::future::Future;
use std::time::Duration;

use tokio::runtime::Handle;
use tokio_util::sync::CancellationToken;

/// Runs `end(expired)` on `runtime` after `ttl` (`expired: true`) or once `cancel` fires
/// (`false`); nothing once `resolved` fires first.
pub(crate) fn watch<F, Fut>(
    runtime: &Handle,
    ttl: Duration,
    cancel: CancellationToken,
    resolved: CancellationToken,
    end: F,
) where
    F: FnOnce(bool) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    runtime.spawn(async move {
        let expired = tokio::select! {
            _ = resolved.cancelled() => return,
            _ = cancel.cancelled() => false,
            _ = tokio::time::sleep(ttl) => true,
        };
        end(expired).await;
    });
}
