"""The consent gate: sync and async, allow, deny, absent, failing."""

import pytest

import agent_core as ac
from conftest import run_and_collect, types

ran = []


@ac.tool(gated=True)
def fs_delete(path: str) -> str:
    """Deletes a file."""
    ran.append(path)
    return f"deleted {path}"


@pytest.fixture(autouse=True)
def _reset():
    ran.clear()


def script():
    return ac.ScriptedProvider([ac.ToolCallStep("fs_delete", {"path": "/tmp/x"}), "finished"])


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_allow(kind):
    requests = []

    def sync_gate(req: ac.GateRequest):
        requests.append(req)
        return True

    async def async_gate(req: ac.GateRequest):
        requests.append(req)
        return ac.Allow()

    agent = ac.Agent(script(), tools=[fs_delete], gate=sync_gate if kind == "sync" else async_gate)
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("delete"))
    assert outcome.status == "done"
    assert ran == ["/tmp/x"]
    (req,) = requests
    assert req.tool == "fs_delete" and req.arguments == {"path": "/tmp/x"}
    assert req.session_id == session.id and req.call_id == events[3].call_id
    assert req.origin == ac.TurnOrigin("person") and req.origin.is_person
    assert events[0].type == "run_started"


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_deny_ends_the_turn(kind):
    def sync_gate(req):
        return ac.Deny("not today")

    async def async_gate(req):
        return False

    agent = ac.Agent(script(), tools=[fs_delete], gate=sync_gate if kind == "sync" else async_gate)
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("delete"))
    assert outcome.status == "denied"
    assert ran == []
    denied = next(e for e in events if e.type == "tool_call_denied")
    if kind == "sync":
        assert "not today" in denied.reason
        assert "not today" in outcome.error


async def test_deny_told_to_the_model():
    agent = ac.Agent(script(), tools=[fs_delete], gate=lambda req: ac.Deny("no"), on_denial="tell_model")
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("delete"))
    assert outcome.status == "done" and outcome.final_text == "finished"
    assert ran == []
    assert "tool_call_denied" in types(events)


async def test_absent_gate_denies():
    agent = ac.Agent(script(), tools=[fs_delete])
    session = await agent.create_session()
    outcome = await session.send("delete")
    assert outcome.status == "denied"
    assert ran == []


async def test_free_tools_skip_the_gate():
    asked = []

    @ac.tool
    def read(path: str) -> str:
        """Reads."""
        return "content"

    agent = ac.Agent(
        ac.ScriptedProvider([ac.ToolCallStep("read", {"path": "a"}), "ok"]), tools=[read], gate=asked.append
    )
    session = await agent.create_session()
    assert (await session.send("read")).status == "done"
    assert asked == []


async def test_a_gate_that_raises_denies():
    def broken(req):
        raise RuntimeError("gate crashed")

    agent = ac.Agent(script(), tools=[fs_delete], gate=broken)
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("delete"))
    assert outcome.status == "denied"
    assert ran == []
    assert "gate crashed" in next(e for e in events if e.type == "tool_call_denied").reason
