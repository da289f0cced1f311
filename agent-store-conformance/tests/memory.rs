#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The conformance suite against agent-core's in-memory stores.

use std::sync::Arc;

use agent_core::MemoryStore;
use agent_core::tabs::MemoryTabStore;
use agent_store_conformance::{Fixture, Handles};

async fn open() -> Fixture {
    let handles = Handles {
        store: Arc::new(MemoryStore::new()),
        tabs: Arc::new(MemoryTabStore::new()),
    };
    // Memory has no second process: "reopening" hands out the same objects.
    let same = handles.clone();
    Fixture::new(
        handles,
        move || {
            let same = same.clone();
            Box::pin(async move { same })
        },
        (),
    )
}

agent_store_conformance::store_conformance_tests!(open);
