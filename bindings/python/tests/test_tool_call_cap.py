"""The tool-call cap per turn, as a Python user sets it: left out it is 12, a number sets
another cap, and None (passed explicitly, in any of the ways AgentConfig keys are given) means
no cap at all."""

import pytest

import agent_core as ac


def counting_parts(calls, stop_after=None):
    """A model that calls the `count` tool once per model call, until it has called it
    `stop_after` times (never, when None), then answers; and the tool."""

    @ac.tool
    def count() -> str:
        """Counts one call."""
        calls.append(1)
        return str(len(calls))

    def choose(request):
        made = sum(1 for m in request["messages"] if m["role"] == "tool")
        if stop_after is not None and made >= stop_after:
            return ac.Reply(f"counted {made}")
        return ac.ToolCallStep("count")

    return ac.ScriptedProvider.from_fn(choose), count


def counting_agent(calls, stop_after=None, **settings):
    provider, count = counting_parts(calls, stop_after)
    return ac.Agent(provider, tools=[count], **settings)


async def run(agent):
    return await (await agent.create_session()).send("count")


async def test_left_out_the_cap_is_12():
    calls = []
    agent = counting_agent(calls)
    assert agent.config["max_tool_calls"] == 12
    outcome = await run(agent)
    assert outcome.status == "capped", outcome
    assert len(calls) == 12
    assert "12 per turn" in outcome.final_text
    assert ac.AgentConfig().max_tool_calls is not None, "the dataclass leaves the default alone too"
    assert counting_agent([], config=ac.AgentConfig()).config["max_tool_calls"] == 12


@pytest.mark.parametrize("how", ["keyword", "dataclass", "dict"])
async def test_a_number_is_the_cap(how):
    calls = []
    setting = {
        "keyword": {"max_tool_calls": 3},
        "dataclass": {"config": ac.AgentConfig(max_tool_calls=3)},
        "dict": {"config": {"max_tool_calls": 3}},
    }[how]
    agent = counting_agent(calls, **setting)
    assert agent.config["max_tool_calls"] == 3
    outcome = await run(agent)
    assert outcome.status == "capped" and len(calls) == 3, outcome


@pytest.mark.parametrize("how", ["keyword", "dataclass", "dict"])
async def test_none_means_no_cap(how):
    calls = []
    setting = {
        "keyword": {"max_tool_calls": None},
        "dataclass": {"config": ac.AgentConfig(max_tool_calls=None)},
        "dict": {"config": {"max_tool_calls": None}},
    }[how]
    agent = counting_agent(calls, stop_after=20, **setting)
    assert agent.config["max_tool_calls"] is None
    outcome = await run(agent)
    assert (outcome.status, outcome.final_text) == ("done", "counted 20"), outcome
    assert len(calls) == 20


async def test_none_elsewhere_still_keeps_the_default():
    agent = counting_agent([], max_iterations=None, config={"max_iterations": None, "max_tool_calls": 5})
    assert agent.config["max_iterations"] == 100 and agent.config["max_tool_calls"] == 5
    # A keyword given as None does not undo the config's cap either way round.
    assert counting_agent([], config={"max_tool_calls": 5}, max_iterations=None).config["max_tool_calls"] == 5


@pytest.mark.parametrize("cap, status, made", [(None, "done", 20), (4, "capped", 4)])
async def test_tab_agents_take_the_same_setting(cap, status, made):
    calls = []
    provider, count = counting_parts(calls, stop_after=20)
    hub = await ac.TabHub.create(provider, tools=[count], config=ac.AgentConfig(max_tool_calls=cap))
    tab = await hub.open_tab()
    outcome = await (await hub.deliver(tab, "count")).run
    assert outcome.status == status and len(calls) == made, outcome
