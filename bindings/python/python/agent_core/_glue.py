"""Small helpers the native module calls on the asyncio loop thread."""

import asyncio
from typing import Any


def resolve(fut: Any, ok: bool, value: Any) -> None:
    """Completes an asyncio future unless it was cancelled meanwhile."""
    if fut.done():
        return
    if ok:
        fut.set_result(value)
    else:
        fut.set_exception(value)


async def run_callback(func: Any, args: Any, settle: Any) -> None:
    """Runs an ``async def`` callback for Rust and hands its outcome to ``settle`` from the
    task's own last step: a done callback would cost the loop another iteration per call.

    ``func`` is called here, not by the caller, so that a task cancelled before it starts
    leaves no coroutine that was never awaited. An error is settled, not raised: nobody
    retrieves this task's result. A cancellation (``settle(False, None)``), ``SystemExit``
    and ``KeyboardInterrupt`` still end the task as they would have ended the callback's."""
    try:
        value = await func(*args)
    except asyncio.CancelledError:
        settle(False, None)
        raise
    except Exception as exc:
        settle(False, exc)
    except BaseException as exc:
        settle(False, exc)
        raise
    else:
        settle(True, value)
