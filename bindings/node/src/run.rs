//! Runs (one turn each) and their event streams.

use std::sync::Arc;

use agent_core::{Run, RunEvents};
use futures::{FutureExt, StreamExt};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::convert::Json;

/// Events handed to JS per `next()` call at most, so one call never blocks the JS thread long.
const BATCH: usize = 256;

/// A handle to one turn running in the background.
#[napi]
pub struct NativeRun {
    inner: Arc<Run>,
}

impl NativeRun {
    pub(crate) fn new(run: Run) -> Self {
        NativeRun { inner: Arc::new(run) }
    }

    pub(crate) fn from_arc(run: Arc<Run>) -> Self {
        NativeRun { inner: run }
    }
}

#[napi]
impl NativeRun {
    /// The run's id.
    #[napi(getter)]
    pub fn id(&self) -> String {
        self.inner.id().to_owned()
    }

    /// The session's id.
    #[napi(getter)]
    pub fn session_id(&self) -> String {
        self.inner.session_id().to_string()
    }

    /// A snapshot of the run's progress.
    #[napi(ts_return_type = "any")]
    pub fn status(&self) -> Json {
        crate::convert::status(&self.inner.status())
    }

    /// Asks the run to stop; it ends `cancelled` promptly.
    #[napi]
    pub fn cancel(&self) {
        self.inner.cancel();
    }

    /// Whether the run has finished.
    #[napi(getter)]
    pub fn finished(&self) -> bool {
        self.inner.is_finished()
    }

    /// Waits for the run to end and returns its outcome.
    #[napi(ts_return_type = "Promise<any>")]
    pub async fn outcome(&self) -> Result<crate::convert::JsOutcome> {
        let run = self.inner.clone();
        Ok(crate::convert::JsOutcome(run.outcome().await))
    }

    /// The run's events. The first call sees every event; later calls see events from then on.
    #[napi]
    pub fn events(&self) -> NativeEventStream {
        NativeEventStream {
            inner: Arc::new(tokio::sync::Mutex::new(Some(self.inner.events()))),
        }
    }
}

/// A run's events, pulled in batches.
#[napi]
pub struct NativeEventStream {
    inner: Arc<tokio::sync::Mutex<Option<RunEvents>>>,
}

#[napi]
impl NativeEventStream {
    /// The next events (at least one), or `null` once the stream has ended.
    #[napi(ts_return_type = "Promise<any[] | null>")]
    pub async fn next(&self) -> Result<Option<Vec<Json>>> {
        let inner = self.inner.clone();
        let mut guard = inner.lock().await;
        let Some(stream) = guard.as_mut() else {
            return Ok(None);
        };
        let Some(first) = stream.next().await else {
            *guard = None;
            return Ok(None);
        };
        let mut batch = vec![crate::convert::event(&first)];
        while batch.len() < BATCH {
            match stream.next().now_or_never() {
                Some(Some(ev)) => batch.push(crate::convert::event(&ev)),
                Some(None) => {
                    *guard = None;
                    break;
                }
                None => break,
            }
        }
        Ok(Some(batch))
    }

    /// Stops the stream early (the run goes on).
    #[napi]
    pub fn close(&self) {
        if let Ok(mut guard) = self.inner.try_lock() {
            *guard = None;
        }
    }
}
