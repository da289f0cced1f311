//! Runnable wiring of agent-core: see the binaries in `src/bin/`.
//!
//! This library exists so that every Rust block of the README, of `docs/` and of each crate's
//! README is compiled and run as a doc test (`cargo test -p agent-examples --doc`), with every
//! crate of the workspace available.

#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

#[cfg(doctest)]
#[doc = include_str!("../../docs/cost.md")]
pub struct DocsCostDoctests;

#[cfg(doctest)]
#[doc = include_str!("../../docs/mcp.md")]
pub struct DocsMcpDoctests;

#[cfg(doctest)]
#[doc = include_str!("../../docs/page-tools.md")]
pub struct DocsPageToolsDoctests;

#[cfg(doctest)]
#[doc = include_str!("../../docs/persistence.md")]
pub struct DocsPersistenceDoctests;

#[cfg(doctest)]
#[doc = include_str!("../../docs/providers.md")]
pub struct DocsProvidersDoctests;

#[cfg(doctest)]
#[doc = include_str!("../../docs/tabs.md")]
pub struct DocsTabsDoctests;

#[cfg(doctest)]
#[doc = include_str!("../../docs/typed-answers.md")]
pub struct DocsTypedAnswersDoctests;

#[cfg(doctest)]
#[doc = include_str!("../../agent-core/README.md")]
pub struct CoreReadmeDoctests;

#[cfg(doctest)]
#[doc = include_str!("../../agent-mcp/README.md")]
pub struct McpReadmeDoctests;

#[cfg(doctest)]
#[doc = include_str!("../../agent-providers/README.md")]
pub struct ProvidersReadmeDoctests;

#[cfg(doctest)]
#[doc = include_str!("../../agent-store/README.md")]
pub struct StoreReadmeDoctests;

#[cfg(doctest)]
#[doc = include_str!("../../agent-tools/README.md")]
pub struct ToolsReadmeDoctests;
