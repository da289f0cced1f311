"""Many sessions at once with Python tools: no deadlock, correct results."""

import asyncio
import re
import subprocess
import sys
import textwrap
import threading
import time
import warnings

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


async def test_an_event_callback_that_falls_behind_loses_tokens_first_and_is_told():
    tokens = 3000
    seen = []

    run = None

    def on_event(e):
        if not seen:
            # Blocks the loop until the whole answer has streamed past (a fixed pause was not
            # always long enough on a loaded machine); the deadline only keeps a bug from hanging.
            deadline = time.monotonic() + 20
            while not (run is not None and run.finished) and time.monotonic() < deadline:
                time.sleep(0.001)
        seen.append(e.type)

    agent = ac.Agent(ac.ScriptedProvider([" ".join(["w"] * tokens)]), on_event=on_event, event_buffer=64)
    session = await agent.create_session()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = session.send("hi")
        outcome = await run
        assert run.finished
        for _ in range(200):
            if "run_completed" in seen:
                break
            await asyncio.sleep(0.01)
    assert outcome.status == "done"
    others = [k for k in seen if k != "content_token"]
    assert others == ["run_started", "model_call_started", "model_call_completed", "run_completed"]
    counts = [re.search(r"(\d+) events were dropped", str(w.message)) for w in caught]
    dropped = sum(int(m.group(1)) for m in counts if m)
    assert all(issubclass(w.category, RuntimeWarning) for w, m in zip(caught, counts) if m)
    assert 0 < dropped and seen.count("content_token") + dropped == tokens
    # The callback blocks inside a batch that was taken before it blocked (at most 64 events:
    # on a loaded machine the queue may already have been full by then), and the queue keeps
    # at most 64 more until it returns.
    assert seen.count("content_token") <= 2 * 64


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


async def test_a_def_tool_that_blocks_does_not_hold_up_other_sessions():
    # Plain `def` tools share one Python thread; one that blocks (here until the other
    # session has finished) must not keep the other session's tools waiting behind it.
    wait_started, other_done = threading.Event(), threading.Event()

    @ac.tool(name="wait")
    def wait() -> str:
        """Blocks until the other session is done."""
        wait_started.set()
        return "released" if other_done.wait(timeout=20) else "timed out"

    @ac.tool(name="step")
    def step(n: int) -> str:
        """One quick step."""
        return f"step {n}"  # a result of its own each time, or the loop guard would stop the turn

    def choose(request):
        results = tool_results(request)
        user = next(m for m in request["messages"] if m["role"] == "user")
        tool = "wait" if user["content"][0]["text"] == "block" else "step"
        if len(results) < (1 if tool == "wait" else 5):
            return ac.Reply(tool_calls=[(tool, {} if tool == "wait" else {"n": len(results)})])
        return ac.Reply(results[-1]["text"])

    agent = ac.Agent(ac.ScriptedProvider.from_fn(choose), tools=[wait, step])
    blocked, other = await agent.create_session(), await agent.create_session()
    blocked_run = blocked.send("block")
    assert await asyncio.to_thread(wait_started.wait, 10)
    outcome = await asyncio.wait_for(other.send("steps"), 15)
    other_done.set()
    assert outcome.status == "done" and outcome.tool_calls == 5, outcome
    blocked_outcome = await asyncio.wait_for(blocked_run, 15)
    assert blocked_outcome.final_text == "released", blocked_outcome


def test_the_interpreter_exits_cleanly_with_python_tool_calls_in_flight(tmp_path):
    # Exiting while def tools, async tools and result deliveries are queued for the Python
    # thread must neither crash (a thread taking the GIL during finalization) nor hang.
    script = tmp_path / "exit_mid_run.py"
    script.write_text(
        textwrap.dedent(
            """
            import asyncio, time
            import agent_core as ac

            @ac.tool(name="slow")
            def slow() -> str:
                \"\"\"Sleeps a little.\"\"\"
                time.sleep(0.05)
                return "ok"

            @ac.tool(name="later")
            async def later() -> str:
                \"\"\"Sleeps a little, async.\"\"\"
                await asyncio.sleep(0.05)
                return "ok"

            async def main():
                script = [ac.Reply(tool_calls=[("slow", {}), ("later", {})])] * 1000
                agent = ac.Agent(ac.ScriptedProvider(script), tools=[slow, later])
                sessions = [await agent.create_session() for _ in range(20)]
                runs = [s.send("go") for s in sessions]
                await asyncio.sleep(0.3)
                print("leaving with", sum(not r.finished for r in runs), "runs in flight")

            asyncio.run(main())
            """
        )
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "leaving with 20 runs in flight" in done.stdout, done.stdout
    assert "Fatal Python error" not in done.stderr and "panicked" not in done.stderr, done.stderr
