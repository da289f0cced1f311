//! The extension's allocator: mimalloc for every Rust allocation (requests, messages, events,
//! rows) instead of glibc's malloc, about a tenth fewer instructions per model call
//! (docs/benchmarks.md, "The bindings' allocator"). Python's objects and SQLite keep their own
//! allocators, and no memory crosses between them.

// `mi_option_set` is a C function.
#![allow(unsafe_code)]

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_arena_eager_commit` in the bundled mimalloc 2's `mi_option_e` (the Rust crate
/// does not name it; Cargo.toml pins the crate that bundles the C source, and picks its
/// mimalloc 2 for the reason given there).
const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

/// Commits the allocator's arenas page by page as they are used. Its default on Linux commits
/// a whole arena at once, which added about 9 MiB to the resident size of a Python process
/// running one session. Called first thing when the module loads.
pub(crate) fn configure() {
    // SAFETY: sets one integer option; mimalloc reads options with atomic loads.
    unsafe { libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0) };
}
