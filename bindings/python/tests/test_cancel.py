"""Cancellation from run.cancel() and from asyncio task cancellation, during a slow Python
tool and during a slow model; the transcript stays valid."""

import asyncio
import threading

import pytest

import agent_core as ac
from conftest import run_and_collect, types, wait_for_state


def slow_async_tool(started: asyncio.Event, cancelled: list):
    @ac.tool
    async def slow(seconds: float) -> str:
        """Sleeps."""
        started.set()
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "woke up"

    return slow


async def assert_valid_transcript(session: ac.Session):
    history = await session.model_history()
    calls = [c["id"] for m in history if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    results = [m["tool_call_id"] for m in history if m["role"] == "tool"]
    assert sorted(calls) == sorted(results)


@pytest.mark.parametrize("how", ["run.cancel", "task.cancel", "wait_for"])
async def test_cancel_during_slow_async_tool(how):
    started, cancelled = asyncio.Event(), []
    tool = slow_async_tool(started, cancelled)
    agent = ac.Agent(ac.ScriptedProvider([ac.ToolCallStep("slow", {"seconds": 30}), "unreachable"]), tools=[tool])
    session = await agent.create_session()
    run = session.send("sleep")
    await asyncio.wait_for(started.wait(), 5)
    if how == "run.cancel":
        run.cancel()
        outcome = await run
        assert outcome.status == "cancelled"
    elif how == "task.cancel":
        task = asyncio.ensure_future(run.outcome())
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    else:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(run, 0.1)
    # The turn itself ends cancelled, and the Python coroutine of the tool was cancelled.
    events = [e async for e in run.events()]  # late subscriber: may see only the end
    final = await run.outcome()
    assert final.status == "cancelled"
    for _ in range(500):
        if cancelled:
            break
        await asyncio.sleep(0.01)
    assert cancelled == [True]
    await assert_valid_transcript(session)
    del events


async def test_cancel_during_slow_sync_tool():
    started = threading.Event()
    release = threading.Event()

    @ac.tool
    def blocking(seconds: float) -> str:
        """Blocks a thread."""
        started.set()
        release.wait(seconds)
        return "done"

    agent = ac.Agent(ac.ScriptedProvider([ac.ToolCallStep("blocking", {"seconds": 10}), "x"]), tools=[blocking])
    session = await agent.create_session()
    run = session.send("block")
    await asyncio.get_running_loop().run_in_executor(None, started.wait, 5)
    run.cancel()
    outcome, events = await run_and_collect(run)
    release.set()
    assert outcome.status == "cancelled"
    assert types(events)[-1] == "run_cancelled"
    await assert_valid_transcript(session)


@pytest.mark.parametrize("step", [ac.Hang("partial answer"), ac.Delay(30_000, ac.Reply("late"))], ids=["hang", "delay"])
@pytest.mark.parametrize("how", ["run.cancel", "task.cancel"])
async def test_cancel_during_slow_model(step, how):
    provider = ac.ScriptedProvider([step])
    agent = ac.Agent(provider)
    session = await agent.create_session()
    run = session.send("think")
    await wait_for_state(run, "thinking")
    await asyncio.sleep(0.05)
    if how == "run.cancel":
        run.cancel()
    else:
        task = asyncio.ensure_future(run.outcome())
        await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    outcome = await run.outcome()
    assert outcome.status == "cancelled"
    assert run.status().state == "cancelled"
    for _ in range(100):
        if provider.live_streams == 0:
            break
        await asyncio.sleep(0.01)
    assert provider.live_streams == 0  # the model stream was dropped
    # The session takes a new turn afterwards.
    assert (await session.send("again")).status == "error"  # the script is exhausted: a clear error


async def test_cancelled_run_leaves_session_usable():
    provider = ac.ScriptedProvider([ac.Hang(""), "second answer"])
    agent = ac.Agent(provider)
    session = await agent.create_session()
    run = session.send("one")
    await wait_for_state(run, "thinking")
    run.cancel()
    assert (await run).status == "cancelled"
    outcome = await session.send("two")
    assert outcome.status == "done" and outcome.final_text == "second answer"
