"""Small helpers the native module calls on the asyncio loop thread."""

from typing import Any


def resolve(fut: Any, ok: bool, value: Any) -> None:
    """Completes an asyncio future unless it was cancelled meanwhile."""
    if fut.done():
        return
    if ok:
        fut.set_result(value)
    else:
        fut.set_exception(value)
