//! Finding the `crash_child` example that `cargo test` builds.

use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The newest real build of `examples/crash_child` (cargo builds examples into
/// target/<profile>/examples as `crash_child` or `crash_child-<hash>`; a build made as a test
/// harness by `cargo test --examples` is skipped: run without arguments it exits 0).
pub fn child_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let examples = exe.parent().unwrap().parent().unwrap().join("examples");
    let mut candidates: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&examples)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|p| {
            let file = p.file_name().and_then(|f| f.to_str()).unwrap_or("");
            let stem = file.strip_suffix(std::env::consts::EXE_SUFFIX).unwrap_or(file);
            stem == "crash_child" || (stem.starts_with("crash_child-") && !stem.contains('.'))
        })
        .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
        .collect();
    candidates.sort();
    while let Some((_, path)) = candidates.pop() {
        let usage = Command::new(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| !s.success())
            .unwrap_or(false);
        if usage {
            return path;
        }
    }
    panic!(
        "the crash_child example is not built in {}; run `cargo test -p agent-store` (which builds examples)",
        examples.display()
    )
}
