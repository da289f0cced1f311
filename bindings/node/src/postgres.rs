//! The PostgreSQL store.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::agent::NativeStore;
use crate::error::coded;

/// Connects to the PostgreSQL database at `url` and migrates its schema. `options` is a
/// `PostgresOptions` options object (camelCase keys of the options format; absent: the
/// defaults). The pool's connections live on the binding's runtime, where this runs.
#[napi(
    ts_args_type = "url: string, options?: object | undefined | null",
    ts_return_type = "Promise<NativeStore>"
)]
pub fn open_postgres_store<'env>(
    env: &'env Env,
    url: String,
    options: Option<Unknown<'_>>,
) -> Result<PromiseRaw<'env, NativeStore>> {
    let options: agent_store_postgres::PostgresOptions = crate::options::from_js("PostgresStore options", options)?;
    env.spawn_future(async move {
        let store = agent_store_postgres::PostgresStore::connect_with(&url, options)
            .await
            .map_err(|e| coded("store", e))?;
        Ok(NativeStore {
            inner: Arc::new(store),
            sqlite: None,
        })
    })
}
