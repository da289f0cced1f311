//! [`Fixture`]: the store a conformance test runs against.

use std::any::Any;
use std::sync::Arc;

use agent_core::Store;
use agent_core::tabs::TabStore;
use futures::future::BoxFuture;

/// A store's two faces: sessions and the tab registry (often one object).
#[derive(Clone)]
pub struct Handles {
    /// Sessions, messages, tool calls, compactions, parked runs, key-value pairs.
    pub store: Arc<dyn Store>,
    /// The tab registry.
    pub tabs: Arc<dyn TabStore>,
}

type Reopen = Arc<dyn Fn() -> BoxFuture<'static, Handles> + Send + Sync>;

/// A fresh, empty store, and how to open the same data again.
pub struct Fixture {
    handles: Handles,
    reopen: Reopen,
    // Whatever must outlive the test (a temporary directory, say).
    _keep: Box<dyn Any + Send + Sync>,
}

impl Fixture {
    /// A fixture over `handles`. `reopen` opens a second handle on the same data, as another
    /// process or replica would (a store kept in memory returns the same objects); `keep` is
    /// dropped with the fixture.
    pub fn new<F>(handles: Handles, reopen: F, keep: impl Any + Send + Sync) -> Self
    where
        F: Fn() -> BoxFuture<'static, Handles> + Send + Sync + 'static,
    {
        Fixture {
            handles,
            reopen: Arc::new(reopen),
            _keep: Box::new(keep),
        }
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.handles.store
    }

    /// The tab registry.
    pub fn tabs(&self) -> &Arc<dyn TabStore> {
        &self.handles.tabs
    }

    /// Another handle on the same data.
    pub async fn reopen(&self) -> Handles {
        (self.reopen)().await
    }
}
