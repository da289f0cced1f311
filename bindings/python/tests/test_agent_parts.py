"""The native parts object both `Agent` and `TabHub.create` are built from."""

import pytest

import agent_core as ac
from agent_core import _native


def test_parts_reject_unknown_and_missing_keys():
    provider = ac.ScriptedProvider(["hi"])._native
    with pytest.raises(TypeError, match="unexpected keyword argument .sytem_prompt."):
        _native.AgentParts(provider=provider, sytem_prompt="typo")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="provider"):
        _native.AgentParts()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _native.AgentParts(provider="not a provider")  # type: ignore[arg-type]


async def test_one_parts_object_builds_an_agent_and_a_hub():
    parts = _native.AgentParts(
        provider=ac.ScriptedProvider(["hello"])._native, system_prompt="Be brief.", config={"max_iterations": 3}
    )
    agent = _native.Agent(parts)
    assert agent.config()["max_iterations"] == 3
    session = await agent.create_session()
    outcome = await session.send("hi").outcome()
    assert outcome["final_text"] == "hello"
    hub = await _native.TabHub.build(parts)
    assert hub.tabs() == []


def test_public_constructors_unchanged():
    agent = ac.Agent(ac.ScriptedProvider(["x"]), system_prompt="p", clarification=True)
    assert agent.config["max_iterations"] > 0
