"""Drives an agent-mcp ToolServer with the official Python MCP SDK and prints what it saw as
JSON on stdout (the Rust test asserts on it).

Usage: drive_server.py http URL
       drive_server.py stdio COMMAND [ARGS...]
"""

import asyncio
import json
import sys
from contextlib import AsyncExitStack

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client


def summarize(result):
    blocks = []
    for block in result.content:
        kind = getattr(block, "type", None)
        if kind == "text":
            blocks.append({"type": "text", "text": block.text})
        elif kind == "image":
            blocks.append({"type": "image", "mimeType": block.mime_type, "bytes": len(block.data)})
        else:
            blocks.append({"type": str(kind)})
    return {
        "isError": bool(result.is_error),
        "content": blocks,
        "structured": result.structured_content,
    }


async def drive(read, write):
    report = {}
    async with ClientSession(read, write) as session:
        init = await session.initialize()
        report["server"] = {"name": init.server_info.name, "version": init.server_info.version}
        listed = await session.list_tools()
        report["tools"] = {t.name: {"description": t.description, "schema": t.input_schema} for t in listed.tools}
        report["fs_list"] = summarize(await session.call_tool("fs_list", {"path": "."}))
        report["fs_read"] = summarize(await session.call_tool("fs_read", {"path": "notes/hello.txt"}))
        report["fs_read_missing_arg"] = summarize(await session.call_tool("fs_read", {}))
        report["fs_read_outside"] = summarize(await session.call_tool("fs_read", {"path": "../etc/passwd"}))
        report["fs_write_denied"] = summarize(
            await session.call_tool("fs_write", {"path": "blocked.txt", "content": "x"})
        )
        report["fs_write_allowed"] = summarize(
            await session.call_tool("fs_write", {"path": "allowed.txt", "content": "from python"})
        )
        report["shell_denied"] = summarize(await session.call_tool("shell_exec", {"command": "touch pwned"}))
        if "snapshot" in report["tools"]:
            report["snapshot"] = summarize(await session.call_tool("snapshot", {}))
        try:
            await session.call_tool("no_such_tool", {})
            report["unknown_tool"] = "no error"
        except Exception as e:  # the SDK raises McpError for JSON-RPC errors
            report["unknown_tool"] = f"{type(e).__name__}: {e}"
    return report


async def main():
    mode = sys.argv[1]
    async with AsyncExitStack() as stack:
        if mode == "http":
            streams = await stack.enter_async_context(streamable_http_client(sys.argv[2]))
            read, write = streams[0], streams[1]
        elif mode == "stdio":
            params = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:])
            read, write = await stack.enter_async_context(stdio_client(params))
        else:
            raise SystemExit(f"unknown mode {mode}")
        report = await drive(read, write)
    print(json.dumps(report))


asyncio.run(main())
