"""Checks the `mcp-server` example binary end to end with the official Python MCP SDK over
stdio: it lists agent-tools' fs/shell tools, reads and lists a temp root, runs a tool on its
--allow list, and denies a gated tool that is not on it. Over HTTP: it prints a bearer token,
serves the SDK with it, answers 401 without it and 403 to a foreign Origin, takes a fixed token
from MCP_SERVER_TOKEN, and refuses --allow with --no-token.

Usage: check_mcp_server_bin.py PATH_TO_MCP_SERVER
Prints "N passed, 0 failed" and exits 0 when every check holds.
"""

import asyncio
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

checks = []


def check(name, cond, detail=""):
    checks.append((name, bool(cond), detail))


def text(result):
    return "".join(getattr(b, "text", "") for b in result.content)


INITIALIZE = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
              b'"capabilities":{},"clientInfo":{"name":"check","version":"1"}}}')


def post_status(url, headers):
    """The status of a raw initialize POST with `headers`."""
    request = urllib.request.Request(url, data=INITIALIZE, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


def start_http(binary, root, extra, env=None):
    """Starts the binary over HTTP; returns the process and its stderr up to the token line
    (or up to its exit)."""
    proc = subprocess.Popen([binary, "--root", root, "--http", "127.0.0.1:0", *extra],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, **(env or {})})
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr] and None, daemon=True).start()
    seen = ""
    while "Bearer " not in seen and "--no-token:" not in seen:
        try:
            seen += lines.get(timeout=20)
        except queue.Empty:
            break
        if proc.poll() is not None and lines.empty():
            break
    return proc, seen


async def check_http(binary, root):
    proc, said = start_http(binary, root, ["--allow", "fs_write"], env={"MCP_SERVER_TOKEN": ""})
    try:
        url = re.search(r"at (http://\S+/mcp)", said)
        token = re.search(r"Authorization: Bearer ([0-9a-f]{64})", said)
        check("HTTP prints its URL and a fresh token", url and token, said)
        if not (url and token):
            return
        url, token = url.group(1), token.group(1)
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with client, streamable_http_client(url, http_client=client, terminate_on_close=False) as (read, write, *_):
            async with ClientSession(read, write) as session:
                await session.initialize()
                wrote = await session.call_tool("fs_write", {"path": "notes/http.txt", "content": "ok"})
                check("HTTP with the token: fs_write on the --allow list runs", not wrote.is_error, text(wrote))
        check("HTTP without a token is 401", post_status(url, {}) == 401)
        check("HTTP with a wrong token is 401", post_status(url, {"Authorization": "Bearer nope"}) == 401)
        check("HTTP from a foreign Origin is 403",
              post_status(url, {"Authorization": f"Bearer {token}", "Origin": "https://evil.example"}) == 403)
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    proc, said = start_http(binary, root, [], env={"MCP_SERVER_TOKEN": "fixed-token-123"})
    try:
        url = re.search(r"at (http://\S+/mcp)", said)
        check("MCP_SERVER_TOKEN sets the token", "Bearer fixed-token-123" in said and url, said)
        if url:
            check("the fixed token is accepted",
                  post_status(url.group(1), {"Authorization": "Bearer fixed-token-123"}) == 200)
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    refused = subprocess.run([binary, "--root", root, "--http", "127.0.0.1:0", "--no-token", "--allow", "shell_exec"],
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=20)
    check("--allow with --no-token over HTTP is refused",
          refused.returncode == 2 and "needs the bearer token" in refused.stderr, refused.stderr)


async def main(binary):
    with tempfile.TemporaryDirectory() as root:
        os.mkdir(os.path.join(root, "notes"))
        with open(os.path.join(root, "notes", "hello.txt"), "w") as f:
            f.write("hello from the root\n")
        params = StdioServerParameters(command=binary, args=["--root", root, "--allow", "fs_write"])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                names = sorted(t.name for t in (await session.list_tools()).tools)
                check("lists the six fs/shell tools", names == sorted(
                    ["fs_read", "fs_write", "fs_list", "fs_mkdir", "fs_delete", "shell_exec"]), names)
                listed = await session.call_tool("fs_list", {"path": "."})
                check("fs_list", not listed.is_error and "notes/" in text(listed), text(listed))
                read_ = await session.call_tool("fs_read", {"path": "notes/hello.txt"})
                # Served with its provenance: the client's model reads the file as data.
                check("fs_read", not read_.is_error
                      and text(read_).startswith("[untrusted data from file notes/hello.txt: ")
                      and "\nhello from the root\n\n</untrusted-content nonce=" in text(read_), text(read_))
                outside = await session.call_tool("fs_read", {"path": "../../etc/passwd"})
                check("fs_read outside the root is refused", outside.is_error, text(outside))
                wrote = await session.call_tool("fs_write", {"path": "notes/new.txt", "content": "hi"})
                check("fs_write on the --allow list runs", not wrote.is_error, text(wrote))
                check("fs_write wrote the file",
                      open(os.path.join(root, "notes", "new.txt")).read() == "hi")
                shell = await session.call_tool("shell_exec", {"command": "touch pwned"})
                check("shell_exec off the --allow list is denied",
                      shell.is_error and "denied" in text(shell) and "--allow" in text(shell), text(shell))
                check("the denied command did not run", not os.path.exists(os.path.join(root, "pwned")))
        await check_http(binary, root)
    failed = [c for c in checks if not c[1]]
    for name, ok, detail in checks:
        print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    print(f"{len(checks) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


sys.exit(asyncio.run(main(sys.argv[1])))
