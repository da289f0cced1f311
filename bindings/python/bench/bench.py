"""Benchmarks of the Python binding (run with a release build, e.g. the one
scripts/test-python installs):

    ~/.cache/agent-core/py-venv/bin/python bindings/python/bench/bench.py [--mock-llm PATH]

1. import time of ``agent_core`` (a fresh interpreter each time, minus an empty one);
2. per-step overhead in-process: the scripted provider calls a Python no-op tool N times, then
   answers; ms per step (one model call + one tool call) for a ``def`` and an ``async def``
   tool, and ms per model call with no tool;
3. whole-process, when the workspace's ``mock-llm`` (benches/) is available: the agent talks to
   that OpenAI-compatible loopback server over HTTP, with a Python no-op tool; ms per model call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import agent_core as ac

ROOT = Path(__file__).resolve().parents[3]


def import_time(runs: int = 15) -> Dict[str, float]:
    """Median cumulative import times from ``python -X importtime -c "import agent_core"``."""

    def once() -> Dict[str, float]:
        out = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import agent_core"], capture_output=True, text=True, check=True
        ).stderr
        cumulative = {}
        for line in out.splitlines():
            parts = [p.strip() for p in line.split("|")]
            if len(parts) == 3 and parts[1].isdigit():
                cumulative[parts[2]] = int(parts[1]) / 1000
        return {"agent_core": cumulative.get("agent_core", 0.0), "asyncio": cumulative.get("asyncio", 0.0)}

    samples = [once() for _ in range(runs)]
    total = statistics.median(s["agent_core"] for s in samples)
    asyncio_ms = statistics.median(s["asyncio"] for s in samples)
    return {"import_agent_core_ms": total, "of_which_asyncio_ms": asyncio_ms}


@ac.tool(parallel_safe=True)
def noop() -> str:
    """Does nothing."""
    return "ok"


@ac.tool(name="noop", parallel_safe=True)
async def anoop() -> str:
    """Does nothing, asynchronously."""
    return "ok"


async def per_step(tool: Optional[ac.Tool], steps: int, sessions: int) -> float:
    """Median ms per iteration over `sessions` runs of `steps` tool steps plus the answer."""
    timings = []
    for _ in range(sessions):
        if tool is None:
            script: List[Any] = ["answer"] * (steps + 1)
            provider = ac.ScriptedProvider(script)
            agent = ac.Agent(provider, max_iterations=steps + 10)
            session = await agent.create_session()
            start = time.perf_counter()
            for _ in range(steps + 1):
                outcome = await session.send("go")
                assert outcome.status == "done", outcome
            timings.append((time.perf_counter() - start) / (steps + 1))
            continue
        script = [ac.ToolCallStep("noop")] * steps + ["done"]
        # The script repeats one call: the loop guard (default 3) would end the turn.
        agent = ac.Agent(ac.ScriptedProvider(script), tools=[tool], max_iterations=steps + 10, max_repeated_calls=0)
        session = await agent.create_session()
        start = time.perf_counter()
        outcome = await session.send("go")
        elapsed = time.perf_counter() - start
        assert outcome.status == "done" and outcome.iterations == steps + 1, outcome
        timings.append(elapsed / (steps + 1))
    return statistics.median(timings) * 1000


def start_mock(path: str, steps: int) -> "tuple[subprocess.Popen[str], str]":
    proc = subprocess.Popen(
        [path, "--tool-steps", str(steps), "--tool", "noop", "--max-seconds", "600"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "listening on" not in line:
        proc.kill()
        raise RuntimeError(f"mock-llm did not start: {line!r}")
    return proc, line.split("listening on", 1)[1].strip()


async def whole_process(mock: str, steps: int, sessions: int, rounds: int = 5) -> Dict[str, float]:
    """Sequential sessions of `steps` tool steps + the answer against mock-llm; the median
    (and best) round's ms per model call."""
    proc, base_url = start_mock(mock, steps)
    try:
        agent = ac.Agent(
            ac.OpenAICompatible("mock", api_key="", base_url=base_url),
            tools=[noop],
            max_iterations=steps + 10,
            max_repeated_calls=0,  # the mock repeats one call
        )
        walls, cpus, calls = [], [], 0
        for _ in range(rounds):
            calls = 0
            cpu0 = time.process_time()
            start = time.perf_counter()
            for _ in range(sessions):
                session = await agent.create_session()
                outcome = await session.send("go")
                assert outcome.status == "done", outcome
                calls += outcome.iterations
            walls.append((time.perf_counter() - start) / calls * 1000)
            cpus.append((time.process_time() - cpu0) / calls * 1000)
        return {
            "ms_per_model_call": statistics.median(walls),
            "best_ms_per_model_call": min(walls),
            "cpu_ms_per_model_call": statistics.median(cpus),
            "calls": calls,
        }
    finally:
        proc.kill()
        proc.wait()


def find_mock(explicit: Optional[str]) -> Optional[str]:
    if explicit:
        return explicit
    if not (ROOT / "benches" / "Cargo.toml").exists() or shutil.which("cargo") is None:
        return None
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    built = subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "agent-bench", "--bin", "mock-llm"], cwd=ROOT
    )
    if built.returncode != 0:
        return None
    for candidate in target.glob("**/release/mock-llm"):
        return str(candidate)
    return None


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=7)
    parser.add_argument("--mock-llm", help="path of the mock-llm binary (default: build it from benches/)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: Dict[str, Any] = {"python": sys.version.split()[0]}
    results["import"] = import_time()
    await per_step(noop, 20, 1)  # warm-up
    results["in_process_ms_per_step"] = {
        "model_call_only": await per_step(None, args.steps, args.sessions),
        "def_noop_tool": await per_step(noop, args.steps, args.sessions),
        "async_def_noop_tool": await per_step(anoop, args.steps, args.sessions),
    }
    mock = find_mock(args.mock_llm)
    if mock:
        results["whole_process_openai_mock"] = await whole_process(mock, 10, 50)
    else:
        results["whole_process_openai_mock"] = "skipped: mock-llm not available (benches/ not built)"
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"Python {results['python']}")
    imp = results["import"]
    print(
        f"import agent_core: {imp['import_agent_core_ms']:.1f} ms (median of -X importtime), of which "
        f"{imp['of_which_asyncio_ms']:.1f} ms is importing asyncio"
    )
    for name, ms in results["in_process_ms_per_step"].items():
        print(f"in-process, scripted provider, {name}: {ms:.3f} ms per step")
    wp = results["whole_process_openai_mock"]
    if isinstance(wp, dict):
        print(
            f"whole process vs mock OpenAI server (5 rounds of {wp['calls']} model calls): "
            f"{wp['ms_per_model_call']:.3f} ms per model call (median; best {wp['best_ms_per_model_call']:.3f}), "
            f"{wp['cpu_ms_per_model_call']:.3f} CPU ms of this process"
        )
    else:
        print(wp)


if __name__ == "__main__":
    asyncio.run(main())
