"""Typed final answers: Session.send_typed with a pydantic model, a dataclass, a TypedDict and
a JSON Schema dict, the correction and the output.invalid / output.schema errors."""

import json
from dataclasses import dataclass
from typing import List, Optional, TypedDict

import pytest

import agent_core as ac


@dataclass
class City:
    """A city."""

    name: str
    population: int
    districts: Optional[List[str]] = None


class Point(TypedDict):
    x: int
    y: int


OSLO = {"name": "Oslo", "population": 709000}


async def session_for(*replies: str, record: bool = False):
    provider = ac.ScriptedProvider(list(replies), record_requests=record)
    agent = ac.Agent(provider)
    return provider, await agent.create_session()


async def test_dataclass_answer_is_parsed_and_schema_sent():
    provider, session = await session_for(json.dumps(OSLO), record=True)
    run = session.send_typed("The capital of Norway?", City)
    assert isinstance(run, ac.TypedRun) and isinstance(run, ac.Run)
    outcome = await run
    assert outcome.ok and isinstance(outcome, ac.TypedOutcome)
    assert outcome.structured == OSLO
    assert outcome.answer == City("Oslo", 709000)
    assert outcome.parsed(City) == City("Oslo", 709000)
    sent = provider.requests()[0]["output_schema"]
    assert sent["name"] == "City"
    assert sent["schema"]["required"] == ["name", "population"]
    assert sent["strict"] is False


async def test_strict_asks_for_the_providers_strict_mode():
    provider, session = await session_for(json.dumps(OSLO), record=True)
    outcome = await session.send_typed("The capital of Norway?", City, strict=True)
    assert outcome.answer == City("Oslo", 709000)
    assert provider.requests()[0]["output_schema"]["strict"] is True


async def test_pydantic_model_answer():
    pydantic = pytest.importorskip("pydantic")

    class Forecast(pydantic.BaseModel):
        city: str
        temperature_c: int
        conditions: List[str]

    answer = {"city": "Paris", "temperature_c": 21, "conditions": ["sunny"]}
    provider, session = await session_for("```json\n" + json.dumps(answer) + "\n```", record=True)
    outcome = await session.send_typed("Weather in Paris?", Forecast)
    assert outcome.ok, outcome.error
    assert isinstance(outcome.answer, Forecast)
    assert outcome.answer.conditions == ["sunny"] and outcome.structured == answer
    assert provider.requests()[0]["output_schema"]["schema"] == Forecast.model_json_schema()


async def test_typed_dict_answer_is_the_dict():
    _, session = await session_for('{"x": 1, "y": 2}')
    outcome = await session.send_typed("Where?", Point)
    assert outcome.ok and outcome.answer == {"x": 1, "y": 2}
    assert outcome.parsed(Point) == {"x": 1, "y": 2}


async def test_dict_schema_and_a_correction():
    schema = {"title": "Count", "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    provider, session = await session_for('{"n": "many"}', '{"n": 3}', record=True)
    outcome = await session.send_typed({"content": "How many?"}, schema)
    assert outcome.ok and outcome.structured == {"n": 3} and outcome.answer == {"n": 3}
    assert outcome.iterations == 2 and provider.call_count == 2
    assert provider.requests()[0]["output_schema"]["name"] == "Count"


async def test_invalid_twice_ends_output_invalid():
    _, session = await session_for('{"name": "Oslo"}', "not json at all")
    outcome = await session.send_typed("The capital of Norway?", City)
    assert outcome.status == "error" and outcome.error_kind == "output.invalid"
    assert outcome.structured is None
    for read in (lambda: outcome.answer, lambda: outcome.parsed(City)):
        with pytest.raises(ac.RunError) as err:
            read()
        assert err.value.kind == "output.invalid"


async def test_invalid_schema_ends_output_schema():
    provider, session = await session_for("{}")
    outcome = await session.send_typed("Anything?", {"type": "no such type"})
    assert outcome.status == "error" and outcome.error_kind == "output.schema"
    assert provider.call_count == 0


async def test_untyped_outcome_has_no_structured_answer():
    _, session = await session_for("plain text")
    outcome = await session.send("hi")
    assert outcome.ok and outcome.structured is None
    with pytest.raises(ac.RunError):
        outcome.parsed(City)


async def test_schema_types_are_checked():
    provider, session = await session_for()
    for bad in (int, "City", City("Oslo", 1)):
        with pytest.raises(TypeError):
            session.send_typed("hi", bad)
    assert provider.call_count == 0


async def test_typed_delivery_through_the_tab_hub():
    def choose(request):
        last = request["messages"][-1]
        text = "".join(p.get("text", "") for p in last.get("content", []))
        if text == "slow":
            return ac.Delay(300, ac.Reply("slow done"))
        if request.get("output_schema"):
            return ac.Reply(json.dumps({"name": text, "population": len(text)}))
        return ac.Reply(f"echo: {text}")

    provider = ac.ScriptedProvider.from_fn(choose, record_requests=True)
    hub = await ac.TabHub.create(provider)
    tab = await hub.open_tab()

    # An idle tab starts a typed turn at once: its run is a TypedRun.
    d = await hub.deliver(tab, "Oslo", schema=City, strict=True)
    assert d.status == "started" and isinstance(d.run, ac.TypedRun)
    outcome = await d.run
    assert outcome.ok and outcome.answer == City("Oslo", 4)
    await hub.wait_idle(tab)

    # Queued behind a running turn, the typed message is not merged with the others.
    first = await hub.deliver(tab, "slow")
    assert (await hub.deliver(tab, "a")).status == "queued"
    typed = await hub.deliver(tab, "Bergen", schema={"type": "object", "title": "town"})
    assert typed.status == "queued" and typed.run is None
    await first.run
    await hub.wait_idle(tab)
    turns = [
        ("".join(p.get("text", "") for p in r["messages"][-1]["content"]), (r.get("output_schema") or {}).get("name"))
        for r in provider.requests()
        if r["messages"][-1]["role"] == "user"
    ]
    assert turns == [("Oslo", "City"), ("slow", None), ("a", None), ("Bergen", "town")]
    strict = [(r.get("output_schema") or {}).get("strict") for r in provider.requests() if r.get("output_schema")]
    assert strict == [True, False]
    assert (await hub.read(tab))["last_response"] == json.dumps({"name": "Bergen", "population": 6})

    with pytest.raises(TypeError):
        await hub.deliver(tab, "hi", schema=int)
