#!/usr/bin/env bash
# Installs Debian's `chromium` with apt when /usr/bin/chromium is missing (sourced or run).
# Idempotent and quick when Chromium is already there. Tests and the demo drive it headless
# over CDP, always with the closed-network flags of agent-tools' CDP host.
ensure_chromium() {
    local bin="${AGENT_CHROMIUM:-/usr/bin/chromium}"
    if [ -x "$bin" ]; then
        return 0
    fi
    echo "chromium not found at $bin: installing Debian's chromium with apt" >&2
    local sudo=""
    if [ "$(id -u)" != "0" ]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo="sudo"
        else
            echo "error: chromium is missing and this user cannot run apt-get (not root, no sudo)." >&2
            echo "Install it with: apt-get install chromium" >&2
            return 1
        fi
    fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq >/dev/null
    $sudo apt-get install -y -qq --no-install-recommends chromium fonts-liberation >/dev/null
    if [ ! -x "$bin" ]; then
        echo "error: apt installed chromium but $bin is still missing" >&2
        return 1
    fi
    echo "chromium installed: $("$bin" --version 2>/dev/null || echo "$bin")" >&2
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    ensure_chromium
fi
