"""The module first imported by a thread that then exits, and used by other threads after."""

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import asyncio, importlib, threading

    def turn(i):
        ac = importlib.import_module("agent_core")

        async def main():
            agent = ac.Agent(ac.ScriptedProvider(["hi"]))
            session = await agent.create_session()
            return (await session.send("x")).status

        print(i, asyncio.run(main()), flush=True)

    for i in range(4):
        thread = threading.Thread(target=turn, args=(i,))
        thread.start()
        thread.join()
    """
)


def test_first_imported_in_a_thread_that_exits_then_used_by_others():
    # The first thread to allocate through the extension's allocator was taken for the
    # process's main thread: once it had exited, the next thread to use the module crashed
    # (SIGSEGV) in the allocator's set-up of that thread. A child process, because this one
    # imported the module on its main thread already.
    child = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert child.returncode == 0, (child.returncode, child.stderr)
    assert child.stdout.splitlines() == [f"{i} done" for i in range(4)]
