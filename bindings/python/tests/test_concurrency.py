"""Many sessions at once with Python tools: no deadlock, correct results."""

import asyncio
import threading

import agent_core as ac
from agent_core.providers import tool_results


async def test_100_sessions_at_once_with_python_tools():
    counter = {"sync": 0}
    lock = threading.Lock()

    @ac.tool(parallel_safe=True)
    def square(n: int) -> int:
        """Squares a number (sync, on the blocking pool)."""
        with lock:
            counter["sync"] += 1
        return n * n

    @ac.tool(parallel_safe=True)
    async def negate(n: int) -> int:
        """Negates a number (async, on the loop)."""
        await asyncio.sleep(0.001)
        return -n

    def choose(request):
        results = tool_results(request)
        if not results:
            user = request["messages"][-1]["content"][0]["text"]
            n = int(user.split()[-1])
            return ac.Reply(tool_calls=[("square", {"n": n}), ("negate", {"n": n})])
        return ac.Reply(f"{results[0]['text']} {results[1]['text']}")

    agent = ac.Agent(ac.ScriptedProvider.from_fn(choose), tools=[square, negate])
    sessions = await asyncio.gather(*(agent.create_session() for _ in range(100)))

    async def one(i: int, session: ac.Session):
        run = session.send(f"compute {i}")
        events = [e.type async for e in run.events()]
        outcome = await run
        return i, outcome, events

    results = await asyncio.wait_for(asyncio.gather(*(one(i, s) for i, s in enumerate(sessions))), 60)
    for i, outcome, events in results:
        assert outcome.status == "done", outcome
        assert outcome.final_text == f"{i * i} {-i}"
        assert events[0] == "run_started" and events[-1] == "run_completed"
        assert events.count("tool_call_succeeded") == 2
    assert counter["sync"] == 100
    assert len({s.id for s in sessions}) == 100


async def test_events_callback_sees_every_event_in_order():
    seen = []
    agent = ac.Agent(
        ac.ScriptedProvider(["one two three"] * 3),
        on_event=seen.append,
    )
    session = await agent.create_session()
    for _ in range(3):
        await session.send("hi")
    for _ in range(100):
        if sum(1 for e in seen if e.type == "run_completed") == 3:
            break
        await asyncio.sleep(0.01)
    kinds = [e.type for e in seen]
    assert kinds.count("run_started") == 3 and kinds.count("run_completed") == 3
    assert kinds[0] == "run_started" and kinds[-1] == "run_completed"
    assert all(isinstance(e, ac.Event) for e in seen)


async def test_async_event_callback():
    seen = []

    async def on_event(e):
        await asyncio.sleep(0)
        seen.append(e.type)

    agent = ac.Agent(ac.ScriptedProvider(["hi"]), on_event=on_event)
    session = await agent.create_session()
    await session.send("hi")
    for _ in range(100):
        if "run_completed" in seen:
            break
        await asyncio.sleep(0.01)
    assert "run_completed" in seen


async def test_turns_of_one_session_never_interleave():
    agent = ac.Agent(ac.ScriptedProvider([ac.Delay(50, ac.Reply("first")), "second"]))
    session = await agent.create_session()
    r1 = session.send("a")
    r2 = session.send("b")
    o2 = await r2
    o1 = await r1
    assert {o1.final_text, o2.final_text} == {"first", "second"}
    msgs = await session.messages()
    assert [m["message"]["role"] for m in msgs] == ["user", "assistant", "user", "assistant"]
    # Each answer follows its own question: the second turn started after the first ended.
    texts = [m["message"]["content"][0]["text"] for m in msgs]
    assert texts[1] == "first" and texts[3] == "second"
    assert {texts[0], texts[2]} == {"a", "b"}
