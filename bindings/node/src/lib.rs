//! # agent-core for Node.js
//!
//! The native half of the `agent-core` npm package: a napi-rs v3 addon that exposes agents,
//! sessions, runs, event streams, JS tools, the JS gate, stores and providers. The package's
//! hand-written JavaScript layer (`lib/`) wraps these `Native*` classes into the public API
//! (camelCase names, an async iterator of typed events, AbortSignal support, error classes).
//!
//! JS tools are called through one libuv async handle per agent (`dispatch`), other JS
//! callbacks are weak threadsafe functions called with `call_async_catch`: neither keeps the
//! process alive on its own, and a JS throw never crashes the process.

// napi-rs's macros generate the FFI glue, which is unsafe code by nature.
#![allow(unsafe_code)]

pub mod agent;
pub mod allocator;
pub mod approvals;
pub mod callbacks;
pub mod convert;
pub mod dispatch;
pub mod eager;
pub mod env_functions;
pub mod error;
pub mod hooks;
pub mod host;
pub mod hub_wiring;
pub mod json_parse;
pub mod keys;
pub mod mcp;
pub mod options;
pub mod otel;
pub mod postgres;
pub mod prompt;
pub mod provider;
pub mod run;
pub mod tab_wiring;
pub mod tabs;
pub mod toolsets;
