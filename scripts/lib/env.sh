# Shared settings for the project's scripts (sourced, not run).
# A target directory outside the clone lets repeated runs (and CI on the same machine) reuse
# builds; it still works from cold.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/agent-core/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

step() { printf '\n==> %s\n' "$*"; }
