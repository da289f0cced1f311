# Installs the MCP peers the agent-mcp tests run against (sourced, not run), outside the clone so
# repeated runs reuse them:
#   - the reference test server `@modelcontextprotocol/server-everything` (npm), and
#   - the official Python `mcp` SDK, in its own virtualenv.
# Exports AGENT_MCP_EVERYTHING (the server's entry script, run with node) and AGENT_MCP_PYTHON
# (the virtualenv's python). The tests fail loudly when either is missing; they never skip.
# Idempotent: a stamp per pinned version makes a warm run a few file checks.

MCP_EVERYTHING_VERSION="2026.8.31"
MCP_PYTHON_SDK_VERSION="2.3.0"
MCP_PEERS_DIR="${AGENT_MCP_PEERS_DIR:-$HOME/.cache/agent-core/mcp-peers}"

ensure_mcp_peers() {
    local npm_dir="$MCP_PEERS_DIR/npm-everything-$MCP_EVERYTHING_VERSION"
    local venv="$MCP_PEERS_DIR/venv-mcp-$MCP_PYTHON_SDK_VERSION"
    mkdir -p "$MCP_PEERS_DIR"

    if [ ! -f "$npm_dir/.installed" ]; then
        command -v npm >/dev/null || { echo "ensure-mcp-peers: npm is required" >&2; return 1; }
        rm -rf "$npm_dir"
        mkdir -p "$npm_dir"
        (cd "$npm_dir" && printf '{"private":true}\n' > package.json &&
            npm install --no-audit --no-fund --loglevel=error \
                "@modelcontextprotocol/server-everything@$MCP_EVERYTHING_VERSION") || return 1
        touch "$npm_dir/.installed"
    fi
    local pkg="$npm_dir/node_modules/@modelcontextprotocol/server-everything"
    local entry
    entry="$(cd "$pkg" && node -e 'const p=require("./package.json");const b=typeof p.bin==="string"?p.bin:Object.values(p.bin||{})[0]||p.main;process.stdout.write(require("path").resolve(b))')" || return 1
    [ -f "$entry" ] || { echo "ensure-mcp-peers: server-everything entry $entry is missing" >&2; return 1; }
    export AGENT_MCP_EVERYTHING="$entry"

    if [ ! -f "$venv/.installed" ]; then
        rm -rf "$venv"
        if ! python3 -m venv "$venv"; then
            # Debian's python3 needs python3-venv for ensurepip.
            command -v apt-get >/dev/null || return 1
            apt-get install -y -qq python3-venv >/dev/null || return 1
            rm -rf "$venv"
            python3 -m venv "$venv" || return 1
        fi
        "$venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$MCP_PYTHON_SDK_VERSION" || return 1
        touch "$venv/.installed"
    fi
    export AGENT_MCP_PYTHON="$venv/bin/python"
    "$AGENT_MCP_PYTHON" -c 'import mcp.client.stdio, mcp.client.streamable_http' || return 1
}
