"""Python tools: sync and async, schemas from hints, argument validation, exceptions."""

import asyncio
import dataclasses
import enum
import gc
import threading
from typing import Dict, List, Literal, Optional, Tuple

import pydantic
import pytest
from typing_extensions import Annotated, TypedDict

import agent_core as ac
from conftest import run_and_collect, types


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Address(TypedDict):
    street: str
    zip: int


@dataclasses.dataclass
class Point:
    """A point."""

    x: float
    y: float = 0.0


class Person(pydantic.BaseModel):
    name: str
    age: int
    home: Optional["Pet"] = None


class Pet(pydantic.BaseModel):
    species: Literal["cat", "dog"]


Person.model_rebuild()


def test_schema_from_hints():
    def f(
        s: str,
        i: int,
        x: float,
        b: bool,
        mode: Literal["fast", "slow"],
        maybe: Optional[int],
        tags: List[str],
        scores: Dict[str, float],
        pair: Tuple[int, str],
        color: Color,
        addr: Address,
        point: Point,
        note: Annotated[str, "a note for the log"] = "none",
        limit: int = 10,
    ) -> str:
        """Does many things.

        Args:
            s: a string
            i: an integer,
                continued here.
        """
        return ""

    t = ac.Tool(f)
    assert t.name == "f"
    assert t.description == "Does many things."
    p = t.parameters
    assert p["type"] == "object"
    props = p["properties"]
    assert props["s"] == {"type": "string", "description": "a string"}
    assert props["i"] == {"type": "integer", "description": "an integer, continued here."}
    assert props["x"] == {"type": "number"}
    assert props["b"] == {"type": "boolean"}
    assert props["mode"] == {"enum": ["fast", "slow"], "type": "string"}
    assert props["maybe"] == {"type": ["integer", "null"]}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["scores"] == {"type": "object", "additionalProperties": {"type": "number"}}
    assert props["pair"]["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    assert props["color"] == {"enum": ["red", "blue"], "type": "string"}
    assert props["addr"]["properties"] == {"street": {"type": "string"}, "zip": {"type": "integer"}}
    assert props["addr"]["required"] == ["street", "zip"]
    assert props["point"]["required"] == ["x"] and props["point"]["description"] == "A point."
    assert props["note"] == {"type": "string", "description": "a note for the log", "default": "none"}
    assert props["limit"] == {"type": "integer", "default": 10}
    assert p["required"] == ["s", "i", "x", "b", "mode", "maybe", "tags", "scores", "pair", "color", "addr", "point"]


def test_schema_from_pydantic_model_hoists_defs():
    def register(person: Person) -> str:
        """Registers a person."""
        return person.name

    p = ac.Tool(register).parameters
    assert p["properties"]["person"]["properties"]["name"] == {"title": "Name", "type": "string"}
    assert "Pet" in p["$defs"]
    assert "$defs" not in p["properties"]["person"]


def test_explicit_schema_and_options():
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}

    @ac.tool(name="search-web", description="Searches.", parameters=schema, gated=True, parallel_safe=True, timeout=2.5)
    def search(**kwargs):
        return kwargs

    assert isinstance(search, ac.Tool)
    assert search.spec() == {
        "name": "search-web",
        "description": "Searches.",
        "parameters": schema,
        "gated": True,
        "parallel_safe": True,
        "timeout": 2.5,
    }
    agent = ac.Agent(ac.ScriptedProvider([]), tools=[search])
    (spec,) = agent.tool_specs()
    assert spec["name"] == "search-web" and spec["gated"] and spec["parallel_safe"]
    assert spec["timeout"] == 2500


def test_unsupported_hint_is_a_clear_error():
    class Opaque:
        pass

    def f(x: Opaque) -> str:
        return ""

    with pytest.raises(ac.SchemaError, match="cannot derive a JSON Schema"):
        ac.Tool(f)


def test_a_description_that_is_not_text_is_refused_naming_the_tool():
    def lookup() -> str:
        return "x"

    with pytest.raises(TypeError, match="tool 'lookup': description must be a str, not int"):
        ac.tool(name="lookup", description=42)(lookup)
    assert ac.tool(name="lookup", description=None)(lookup).description == "lookup"


def test_invalid_tool_name():
    with pytest.raises(ValueError, match="invalid tool name"):
        ac.Tool(lambda: None)


def test_duplicate_tool_names_are_a_config_error():
    @ac.tool
    def same() -> str:
        return ""

    with pytest.raises(ac.ConfigError, match="same"):
        ac.Agent(ac.ScriptedProvider([]), tools=[same, same])


async def test_sync_tool_runs_off_the_event_loop_thread():
    seen = {}

    @ac.tool
    def where() -> str:
        """Reports its thread."""
        seen["thread"] = threading.get_ident()
        return "ok"

    agent = ac.Agent(ac.ScriptedProvider([ac.ToolCallStep("where"), "done"]), tools=[where])
    session = await agent.create_session()
    assert (await session.send("go")).status == "done"
    assert seen["thread"] != threading.get_ident()


async def test_async_tool_runs_on_the_callers_loop():
    seen = {}

    @ac.tool
    async def fetch(url: str) -> dict:
        """Fetches."""
        seen["loop"] = asyncio.get_running_loop()
        await asyncio.sleep(0.01)
        return {"url": url, "status": 200}

    agent = ac.Agent(ac.ScriptedProvider([ac.ToolCallStep("fetch", {"url": "http://x"}), "done"]), tools=[fetch])
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("go"))
    assert outcome.status == "done"
    assert seen["loop"] is asyncio.get_running_loop()
    ok = next(e for e in events if e.type == "tool_call_succeeded")
    assert ok.output == '{"status":200,"url":"http://x"}' or ok.output == '{"url":"http://x","status":200}'


async def test_typed_arguments_are_converted():
    got = {}

    @ac.tool
    def place(point: Point, color: Color, people: List[Person], corner: Optional[Point] = None) -> Point:
        """Places things."""
        got.update(point=point, color=color, people=people, corner=corner)
        return Point(point.x + 1, point.y)

    args = {
        "point": {"x": 1.5},
        "color": "blue",
        "people": [{"name": "Ada", "age": 36, "home": {"species": "cat"}}],
    }
    provider = ac.ScriptedProvider([ac.ToolCallStep("place", args), "done"])
    agent = ac.Agent(provider, tools=[place])
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("go"))
    assert outcome.status == "done"
    assert got["point"] == Point(1.5, 0.0)
    assert got["color"] is Color.BLUE
    assert got["people"][0] == Person(name="Ada", age=36, home=Pet(species="cat"))
    assert got["corner"] is None
    ok = next(e for e in events if e.type == "tool_call_succeeded")
    assert ok.output in ('{"x":2.5,"y":0.0}', '{"x":2.5,"y":0}')


async def test_invalid_arguments_never_reach_the_tool():
    calls = []

    @ac.tool
    def add(a: int, b: int) -> int:
        """Adds."""
        calls.append((a, b))
        return a + b

    provider = ac.ScriptedProvider(
        [
            ac.ToolCallStep("add", {"a": "one", "b": 2}),
            ac.ToolCallStep("add", {"a": 1}),
            ac.Reply(tool_calls=[("add", '{"a": 1, "b":')]),
            ac.ToolCallStep("add", {"a": 1, "b": 2}),
            "done",
        ]
    )
    agent = ac.Agent(provider, tools=[add])
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("go"))
    assert outcome.status == "done"
    assert calls == [(1, 2)]
    failures = [e for e in events if e.type == "tool_call_failed"]
    assert len(failures) == 3
    assert "a" in failures[0].error and not failures[0].fatal
    assert "b" in failures[1].error
    assert types(events).count("tool_call_succeeded") == 1


async def test_python_exception_becomes_a_result_and_the_loop_goes_on():
    @ac.tool
    def flaky(n: int) -> str:
        """Fails."""
        raise KeyError(f"no item {n}")

    @ac.tool
    async def retry_me() -> str:
        """Fails, retryable."""
        raise ac.ToolError("try again later", retryable=True)

    provider = ac.ScriptedProvider(
        [ac.ToolCallStep("flaky", {"n": 3}), ac.ToolCallStep("retry_me"), "recovered"], record_requests=True
    )
    agent = ac.Agent(provider, tools=[flaky, retry_me])
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("go"))
    assert outcome.status == "done" and outcome.final_text == "recovered"
    failures = [e for e in events if e.type == "tool_call_failed"]
    assert failures[0].error == "error: KeyError: 'no item 3'" and failures[0].fatal is False
    assert failures[1].error.endswith("try again later")
    last_request = provider.requests()[-1]
    tool_msgs = [m for m in last_request["messages"] if m["role"] == "tool"]
    assert tool_msgs[0]["is_error"] is True
    assert "no item 3" in tool_msgs[0]["content"][0]["text"]


async def test_an_async_tool_that_fails_or_cancels_itself_leaves_the_loop_quiet():
    """Its error reaches the model, and asyncio reports nothing: no task whose exception was
    never retrieved, no coroutine never awaited."""

    @ac.tool
    async def broken() -> str:
        """Fails."""
        raise ValueError("bad input")

    @ac.tool
    async def gives_up() -> str:
        """Cancels itself."""
        raise asyncio.CancelledError()

    reported = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    provider = ac.ScriptedProvider([ac.ToolCallStep("broken"), ac.ToolCallStep("gives_up"), "fine"])
    agent = ac.Agent(provider, tools=[broken, gives_up])
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("go"))
    assert outcome.status == "done" and outcome.final_text == "fine"
    failures = [e.error for e in events if e.type == "tool_call_failed"]
    assert failures == ["error: ValueError: bad input", "error: RuntimeError: the async callback was cancelled"]
    gc.collect()
    await asyncio.sleep(0)
    loop.set_exception_handler(None)
    assert reported == []


@pytest.mark.parametrize("is_async", [False, True])
async def test_fatal_tool_error_ends_the_turn_and_keeps_the_exception(is_async):
    class HostGone(Exception):
        pass

    original = HostGone("the browser closed")

    def body() -> str:
        raise ac.ToolError.fatal(original)

    async def abody() -> str:
        raise ac.ToolError.fatal(original)

    t = ac.Tool(abody if is_async else body, name="navigate")
    agent = ac.Agent(ac.ScriptedProvider([ac.ToolCallStep("navigate"), "unreachable"]), tools=[t])
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("go"))
    assert outcome.status == "error"
    assert outcome.error_kind == "tool.fatal"
    assert "the browser closed" in outcome.error
    assert isinstance(outcome.error_source, ac.ToolError)
    assert outcome.error_source.is_fatal
    assert outcome.error_source.__cause__ is original
    failed = next(e for e in events if e.type == "tool_call_failed")
    assert failed.fatal is True
    with pytest.raises(ac.RunError) as info:
        outcome.raise_for_status()
    assert info.value.__cause__ is outcome.error_source


async def test_tool_context_and_return_values():
    seen = {}

    @ac.tool
    def ctx_tool(ctx: ac.ToolContext, n: int = 1):
        """Returns nothing."""
        seen["ctx"] = ctx
        return None

    assert "ctx" not in ctx_tool.parameters["properties"]
    agent = ac.Agent(ac.ScriptedProvider([ac.ToolCallStep("ctx_tool"), "done"]), tools=[ctx_tool])
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("go"))
    assert seen["ctx"].session_id == session.id
    assert seen["ctx"].call_id == events[3].call_id
    assert next(e for e in events if e.type == "tool_call_succeeded").output == "ok"


async def test_an_async_tool_gets_its_context_and_one_without_a_context_parameter_gets_none():
    seen = {}

    @ac.tool
    async def with_ctx(context: ac.ToolContext) -> str:
        """Reports its call id."""
        seen["ctx"] = context
        return context.call_id

    @ac.tool
    async def plain(n: int = 1) -> int:
        """Returns n."""
        return n

    steps = [ac.ToolCallStep("with_ctx"), ac.ToolCallStep("plain", {"n": 2}), "done"]
    agent = ac.Agent(ac.ScriptedProvider(steps), tools=[with_ctx, plain])
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("go"))
    assert outcome.status == "done"
    assert seen["ctx"].session_id == session.id
    outputs = [e.output for e in events if e.type == "tool_call_succeeded"]
    assert outputs == [seen["ctx"].call_id, "2"]


async def test_non_json_return_value_is_an_error_for_the_model():
    @ac.tool
    def weird() -> object:
        """Returns an object."""
        return object()

    agent = ac.Agent(ac.ScriptedProvider([ac.ToolCallStep("weird"), "done"]), tools=[weird])
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("go"))
    assert outcome.status == "done"
    failed = next(e for e in events if e.type == "tool_call_failed")
    assert "not JSON-serializable" in failed.error


async def test_tool_timeout():
    @ac.tool(timeout=0.1)
    async def slow() -> str:
        """Sleeps."""
        await asyncio.sleep(10)
        return "late"

    agent = ac.Agent(ac.ScriptedProvider([ac.ToolCallStep("slow"), "gave up"]), tools=[slow])
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("go"))
    assert outcome.status == "done"
    failed = next(e for e in events if e.type == "tool_call_failed")
    assert "timed out" in failed.error


async def test_parallel_safe_tools_run_concurrently():
    running = 0
    peak = 0

    @ac.tool(parallel_safe=True)
    async def work(i: int) -> int:
        """Works."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.1)
        running -= 1
        return i

    lock = threading.Lock()
    speak = 0
    srunning = 0

    @ac.tool(parallel_safe=True)
    def swork(i: int) -> int:
        """Works, blocking."""
        import time

        nonlocal srunning, speak
        with lock:
            srunning += 1
            speak = max(speak, srunning)
        time.sleep(0.1)
        with lock:
            srunning -= 1
        return i

    step = ac.Reply(tool_calls=[("work", {"i": i}) for i in range(3)])
    sstep = ac.Reply(tool_calls=[("swork", {"i": i}) for i in range(3)])
    agent = ac.Agent(ac.ScriptedProvider([step, sstep, "done"]), tools=[work, swork])
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("go"))
    assert outcome.status == "done"
    assert peak == 3 and speak == 3
    outputs = [e.output for e in events if e.type == "tool_call_succeeded"]
    assert sorted(outputs[:3]) == ["0", "1", "2"] and sorted(outputs[3:]) == ["0", "1", "2"]
    # Results reach the model in call order, whatever order they finished in.
    history = await session.model_history()
    tool_texts = [m["content"][0]["text"] for m in history if m["role"] == "tool"]
    assert tool_texts == ["0", "1", "2", "0", "1", "2"]


def test_tool_is_still_callable():
    @ac.tool
    def double(x: int) -> int:
        """Doubles."""
        return 2 * x

    assert double(4) == 8
