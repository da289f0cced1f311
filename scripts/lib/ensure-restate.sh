# Restate and haproxy for the durable-turn tests and scripts/cluster (sourced, or run to install only).
#   ensure_restate         installs the Restate server pinned in scripts/restate/package-lock.json
#                          (npm ci, no install scripts, no analytics) into ~/.cache/agent-core and
#                          exports AGENT_RESTATE_SERVER (the binary).
#   ensure_haproxy         installs Debian's haproxy with apt when it is missing.
#   in_loopback_netns CMD  runs CMD in a new network namespace with only loopback up (as root,
#                          `unshare -n`): nothing it starts can reach another machine.
#   start_restate DIR      starts restate-server on 127.0.0.1 with telemetry off, its state and log
#                          in DIR, on free ports; exports RESTATE_INGRESS_URL, RESTATE_ADMIN_URL,
#                          RESTATE_PID. Refuses to run outside a loopback-only network namespace.
#   stop_restate           stops the server start_restate started (by its pid).
#   check_restate_log DIR  fails if the server's log shows telemetry sent or a connection to any
#                          address but loopback.
#   with_durable_servers CMD...  runs CMD in a loopback-only network namespace with a throwaway
#                          PostgreSQL and Restate server, exporting AGENT_CORE_TEST_POSTGRES_URL,
#                          AGENT_DURABLE_TEST_RESTATE_ADMIN and AGENT_DURABLE_TEST_RESTATE_INGRESS
#                          (agent-durable's ignored tests read them); stops both afterwards.
#   start_haproxy DIR PORT BACKEND...  haproxy in the foreground of a child process, HTTP/2
#                          (cleartext) on 127.0.0.1:PORT, balancing per request over the
#                          BACKEND host:port list with `proto h2`; exports HAPROXY_PID.
#
# Restate 1.7.x checks for a newer release at every start (a request to a code-hosting site) and
# has no setting to turn that off; telemetry does have one (set below). So the server only ever
# runs inside a network namespace that has nothing but loopback: the check fails at name
# resolution and the server runs on. See docs/durable.md.

RESTATE_SERVER_VERSION="1.7.12"
RESTATE_CACHE_DIR="${AGENT_RESTATE_CACHE_DIR:-$HOME/.cache/agent-core/restate-server}"
_RESTATE_LIB_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
_RESTATE_PINS="$_RESTATE_LIB_DIR/../restate"

ensure_restate() {
    local lock="$_RESTATE_PINS/package-lock.json"
    [ -f "$lock" ] || { echo "ensure-restate: $lock is missing" >&2; return 1; }
    local stamp
    stamp="$(sha256sum "$_RESTATE_PINS/package.json" "$lock" | sha256sum | cut -c1-16)"
    local dir="$RESTATE_CACHE_DIR/$RESTATE_SERVER_VERSION-$stamp"
    if [ ! -f "$dir/.installed" ]; then
        command -v npm >/dev/null || { echo "ensure-restate: npm is required" >&2; return 1; }
        rm -rf "$dir"
        mkdir -p "$dir"
        cp "$_RESTATE_PINS/package.json" "$lock" "$dir/"
        # --ignore-scripts: the package's analytics dependency has an install-time ping; the
        # variables switch it off as well, in case scripts are ever allowed.
        (cd "$dir" && SCARF_ANALYTICS=false SCARF_NO_ANALYTICS=true DO_NOT_TRACK=1 \
            npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) || return 1
        touch "$dir/.installed"
    fi
    local arch
    case "$(uname -m)" in
        x86_64) arch=x64 ;;
        aarch64) arch=arm64 ;;
        *) echo "ensure-restate: no restate-server build for $(uname -m)" >&2; return 1 ;;
    esac
    export AGENT_RESTATE_SERVER="$dir/node_modules/@restatedev/restate-server-linux-$arch/bin/restate-server"
    [ -x "$AGENT_RESTATE_SERVER" ] || { echo "ensure-restate: $AGENT_RESTATE_SERVER is missing" >&2; return 1; }
}

ensure_haproxy() {
    command -v haproxy >/dev/null 2>&1 && return 0
    echo "haproxy not found: installing Debian's haproxy with apt" >&2
    local sudo=""
    if [ "$(id -u)" != "0" ]; then
        command -v sudo >/dev/null 2>&1 || {
            echo "error: haproxy is missing and this user cannot run apt-get; install it with: apt-get install haproxy" >&2
            return 1
        }
        sudo="sudo"
    fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq >/dev/null
    $sudo apt-get install -y -qq --no-install-recommends haproxy >/dev/null
    command -v haproxy >/dev/null 2>&1
}

# True when the current network namespace has no interface but loopback.
_loopback_only() {
    local others
    others="$(ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -v '^lo$' || true)"
    [ -z "$others" ]
}

in_loopback_netns() {
    if [ "$(id -u)" != "0" ]; then
        # An unprivileged user namespace also gives a private network namespace.
        unshare -r -n -- bash -c 'ip link set lo up && exec "$@"' bash "$@"
    else
        unshare -n -- bash -c 'ip link set lo up && exec "$@"' bash "$@"
    fi
}

_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

_wait_http() { # URL SECONDS
    local url="$1" deadline=$((SECONDS + $2))
    while [ "$SECONDS" -lt "$deadline" ]; do
        curl -s -o /dev/null --max-time 2 "$url" && return 0
        sleep 0.2
    done
    return 1
}

start_restate() {
    local dir="$1"
    if ! _loopback_only; then
        echo "error: start_restate runs only in a loopback-only network namespace (in_loopback_netns):" >&2
        echo "restate-server $RESTATE_SERVER_VERSION checks for a newer release at start and cannot be told not to" >&2
        return 1
    fi
    ensure_restate || return 1
    mkdir -p "$dir"
    local ingress admin fabric
    ingress="$(_free_port)"
    admin="$(_free_port)"
    fabric="$(_free_port)"
    # Telemetry off three ways (setting, its variable, DO_NOT_TRACK); the log filter keeps the
    # lines check_restate_log reads: telemetry, the release check, and every outbound connect.
    RESTATE_DISABLE_TELEMETRY=true DO_NOT_TRACK=1 \
        RESTATE_INGRESS__BIND_PORT="$ingress" RESTATE_ADMIN__BIND_PORT="$admin" \
        "$AGENT_RESTATE_SERVER" --no-logo --base-dir "$dir/base" --node-name n1 \
        --bind-ip 127.0.0.1 --bind-port "$fabric" --listen-mode tcp --log-disable-ansi-codes true \
        --log-filter 'warn,restate=info,restate_server::telemetry=debug,octocrab=debug,hyper_util::client::legacy::connect=debug' \
        >"$dir/restate.log" 2>&1 &
    export RESTATE_PID=$!
    echo "$RESTATE_PID" >"$dir/restate.pid"
    export RESTATE_INGRESS_URL="http://127.0.0.1:$ingress"
    export RESTATE_ADMIN_URL="http://127.0.0.1:$admin"
    if ! _wait_http "$RESTATE_ADMIN_URL/health" 60; then
        tail -n 40 "$dir/restate.log" >&2
        echo "error: restate-server did not answer on $RESTATE_ADMIN_URL/health (log above)" >&2
        stop_restate
        return 1
    fi
    # The ingress opens once the partitions are up.
    local deadline=$((SECONDS + 60)) code
    while [ "$SECONDS" -lt "$deadline" ]; do
        code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$RESTATE_INGRESS_URL/restate/health" || true)"
        [ "$code" = "200" ] && break
        sleep 0.2
    done
    check_restate_log "$dir" || { stop_restate; return 1; }
    echo "Restate $RESTATE_SERVER_VERSION: ingress $RESTATE_INGRESS_URL, admin $RESTATE_ADMIN_URL (state in $dir)" >&2
}

stop_restate() {
    if [ -n "${RESTATE_PID:-}" ]; then
        kill "$RESTATE_PID" 2>/dev/null || true
        local i
        for i in $(seq 50); do
            kill -0 "$RESTATE_PID" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$RESTATE_PID" 2>/dev/null || true
        wait "$RESTATE_PID" 2>/dev/null || true
    fi
    RESTATE_PID=""
}

check_restate_log() {
    local log="$1/restate.log" bad=0
    if grep -q 'Sending telemetry data' "$log"; then
        echo "error: restate-server sent telemetry ($log)" >&2
        bad=1
    fi
    local outbound
    outbound="$(grep -E 'connecting to' "$log" | grep -vE 'connecting to (127\.0\.0\.1|\[::1\]|localhost)[:/ ]' || true)"
    if [ -n "$outbound" ]; then
        echo "error: restate-server connected to an address other than loopback ($log):" >&2
        echo "$outbound" >&2
        bad=1
    fi
    return "$bad"
}

start_haproxy() {
    local dir="$1" port="$2"
    shift 2
    ensure_haproxy || return 1
    mkdir -p "$dir"
    {
        echo "global"
        echo "    maxconn 4096"
        echo "defaults"
        echo "    mode http"
        echo "    timeout connect 2s"
        echo "    timeout client 15m"
        echo "    timeout server 15m"
        echo "    timeout tunnel 15m"
        echo "frontend workers"
        echo "    bind 127.0.0.1:$port proto h2"
        echo "    default_backend replicas"
        echo "backend replicas"
        echo "    balance roundrobin"
        local i=0 backend
        for backend in "$@"; do
            i=$((i + 1))
            echo "    server w$i $backend proto h2 check inter 500ms fall 2 rise 1"
        done
    } >"$dir/haproxy.cfg"
    haproxy -f "$dir/haproxy.cfg" -db >"$dir/haproxy.log" 2>&1 &
    export HAPROXY_PID=$!
    echo "$HAPROXY_PID" >"$dir/haproxy.pid"
    local deadline=$((SECONDS + 10))
    while [ "$SECONDS" -lt "$deadline" ]; do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            return 0
        fi
        kill -0 "$HAPROXY_PID" 2>/dev/null || break
        sleep 0.1
    done
    cat "$dir/haproxy.log" >&2
    echo "error: haproxy did not listen on 127.0.0.1:$port (log above)" >&2
    return 1
}

with_durable_servers() {
    # Installs need the registries: do them before leaving the network.
    ensure_restate || return 1
    # shellcheck source=ensure-postgres.sh
    source "$_RESTATE_LIB_DIR/ensure-postgres.sh"
    ensure_postgres || return 1
    in_loopback_netns bash -c '
        set -euo pipefail
        source "$1/env.sh"
        source "$1/ensure-postgres.sh"
        source "$1/ensure-restate.sh"
        shift
        # A server started outside listens on the other namespace'"'"'s loopback.
        unset AGENT_CORE_TEST_POSTGRES_URL
        start_test_postgres
        dir="$(mktemp -d "${TMPDIR:-/tmp}/agent-core-restate.XXXXXX")"
        trap "stop_restate; rm -rf \"$dir\"; _stop_test_postgres" EXIT
        start_restate "$dir"
        export AGENT_DURABLE_TEST_RESTATE_ADMIN="$RESTATE_ADMIN_URL"
        export AGENT_DURABLE_TEST_RESTATE_INGRESS="$RESTATE_INGRESS_URL"
        rc=0
        "$@" || rc=$?
        check_restate_log "$dir" || rc=1
        exit "$rc"
    ' bash "$_RESTATE_LIB_DIR" "$@"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    ensure_restate
    ensure_haproxy
    echo "$AGENT_RESTATE_SERVER"
fi
