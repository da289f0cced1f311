"""Cost and budgets from Python: each call's cost in its event, the turn's and the session's in
the outcome and on the session (kept in the store across a restart), prices set as options, None
for an unknown price, and budgets that end a turn ``capped`` with their own message."""

import pytest

import agent_core as ac
from conftest import run_and_collect

# $0.01 per output token, input free: ten output tokens cost $0.10, and with
# max_output_tokens=1 a budget's estimate of the next call is exactly $0.01.
PRICES = {"scripted": {"input": 0.0, "output": 10000.0}}
TEN = {"input_tokens": 50, "output_tokens": 10}


@ac.tool
def echo(text: str) -> str:
    """Echoes text."""
    return text


def echoing_forever() -> ac.ScriptedProvider:
    def choose(request):
        n = sum(1 for m in request["messages"] if m["role"] == "tool")
        return ac.Reply(tool_calls=[("echo", {"text": f"hi {n}"})], usage=TEN)

    return ac.ScriptedProvider.from_fn(choose)


async def test_calls_turns_and_sessions_carry_their_cost():
    provider = ac.ScriptedProvider(
        [
            ac.Reply(tool_calls=[("echo", {"text": "a"})], usage=TEN),
            ac.Reply("done", usage=TEN),
            ac.Reply("again", usage=TEN),
        ]
    )
    agent = ac.Agent(provider, tools=[echo], config=ac.AgentConfig(prices=PRICES))
    session = await agent.create_session()
    assert session.cost_usd() == 0.0
    outcome, events = await run_and_collect(session.send("go"))
    assert outcome.status == "done"
    assert outcome.cost_usd == pytest.approx(0.2)
    assert outcome.session_cost_usd == pytest.approx(0.2)
    costs = [e["cost_usd"] for e in events if e["type"] == "model_call_completed"]
    assert costs == [pytest.approx(0.1), pytest.approx(0.1)]
    assert events[-1].outcome.cost_usd == pytest.approx(0.2)
    second = await session.send("more")
    assert second.cost_usd == pytest.approx(0.1)
    assert second.session_cost_usd == pytest.approx(0.3)
    assert session.cost_usd() == pytest.approx(0.3)


async def test_an_unknown_price_is_none():
    agent = ac.Agent(ac.ScriptedProvider([ac.Reply("hi", usage=TEN)]))
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("go"))
    assert outcome.status == "done"
    assert outcome.cost_usd is None and outcome.session_cost_usd is None
    assert [e["cost_usd"] for e in events if e["type"] == "model_call_completed"] == [None]
    assert session.cost_usd() is None


async def test_a_run_budget_ends_the_turn_capped_with_its_own_message():
    agent = ac.Agent(
        echoing_forever(),
        tools=[echo],
        config=ac.AgentConfig(prices=PRICES, max_run_cost_usd=0.205, max_output_tokens=1),
    )
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("go"))
    assert outcome.status == "capped"
    assert events[-1]["type"] == "run_capped"
    assert outcome.iterations == 2
    assert outcome.cost_usd == pytest.approx(0.2)
    assert outcome.final_text == (
        "Stopped: the next model call (estimated $0.0100) would pass the run's budget of $0.205 ($0.2000 spent)"
    )
    messages = await session.messages()
    assert messages[-1]["message"]["role"] == "assistant"


async def test_a_session_budget_counts_earlier_turns():
    provider = ac.ScriptedProvider([ac.Reply("one", usage=TEN), ac.Reply("never", usage=TEN)])
    agent = ac.Agent(provider, prices=PRICES, max_session_cost_usd=0.105, max_output_tokens=1)
    session = await agent.create_session()
    assert (await session.send("a")).status == "done"
    second = await session.send("b")
    assert second.status == "capped"
    assert second.cost_usd == 0.0
    assert second.session_cost_usd == pytest.approx(0.1)
    assert "would pass the session's budget of $0.105 ($0.1000 spent)" in second.final_text


async def test_a_reopened_session_goes_on_from_what_it_spent(tmp_path):
    db = str(tmp_path / "spend.db")
    first = ac.Agent(
        ac.ScriptedProvider([ac.Reply("one", usage=TEN)]),
        prices=PRICES,
        store=ac.SqliteStore(db),
    )
    session = await first.create_session()
    assert (await session.send("a")).status == "done"
    session_id = session.id
    del session, first

    # Another agent on the same file, as after a restart: the spend and the budget carry on.
    second = ac.Agent(
        ac.ScriptedProvider([ac.Reply("never", usage=TEN)]),
        prices=PRICES,
        store=ac.SqliteStore(db),
        max_session_cost_usd=0.105,
        max_output_tokens=1,
    )
    reopened = await second.open_session(session_id)
    assert reopened.cost_usd() == pytest.approx(0.1)
    outcome = await reopened.send("b")
    assert outcome.status == "capped"
    assert outcome.session_cost_usd == pytest.approx(0.1)
    assert "($0.1000 spent)" in outcome.final_text


def test_a_budget_without_a_price_is_a_config_error():
    with pytest.raises(ac.ConfigError, match='price of model "scripted" is unknown'):
        ac.Agent(ac.ScriptedProvider([]), max_run_cost_usd=1.0)


async def test_a_sub_agents_cost_is_in_the_callers_outcome():
    researcher = ac.Agent(ac.ScriptedProvider([ac.Reply("Paris", usage=TEN)]), prices=PRICES)
    tool = ac.agent_tool("ask", "Ask the researcher.", researcher)

    def choose(request):
        if any(m["role"] == "tool" for m in request["messages"]):
            return ac.Reply("It is Paris.", usage=TEN)
        return ac.Reply(tool_calls=[("ask", {"task": "capital of France"})], usage=TEN)

    lead = ac.Agent(ac.ScriptedProvider.from_fn(choose), tools=[tool], prices=PRICES)
    session = await lead.create_session()
    outcome = await session.send("capital?")
    assert outcome.status == "done", outcome
    assert outcome.cost_usd == pytest.approx(0.3)
    (spent,) = outcome.sub_agents
    assert spent.cost_usd == pytest.approx(0.1)
