# Installs cargo-fuzz (pinned) when missing and picks the toolchain its libFuzzer flags need
# (sourced, not run). Sets FUZZ_CARGO: "cargo +nightly" when a nightly toolchain is installed,
# otherwise plain cargo with RUSTC_BOOTSTRAP=1 (the stable compiler then accepts the -Z flags
# cargo-fuzz passes). Builds go to a target directory outside the clone, so CI's fresh clone
# reuses them.

CARGO_FUZZ_VERSION="0.13.2"
export FUZZ_TARGET_DIR="${FUZZ_TARGET_DIR:-$HOME/.cache/agent-core/fuzz-target}"

ensure_fuzz() {
    if ! cargo fuzz --version 2>/dev/null | grep -q "$CARGO_FUZZ_VERSION"; then
        cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked --quiet || return 1
    fi
    if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
        FUZZ_CARGO=(cargo +nightly)
    else
        export RUSTC_BOOTSTRAP=1
        FUZZ_CARGO=(cargo)
    fi
}
