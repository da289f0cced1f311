//! The addon's allocator: mimalloc for every Rust allocation (requests, messages, events,
//! rows) instead of glibc's malloc, 7-8% fewer instructions per model call
//! (docs/benchmarks.md, "The bindings' allocator"). Node, V8 and SQLite keep their own
//! allocators, and no memory crosses between them.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_arena_eager_commit` in the bundled mimalloc 2's `mi_option_e` (the Rust crate
/// does not name it; Cargo.toml pins the crate that bundles the C source, and picks its
/// mimalloc 2 for the reason given there).
const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

/// Commits the allocator's arenas page by page as they are used. Its default on Linux commits
/// a whole arena at once, which added several MiB to the resident size of a process running
/// one session. Runs when the addon is loaded.
#[napi_derive::module_init]
fn configure() {
    // SAFETY: sets one integer option; mimalloc reads options with atomic loads.
    unsafe { libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0) };
}
