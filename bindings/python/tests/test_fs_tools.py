"""The Rust filesystem and shell tools, from Python."""



import agent_core as ac
from conftest import run_and_collect


async def test_fs_tools_are_confined_and_gated(tmp_path):
    (tmp_path / "notes.txt").write_text("hello from disk")
    tools = ac.fs_tools(tmp_path)
    assert set(tools.names) == {"fs_read", "fs_write", "fs_list", "fs_mkdir", "fs_delete", "shell_exec"}
    gated = {s["name"] for s in tools.specs() if s["gated"]}
    assert gated == {"fs_write", "fs_delete", "shell_exec"}
    asked = []

    def gate(req):
        asked.append(req.tool)
        return True

    provider = ac.ScriptedProvider(
        [
            ac.ToolCallStep("fs_read", {"path": "notes.txt"}),
            ac.ToolCallStep("fs_read", {"path": "../outside.txt"}),
            ac.ToolCallStep("fs_write", {"path": "out.txt", "content": "written"}),
            "done",
        ]
    )
    agent = ac.Agent(provider, tools=[tools], gate=gate)
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("go"))
    assert outcome.status == "done"
    ok = [e for e in events if e.type == "tool_call_succeeded"]
    failed = [e for e in events if e.type == "tool_call_failed"]
    assert "hello from disk" in ok[0].output
    assert len(failed) == 1 and failed[0].name == "fs_read"
    assert asked == ["fs_write"]
    assert (tmp_path / "out.txt").read_text() == "written"


async def test_shell_exec_with_python_tools_side_by_side(tmp_path):
    @ac.tool
    def py_tool() -> str:
        """A Python tool."""
        return "from python"

    tools = ac.fs_tools(tmp_path, gated={"shell_exec": False})
    provider = ac.ScriptedProvider(
        [ac.Reply(tool_calls=[("shell_exec", {"command": "echo hi-from-shell"}), ("py_tool", {})]), "done"]
    )
    agent = ac.Agent(provider, tools=[tools, py_tool])
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("go"))
    outputs = [e.output for e in events if e.type == "tool_call_succeeded"]
    assert any("hi-from-shell" in o for o in outputs) and "from python" in outputs


def test_fs_tools_need_a_root_or_explicit_unrestricted():
    import pytest

    with pytest.raises(ac.ConfigError):
        ac.fs_tools()
    assert len(ac.fs_tools(unrestricted=True)) == 6

