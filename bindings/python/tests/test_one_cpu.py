"""A process allowed one CPU runs the runtime on one thread of its own (a current-thread
runtime) instead of a multi-thread one: the same behaviour, checked by running the concurrency
and cancellation suites in a child process pinned to one CPU."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import agent_core  # noqa: F401 (sets up the runtime of this process)

HERE = Path(__file__).parent


def pin_to_one_cpu() -> None:
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def thread_names() -> "list[str]":
    tasks = Path("/proc/self/task")
    return [(t / "comm").read_text().strip() for t in tasks.iterdir()]


def test_on_one_cpu_the_runtime_has_a_thread_of_its_own(tmp_path):
    script = tmp_path / "one_cpu.py"
    script.write_text(
        textwrap.dedent(
            """
            import asyncio, json, time
            from pathlib import Path
            import agent_core as ac

            @ac.tool(name="slow")
            def slow(n: int) -> str:
                \"\"\"Blocks a little.\"\"\"
                time.sleep(0.01)
                return f"slow {n}"

            @ac.tool(name="later")
            async def later(n: int) -> str:
                \"\"\"Waits a little.\"\"\"
                await asyncio.sleep(0.01)
                return f"later {n}"

            async def main():
                script = [ac.Reply(tool_calls=[("slow", {"n": 1}), ("later", {"n": 2})]), "done"] * 20
                agent = ac.Agent(ac.ScriptedProvider(script), tools=[slow, later])
                sessions = [await agent.create_session() for _ in range(20)]
                outcomes = await asyncio.gather(*(s.send("go") for s in sessions))
                names = [(t / "comm").read_text().strip() for t in Path("/proc/self/task").iterdir()]
                print(json.dumps({
                    "statuses": sorted({o.status for o in outcomes}),
                    "tool_calls": sum(o.tool_calls for o in outcomes),
                    "threads": names,
                }))

            asyncio.run(main())
            """
        )
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, preexec_fn=pin_to_one_cpu
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["statuses"] == ["done"], report
    assert report["tool_calls"] == 40, report
    # Thread names are cut to 15 bytes by the kernel.
    assert "agent-core-runt" in report["threads"], report["threads"]

    # This process, with every CPU it was given (the runtime is set up at import): a
    # multi-thread runtime, no such thread.
    if len(os.sched_getaffinity(0)) > 1:
        assert "agent-core-runt" not in thread_names()


def test_the_concurrency_and_cancel_suites_pass_on_one_cpu():
    suites = [str(HERE / "test_concurrency.py"), str(HERE / "test_cancel.py")]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *suites],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=HERE,
        preexec_fn=pin_to_one_cpu,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and " failed" not in done.stdout, done.stdout[-2000:]
