//! Runnable wiring of agent-core: see the binaries in `src/bin/`.
//!
//! This library exists so that every Rust block of the README is compiled and run as a doc
//! test (`cargo test -p agent-examples --doc`), with every crate of the workspace available.

#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
