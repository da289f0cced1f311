"""Sub-agents from Python: agent_tool offers one agent to another; its answer is the tool's
result and what it spent is in the calling turn's outcome, per tool; depth is capped."""

import agent_core as ac
from conftest import run_and_collect


def caller(tool, task):
    def choose(request):
        results = ["".join(p.get("text", "") for p in m["content"]) for m in request["messages"] if m["role"] == "tool"]
        if not results:
            return ac.ToolCallStep(tool, {"task": task})
        return ac.Reply("heard: " + results[-1])

    return ac.ScriptedProvider.from_fn(choose)


async def test_a_sub_agent_answers_and_its_usage_is_reported():
    researcher = ac.Agent(ac.ScriptedProvider([ac.Reply("Paris", usage={"input_tokens": 100, "output_tokens": 1})]))
    tool = ac.agent_tool("ask_researcher", "Ask the researcher.", researcher)
    assert tool.names == ["ask_researcher"]
    assert tool.specs()[0]["parameters"]["required"] == ["task"]
    lead = ac.Agent(caller("ask_researcher", "capital of France?"), tools=[tool])
    outcome, _ = await run_and_collect((await lead.create_session()).send("go"))
    assert outcome.status == "done", outcome
    assert outcome.final_text == "heard: Paris"
    (spent,) = outcome.sub_agents
    assert isinstance(spent, ac.SubAgentUsage)
    assert (spent.tool, spent.calls, spent.iterations, spent.usage.input_tokens) == ("ask_researcher", 1, 1, 100)
    assert outcome.usage.input_tokens >= 100


async def test_depth_is_capped():
    leaf = ac.Agent(ac.ScriptedProvider([ac.Reply("leaf")]))
    middle = ac.Agent(caller("leaf", "go on"), tools=[ac.agent_tool("leaf", "The leaf.", leaf, max_depth=1)])
    top = ac.Agent(caller("middle", "go"), tools=[ac.agent_tool("middle", "The middle.", middle)])
    outcome, _ = await run_and_collect((await top.create_session()).send("go"))
    assert "sub-agents nest at most 1 levels deep" in outcome.final_text, outcome


def test_agent_tool_takes_an_agent():
    import pytest

    with pytest.raises(TypeError, match="takes an agent_core Agent"):
        ac.agent_tool("x", "y", object())


def paying_helper(paid):
    """A sub-agent that pays 5 through a gated tool its gate asks the person about."""

    @ac.tool(gated=True)
    def pay(amount: int) -> str:
        """Pays an amount in cents."""
        paid.append(amount)
        return f"paid {amount}"

    return ac.Agent(answers_each_message("pay", {"amount": 5}, "helper: "), tools=[pay], gate=lambda _r: ac.Ask("Pay?"))


def answers_each_message(tool, args, prefix):
    """Calls ``tool`` for each new user message, then answers with its result."""

    def choose(request):
        last = request["messages"][-1]
        if last["role"] == "user":
            return ac.ToolCallStep(tool, args)
        return ac.Reply(prefix + "".join(p.get("text", "") for p in last["content"]))

    return ac.ScriptedProvider.from_fn(choose)


async def test_a_sub_agents_approval_parks_the_caller_and_the_answer_resumes_both():
    paid = []
    helper = ac.agent_tool("helper", "Pays.", paying_helper(paid))
    lead = ac.Agent(answers_each_message("helper", {"task": "pay 5"}, "heard: "), tools=[helper])
    session = await lead.create_session()
    outcome, _ = await run_and_collect(session.send("pay the bill"))
    assert outcome.status == "awaiting_approval", outcome
    (call,) = outcome.approval.calls
    assert (call.tool, call.arguments, call.prompt) == ("pay", {"amount": 5}, "Pay?")
    (step,) = call.via
    assert isinstance(step, ac.SubAgentStep) and step.tool == "helper"
    assert call.call_id.startswith(step.call_id + "/") and step.session_id != session.id
    assert paid == []

    run = session.resolve_approval(outcome.approval.id, {call.call_id: ac.Reject("not today")})
    outcome, _ = await run_and_collect(run)
    assert outcome.status == "done", outcome
    assert outcome.final_text.startswith("heard: helper: ") and "not today" in outcome.final_text
    assert paid == []

    outcome, _ = await run_and_collect(session.send("pay again"))
    (call,) = outcome.approval.calls
    outcome, _ = await run_and_collect(session.resolve_approval(outcome.approval.id, {call.call_id: "approve"}))
    assert outcome.final_text == "heard: helper: paid 5", outcome
    assert paid == [5]


async def test_a_typed_sub_agent_answers_with_its_checked_json():
    from dataclasses import dataclass

    @dataclass
    class City:
        name: str
        population: int

    import json

    provider = ac.ScriptedProvider([json.dumps({"name": "Oslo", "population": 709000})], record_requests=True)
    researcher = ac.Agent(provider)
    lead = ac.Agent(caller("city", "the capital of Norway?"), tools=[ac.agent_tool("city", "Finds a city.", researcher, output=City)])
    outcome, _ = await run_and_collect((await lead.create_session()).send("go"))
    assert outcome.status == "done", outcome
    assert json.loads(outcome.final_text.removeprefix("heard: ")) == {"name": "Oslo", "population": 709000}
    assert provider.requests()[0]["output_schema"]["name"] == "City"
