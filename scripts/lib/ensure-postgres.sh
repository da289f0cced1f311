#!/usr/bin/env bash
# PostgreSQL for the tests (sourced, or run to install only).
#   ensure_postgres        installs Debian's postgresql with apt when its binaries are missing.
#   start_test_postgres    starts a throwaway server for this script's lifetime: a new data
#                          directory in a temp dir, listening on a free port of 127.0.0.1 only
#                          (and a Unix socket in the temp dir), one database, trust auth (nothing
#                          but loopback can reach it). Exports AGENT_CORE_TEST_POSTGRES_URL and
#                          stops the server and removes the directory when the script exits.
#                          A URL already in AGENT_CORE_TEST_POSTGRES_URL is used as it is.
# PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user the Debian
# package creates (through runuser); as anyone else, as that user.

AGENT_PG_VERSION="${AGENT_PG_VERSION:-15}"
AGENT_PG_BIN="${AGENT_PG_BIN:-/usr/lib/postgresql/$AGENT_PG_VERSION/bin}"

ensure_postgres() {
    if [ -x "$AGENT_PG_BIN/initdb" ] && [ -x "$AGENT_PG_BIN/pg_ctl" ]; then
        return 0
    fi
    echo "PostgreSQL not found in $AGENT_PG_BIN: installing Debian's postgresql with apt" >&2
    local sudo=""
    if [ "$(id -u)" != "0" ]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo="sudo"
        else
            echo "error: PostgreSQL is missing and this user cannot run apt-get (not root, no sudo)." >&2
            echo "Install it with: apt-get install postgresql" >&2
            return 1
        fi
    fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq >/dev/null
    # The package's own cluster is not needed (each test run makes its own), but it is harmless.
    $sudo apt-get install -y -qq --no-install-recommends postgresql >/dev/null
    if [ ! -x "$AGENT_PG_BIN/initdb" ]; then
        echo "error: apt installed postgresql but $AGENT_PG_BIN/initdb is missing (set AGENT_PG_VERSION?)" >&2
        return 1
    fi
    echo "PostgreSQL installed: $("$AGENT_PG_BIN/postgres" --version)" >&2
}

# Runs a PostgreSQL binary as the server's user.
_pg_as_owner() {
    if [ "$(id -u)" = "0" ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

_stop_test_postgres() {
    if [ -n "${AGENT_PG_DIR:-}" ] && [ -d "$AGENT_PG_DIR" ]; then
        _pg_as_owner "$AGENT_PG_BIN/pg_ctl" -D "$AGENT_PG_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
        rm -rf "$AGENT_PG_DIR"
    fi
    AGENT_PG_DIR=""
}

start_test_postgres() {
    if [ -n "${AGENT_CORE_TEST_POSTGRES_URL:-}" ]; then
        echo "PostgreSQL for tests: using AGENT_CORE_TEST_POSTGRES_URL as set" >&2
        return 0
    fi
    ensure_postgres || return 1
    local port
    # A free port: bind to 0 and let the kernel choose (the tiny window before the server binds
    # it is fine on a test machine).
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    AGENT_PG_DIR="$(mktemp -d "${TMPDIR:-/tmp}/agent-core-pg.XXXXXX")"
    chmod 755 "$AGENT_PG_DIR"
    if [ "$(id -u)" = "0" ]; then
        chown postgres: "$AGENT_PG_DIR"
    fi
    # Stop on any exit of the calling script, keeping a trap it set before.
    local previous
    previous="$(trap -p EXIT | sed -E "s/^trap -- '(.*)' EXIT$/\1/")"
    # shellcheck disable=SC2064
    trap "_stop_test_postgres; ${previous:-:}" EXIT

    # --no-sync and fsync=off: a throwaway cluster need not survive a power loss, and syncing
    # would cost most of its start-up time.
    _pg_as_owner "$AGENT_PG_BIN/initdb" -D "$AGENT_PG_DIR/data" -U postgres -A trust -E UTF8 \
        --no-sync --no-instructions >"$AGENT_PG_DIR/initdb.log" 2>&1 || {
        cat "$AGENT_PG_DIR/initdb.log" >&2
        echo "error: initdb failed (log above)" >&2
        return 1
    }
    _pg_as_owner "$AGENT_PG_BIN/pg_ctl" -D "$AGENT_PG_DIR/data" -l "$AGENT_PG_DIR/server.log" -w -t 60 \
        -o "-p $port -k $AGENT_PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
        start >/dev/null || {
        cat "$AGENT_PG_DIR/server.log" >&2
        echo "error: PostgreSQL did not start (server log above)" >&2
        return 1
    }
    _pg_as_owner "$AGENT_PG_BIN/createdb" -h "$AGENT_PG_DIR" -p "$port" -U postgres agent_core_test || {
        echo "error: createdb failed" >&2
        return 1
    }
    export AGENT_CORE_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/agent_core_test"
    echo "PostgreSQL for tests: $AGENT_CORE_TEST_POSTGRES_URL (data in $AGENT_PG_DIR, stopped on exit)" >&2
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    ensure_postgres
fi
