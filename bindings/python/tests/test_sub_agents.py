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
