"""MCP both ways from Python: the client against the reference server
(@modelcontextprotocol/server-everything, installed by scripts/lib/ensure-mcp-peers.sh), and
the binding's own server connected back to by its own client over loopback HTTP."""

import os
import shutil

import pytest

import agent_core as ac
from conftest import run_and_collect

NEEDS_PEERS = (
    "AGENT_MCP_EVERYTHING is not set: run `source scripts/lib/ensure-mcp-peers.sh; ensure_mcp_peers` "
    "(scripts/test does) to install the MCP reference server before the Python suite"
)


def everything_entry() -> str:
    entry = os.environ.get("AGENT_MCP_EVERYTHING")
    if not entry:
        pytest.fail(NEEDS_PEERS)
    if not os.path.isfile(entry):
        pytest.fail(f"AGENT_MCP_EVERYTHING={entry} does not exist: {NEEDS_PEERS}")
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH (needed to run the MCP reference server)")
    return entry


async def connect_everything() -> ac.McpClient:
    return await ac.McpClient.connect(
        "everything", command="node", args=[everything_entry(), "stdio"], connect_timeout_ms=60_000
    )


async def test_everything_lists_tools_over_stdio():
    async with await connect_everything() as client:
        assert client.alias == "everything"
        assert "everything__echo" in client.tool_names
        tools = client.tools()
        assert isinstance(tools, ac.NativeTools)
        assert tools.names == client.tool_names
        echo = next(s for s in tools.specs() if s["name"] == "everything__echo")
        assert "message" in echo["parameters"]["properties"]
        info = await client.server_info()
        assert info is not None and info.protocol_version
        assert await client.is_connected()


async def test_agent_calls_everything_echo_through_the_gate():
    asked = []

    def gate(req: ac.GateRequest) -> bool:
        asked.append(req.tool)
        return req.tool == "everything__echo"

    async with await connect_everything() as client:
        provider = ac.ScriptedProvider(
            [ac.ToolCallStep("everything__echo", {"message": "hello over mcp"}), "echoed"]
        )
        agent = ac.Agent(provider, tools=[client.tools()], gate=gate)
        session = await agent.create_session()
        outcome, events = await run_and_collect(session.send("echo it"))
        assert outcome.status == "done", outcome
        assert outcome.final_text == "echoed"
        ok = [e for e in events if e.type == "tool_call_succeeded"]
        assert len(ok) == 1 and ok[0].name == "everything__echo"
        assert "hello over mcp" in ok[0].output
        assert asked == ["everything__echo"]


async def test_connect_needs_command_or_url():
    with pytest.raises(ac.ConfigError):
        await ac.McpClient.connect("x")
    with pytest.raises(ac.ConfigError):
        await ac.McpClient.connect("x", command="node", url="http://127.0.0.1:1/mcp")
    with pytest.raises(ac.ConfigError):
        await ac.McpClient.connect("bad__alias", command="node")


async def test_a_missing_server_command_is_an_mcp_error():
    with pytest.raises(ac.McpError) as info:
        await ac.McpClient.connect("gone", command="/nonexistent/mcp-server", connect_timeout_ms=5000)
    assert info.value.kind == "mcp.spawn"


async def test_own_server_round_trip_over_loopback_http(tmp_path):
    (tmp_path / "notes.txt").write_text("notes on disk")

    @ac.tool
    def shout(text: str) -> str:
        """Upper-cases text."""
        return text.upper()

    @ac.tool(gated=True)
    def launch_missiles(target: str) -> str:
        """Never allowed over MCP."""
        raise AssertionError("the gate should have denied this")

    server_asked = []

    async def server_gate(req: ac.GateRequest) -> ac.GateDecision:
        server_asked.append(req.tool)
        if req.tool == "launch_missiles":
            return ac.Deny("not over MCP")
        return ac.Allow()

    fs = ac.fs_tools(tmp_path)
    async with await ac.serve_mcp_http([shout, launch_missiles, fs], gate=server_gate) as server:
        assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/mcp")
        assert server.is_running()
        async with await ac.McpClient.connect("local", url=server.url) as client:
            assert set(client.tool_names) == {"local__shout", "local__launch_missiles"} | {
                f"local__{n}" for n in fs.names
            }
            provider = ac.ScriptedProvider(
                [
                    ac.ToolCallStep("local__shout", {"text": "hi"}),
                    ac.ToolCallStep("local__fs_read", {"path": "notes.txt"}),
                    ac.ToolCallStep("local__launch_missiles", {"target": "moon"}),
                    "done",
                ]
            )
            # Remote tools are gated on this side too: this gate lets every call through, so
            # the denial comes from the server's gate.
            agent = ac.Agent(provider, tools=[client.tools()], gate=lambda req: True)
            session = await agent.create_session()
            outcome, events = await run_and_collect(session.send("go"))
            assert outcome.status == "done", outcome
            ok = {e.name: e.output for e in events if e.type == "tool_call_succeeded"}
            assert "HI" in ok["local__shout"]
            assert "notes on disk" in ok["local__fs_read"]
            failed = [e for e in events if e.type == "tool_call_failed"]
            assert len(failed) == 1 and failed[0].name == "local__launch_missiles"
            assert "not over MCP" in failed[0].error
            assert server_asked == ["launch_missiles"]
    assert not server.is_running()
    await server.shutdown()  # a second shutdown is harmless
