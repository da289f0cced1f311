"""One Python client of the side-by-side comparison (benches/src/bin/compare.rs).

Runs ``--sessions`` sessions of tool steps plus a final answer against mock-llm at ``--url``,
``--concurrency`` at a time, with a no-op tool written as a ``def`` (``python-def``) or an
``async def`` (``python-async``), and prints one JSON line: calls, wall_s, cpu_s, peak_rss_kib.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import time

import agent_core as ac


@ac.tool(name="step")
def step() -> str:
    """One step."""
    return "ok"


@ac.tool(name="step")
async def async_step() -> str:
    """One step."""
    return "ok"


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", choices=["python-def", "python-async"], required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()

    tool = step if args.variant == "python-def" else async_step
    agent = ac.Agent(
        ac.OpenAICompatible("mock", api_key="", base_url=args.url),
        tools=[tool],
        system_prompt="You are a benchmark.",
        # The mock repeats one call and the tool answers the same: the loop guard (default 3)
        # would rightly end the turn.
        max_repeated_calls=0,
    )

    async def one_session() -> int:
        session = await agent.create_session()
        outcome = await session.send("go")
        if outcome.status != "done" or outcome.tool_calls != args.steps:
            raise SystemExit(f"a session ended {outcome.status}: {outcome.error}")
        return outcome.iterations

    await one_session()  # warm-up
    remaining = args.sessions

    async def worker() -> int:
        nonlocal remaining
        calls = 0
        while remaining > 0:
            remaining -= 1
            calls += await one_session()
        return calls

    cpu0, t0 = time.process_time(), time.perf_counter()
    calls = sum(await asyncio.gather(*(worker() for _ in range(args.concurrency))))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(json.dumps({"calls": calls, "wall_s": wall, "cpu_s": cpu, "peak_rss_kib": peak}))


if __name__ == "__main__":
    asyncio.run(main())
