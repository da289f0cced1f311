"""The README's Python quickstart (scripts/test-python runs this file as written)."""

import asyncio

import agent_core as ac


@ac.tool
def add(a: int, b: int) -> int:
    """Adds two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


@ac.tool(gated=True)
async def save_note(text: str) -> str:
    """Saves a note (gated: the gate must allow each call)."""
    return f"saved {len(text)} characters"


async def allow_notes(request: ac.GateRequest) -> bool:
    print(f"  gate: {request.tool}({request.arguments}) -> allowed")
    return True


async def main() -> None:
    # ScriptedProvider replays a fixed script; it is not a model. For a real one use e.g.
    # ac.provider_from_env() (LLM_PROVIDER, LLM_MODEL, LLM_API_KEY, LLM_BASE_URL).
    provider = ac.ScriptedProvider(
        [
            ac.ToolCallStep("add", {"a": 2, "b": 3}),
            ac.ToolCallStep("save_note", {"text": "2 + 3 = 5"}),
            "2 + 3 = 5, and I saved a note about it.",
        ]
    )
    agent = ac.Agent(
        provider,
        tools=[add, save_note],
        gate=allow_notes,
        system_prompt="You are a helpful assistant.",
        config=ac.AgentConfig(max_iterations=10, tool_timeout_ms=30_000),
    )
    session = await agent.create_session()
    run = session.send("What is 2 + 3? Save a note of it.")
    async for event in run.events():
        if event.type == "tool_call_started":
            print(f"  tool: {event.name}({event.arguments})")
        elif event.type == "tool_call_succeeded":
            print(f"  result: {event.output}")
    outcome = await run
    print(outcome.status, "-", outcome.final_text)
    assert outcome.status == "done"


asyncio.run(main())
