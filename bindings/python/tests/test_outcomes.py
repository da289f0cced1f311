"""Every outcome status, events order, and status snapshots."""

import asyncio

import pytest

import agent_core as ac
from conftest import run_and_collect, types


@ac.tool
def echo(text: str) -> str:
    """Echoes text."""
    return text


@ac.tool(gated=True)
def delete_file(path: str) -> str:
    """Deletes a file."""
    raise AssertionError("a denied tool must never run")


async def test_done_with_events_in_order():
    provider = ac.ScriptedProvider([ac.ToolCallStep("echo", {"text": "hi"}), "The tool said hi."])
    agent = ac.Agent(provider, tools=[echo])
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("say hi"))
    assert outcome.status == "done" and outcome.ok
    assert outcome.final_text == "The tool said hi."
    assert outcome.iterations == 2 and outcome.tool_calls == 1
    assert types(events) == [
        "run_started",
        "model_call_started",
        "model_call_completed",
        "tool_call_started",
        "tool_call_succeeded",
        "model_call_started",
        "content_token",
        "content_token",
        "content_token",
        "content_token",
        "model_call_completed",
        "run_completed",
    ]
    assert all(e.session_id == session.id for e in events)
    started = events[3]
    assert started.name == "echo" and started.arguments == {"text": "hi"}
    assert events[4]["output"] == "hi" and events[4]["truncated"] is False
    assert "".join(e.text for e in events if e.type == "content_token") == "The tool said hi."
    assert events[-1].outcome.status == "done"
    assert outcome.usage.output_tokens > 0
    assert outcome.raise_for_status() is outcome


async def test_denied_without_gate():
    provider = ac.ScriptedProvider([ac.ToolCallStep("delete_file", {"path": "/x"}), "unreachable"])
    agent = ac.Agent(provider, tools=[delete_file])
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("delete it"))
    assert outcome.status == "denied"
    assert "tool_call_denied" in types(events)
    assert types(events)[-1] == "run_completed"
    with pytest.raises(ac.RunError) as info:
        outcome.raise_for_status()
    assert info.value.outcome is outcome


async def test_capped_by_iterations():
    provider = ac.ScriptedProvider([ac.ToolCallStep("echo", {"text": str(i)}) for i in range(5)])
    agent = ac.Agent(provider, tools=[echo], config=ac.AgentConfig(max_iterations=2))
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("loop"))
    assert outcome.status == "capped"
    assert outcome.iterations == 2
    assert types(events)[-1] == "run_capped"
    assert outcome.final_text == "Reached maximum iteration limit"


async def test_capped_by_tool_calls_via_keyword_setting():
    provider = ac.ScriptedProvider([ac.ToolCallStep("echo", {"text": str(i)}) for i in range(5)])
    agent = ac.Agent(provider, tools=[echo], max_tool_calls=1)
    assert agent.config["max_tool_calls"] == 1
    session = await agent.create_session()
    outcome = await session.send("loop")
    assert outcome.status == "capped"


async def test_cancelled():
    agent = ac.Agent(ac.ScriptedProvider([ac.Hang("thinking...")]))
    session = await agent.create_session()
    run = session.send("hi")
    await asyncio.sleep(0.05)
    run.cancel()
    outcome, events = await run_and_collect(run)
    assert outcome.status == "cancelled"
    assert types(events)[-1] == "run_cancelled"


async def test_error_from_provider_keeps_rust_text():
    agent = ac.Agent(ac.ScriptedProvider([ac.ProviderFailure("auth", "bad key", status=401)]))
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("hi"))
    assert outcome.status == "error"
    assert outcome.error_kind == "provider.auth"
    assert "authentication failed (HTTP 401): bad key" in outcome.error
    assert types(events)[-1] == "run_failed"
    with pytest.raises(ac.RunError, match="authentication failed"):
        outcome.raise_for_status()


async def test_status_snapshots():
    agent = ac.Agent(ac.ScriptedProvider([ac.Delay(300, ac.Reply("late answer"))]))
    session = await agent.create_session()
    run = session.send("hi")
    await asyncio.sleep(0.1)
    status = run.status()
    assert status.state == "thinking" and status.iteration == 1
    assert not run.finished
    outcome = await run
    assert outcome.final_text == "late answer"
    after = run.status()
    assert after.state == "complete" and after.last_message == "late answer"
    assert run.finished


def test_outcome_statuses_constant():
    assert set(ac.OUTCOME_STATUSES) == {"done", "denied", "capped", "cancelled", "error", "awaiting_user", "awaiting_approval", "awaiting_tools"}


async def test_send_a_message_with_an_image():
    provider = ac.ScriptedProvider(["I see a red dot."], record_requests=True)
    # The scripted provider knows no model: vision "auto" would send it no image.
    agent = ac.Agent(provider, vision="on")
    session = await agent.create_session()
    message = {
        "content": [
            {"type": "text", "text": "What is in this picture?"},
            {"type": "image", "media_type": "image/png", "source": {"kind": "base64", "data": "iVBORw0KGgo="}},
        ]
    }
    outcome = await session.send(message)
    assert outcome.final_text == "I see a red dot."
    sent = provider.requests()[0]["messages"][0]
    assert sent["role"] == "user"
    assert sent["content"][1] == message["content"][1]
    assert (await session.send({"content": "plain text in a dict"})).status == "error"  # script exhausted
    with pytest.raises(ac.ConfigError, match="invalid message"):
        session.send({"content": [{"type": "video"}]})


async def test_an_awaited_outcome_equals_the_one_its_final_event_carries():
    # The usual outcome's dict is built field by field (usual_outcome_dict in src/agent.rs);
    # the final event's goes through its JSON value. Both must read the same.
    usage = {"input_tokens": 50, "output_tokens": 10, "cached_input_tokens": 3, "reasoning_tokens": 2}
    turns = [
        [ac.Reply(tool_calls=[("echo", {"text": "a"})], usage=usage), ac.Reply("done", usage=usage)],
        [ac.ProviderFailure("auth", "bad key", status=401)],
        [ac.Reply(tool_calls=[("echo", {"text": "x"})]) for _ in range(3)],
    ]
    statuses, outcomes = [], []
    for steps in turns:
        agent = ac.Agent(
            ac.ScriptedProvider(steps),
            tools=[echo],
            config=ac.AgentConfig(prices={"scripted": {"input": 1.0, "output": 10000.0}}, max_iterations=2),
        )
        session = await agent.create_session()
        outcome, events = await run_and_collect(session.send("go"))
        assert outcome == events[-1].outcome
        statuses.append(outcome.status)
        outcomes.append(outcome)
    assert statuses == ["done", "error", "capped"]
    # The first turn's figures are all there, not defaults.
    assert outcomes[0].usage.cached_input_tokens == 6 and outcomes[0].cost_usd is not None
