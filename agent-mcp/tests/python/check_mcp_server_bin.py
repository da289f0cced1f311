"""Checks the `mcp-server` example binary end to end with the official Python MCP SDK over
stdio: it lists agent-tools' fs/shell tools, reads and lists a temp root, runs a tool on its
--allow list, and denies a gated tool that is not on it.

Usage: check_mcp_server_bin.py PATH_TO_MCP_SERVER
Prints "N passed, 0 failed" and exits 0 when every check holds.
"""

import asyncio
import os
import sys
import tempfile

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

checks = []


def check(name, cond, detail=""):
    checks.append((name, bool(cond), detail))


def text(result):
    return "".join(getattr(b, "text", "") for b in result.content)


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
                check("fs_read", not read_.is_error and text(read_) == "hello from the root\n", text(read_))
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
    failed = [c for c in checks if not c[1]]
    for name, ok, detail in checks:
        print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    print(f"{len(checks) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


sys.exit(asyncio.run(main(sys.argv[1])))
