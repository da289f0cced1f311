//! Each Rust client of the side-by-side comparison runs its sessions to the end against a real
//! `mock-llm` process and reports every model call, so that `compare` measures working clients.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::process::Command;

use agent_bench::{ClientFigures, MockProcess};

const SESSIONS: usize = 5;
const STEPS: usize = 3;

fn mock() -> MockProcess {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mock-llm"));
    command.args(["--port", "0", "--max-seconds", "120", "--tool", "step"]);
    command.args(["--tool-steps", &STEPS.to_string()]);
    MockProcess::start(command).unwrap()
}

fn client(url: &str, variant: &str, concurrency: usize) -> ClientFigures {
    client_with(url, variant, concurrency, &[])
}

fn client_with(url: &str, variant: &str, concurrency: usize, extra: &[&str]) -> ClientFigures {
    let output = Command::new(env!("CARGO_BIN_EXE_compare-client"))
        .args(["--variant", variant, "--url", url, "--steps", &STEPS.to_string()])
        .args(["--sessions", &SESSIONS.to_string()])
        .args(["--concurrency", &concurrency.to_string()])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{variant}: {stderr}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap()
}

#[test]
fn every_rust_variant_runs_its_sessions_to_the_end() {
    let server = mock();
    for variant in ["reference", "rust", "rust-memory", "rust-sqlite", "rust-handoff"] {
        for concurrency in [1, 3] {
            let figures = client(&server.url, variant, concurrency);
            // Each session: the tool steps and the final answer.
            assert_eq!(figures.calls, SESSIONS * (STEPS + 1), "{variant} at {concurrency}");
            assert!(
                figures.wall_s > 0.0 && figures.peak_rss_kib > 0,
                "{variant}: {figures:?}"
            );
        }
    }
}

#[test]
fn each_session_runs_every_turn_it_is_given_and_the_reference_refuses_more_than_one() {
    let server = mock();
    for variant in ["rust", "rust-sqlite"] {
        let figures = client_with(&server.url, variant, 3, &["--turns", "4"]);
        assert_eq!(figures.calls, SESSIONS * 4 * (STEPS + 1), "{variant}");
    }
    let output = Command::new(env!("CARGO_BIN_EXE_compare-client"))
        .args(["--variant", "reference", "--url", &server.url, "--turns", "2"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--turns"));
}

#[test]
fn an_unknown_variant_is_refused_with_its_name() {
    let server = mock();
    let output = Command::new(env!("CARGO_BIN_EXE_compare-client"))
        .args(["--variant", "rust-nonsense", "--url", &server.url])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown variant rust-nonsense"));
}
