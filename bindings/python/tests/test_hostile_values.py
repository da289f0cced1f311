"""Python values that cannot become JSON: structures that contain themselves, and values nested
absurdly deep, are a clear TypeError (never a crash of the interpreter); ordinary nesting and
shared (but acyclic) sub-values still convert."""

import pytest

import agent_core as ac
from conftest import run_and_collect


def nested(depth, leaf=1):
    """A list `depth` levels deep, built without recursion."""
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def echo_tool():
    def echo(**kwargs):
        return kwargs

    return ac.Tool(echo, name="echo", description="Returns its arguments.", parameters={"type": "object"})


def test_a_cyclic_dict_is_a_type_error():
    d = {"text": "hi"}
    d["self"] = d
    with pytest.raises(TypeError, match="cyclic structure"):
        ac.ScriptedProvider([d])


def test_cyclic_tool_arguments_are_a_type_error():
    items = []
    items.append(items)
    with pytest.raises(TypeError, match="cyclic structure"):
        ac.ScriptedProvider([ac.ToolCallStep("echo", {"items": items})])
    # A cycle through a tuple is found too.
    inner = []
    outer = (inner,)
    inner.append(outer)
    with pytest.raises(TypeError, match="cyclic structure"):
        ac.ScriptedProvider([ac.ToolCallStep("echo", {"t": outer})])


def test_a_100_000_deep_list_is_a_type_error():
    with pytest.raises(TypeError, match="nested deeper than 100 levels"):
        ac.ScriptedProvider([ac.ToolCallStep("echo", {"deep": nested(100_000)})])


async def test_a_cyclic_user_message_is_a_type_error():
    session = await ac.Agent(ac.ScriptedProvider(["unused"])).create_session()
    part = {"type": "text", "text": "hi"}
    part["again"] = [part]
    with pytest.raises(TypeError, match="cyclic structure"):
        session.send({"role": "user", "content": [part]})
    with pytest.raises(TypeError, match="nested deeper than"):
        session.send({"role": "user", "content": nested(100_000)})


async def test_normal_nesting_and_shared_values_still_convert():
    shared = {"k": [1, 2.5, None, True, "s"]}
    args = {"a": shared, "b": shared, "pair": (1, "x"), "n": {1: "int key"}, "deep": nested(60, "leaf")}
    seen = []

    def echo(**kwargs):
        seen.append(kwargs)
        return kwargs

    tool = ac.Tool(echo, name="echo", description="Returns its arguments.", parameters={"type": "object"})
    agent = ac.Agent(ac.ScriptedProvider([ac.ToolCallStep("echo", args), "done"]), tools=[tool])
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("go"))
    assert outcome.status == "done"
    expected = {
        "a": shared,
        "b": shared,
        "pair": [1, "x"],
        "n": {"1": "int key"},
        "deep": nested(60, "leaf"),
    }
    assert seen == [expected]
    assert [e.type for e in events].count("tool_call_succeeded") == 1


async def test_a_tool_returning_a_too_deep_value_tells_the_model():
    def deep_result():
        return {"tree": nested(150)}

    tool = ac.Tool(deep_result, name="deep_result", description="Returns a deep value.")
    provider = ac.ScriptedProvider([ac.ToolCallStep("deep_result"), "recovered"], record_requests=True)
    session = await ac.Agent(provider, tools=[tool]).create_session()
    outcome, events = await run_and_collect(session.send("go"))
    assert outcome.status == "done" and outcome.final_text == "recovered"
    failed = next(e for e in events if e.type == "tool_call_failed")
    assert "nested deeper than 100 levels" in failed.error and not failed.fatal
    tool_msgs = [m for m in provider.requests()[-1]["messages"] if m["role"] == "tool"]
    assert tool_msgs[0]["is_error"] is True


async def test_a_tool_returning_a_cyclic_value_is_an_error_for_the_model():
    def cyclic():
        d = {}
        d["self"] = d
        return d

    tool = ac.Tool(cyclic, name="cyclic", description="Returns a cycle.")
    session = await ac.Agent(ac.ScriptedProvider([ac.ToolCallStep("cyclic"), "recovered"]), tools=[tool]).create_session()
    outcome, events = await run_and_collect(session.send("go"))
    assert outcome.status == "done" and outcome.final_text == "recovered"
    failed = next(e for e in events if e.type == "tool_call_failed")
    assert not failed.fatal
    # The package's own conversion of return values (pydantic models, dataclasses) walks the
    # value first and names the cycle the same way the native conversion does.
    assert "cyclic structure" in failed.error, failed.error
