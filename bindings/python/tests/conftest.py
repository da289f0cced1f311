"""Shared helpers for the agent_core test suite."""

import asyncio
from typing import Any, Dict, List

import pytest

import agent_core as ac


async def run_and_collect(run: ac.Run) -> "tuple[ac.Outcome, List[ac.Event]]":
    """Collects every event of a run and its outcome."""
    events = [e async for e in run.events()]
    outcome = await run
    return outcome, events


def types(events: List[Dict[str, Any]]) -> List[str]:
    return [e["type"] for e in events]


@pytest.fixture
def collect():
    return run_and_collect


async def wait_for_state(run: ac.Run, state: str, timeout: float = 5.0) -> None:
    """Polls run.status() until it reaches `state`."""
    deadline = asyncio.get_running_loop().time() + timeout
    while run.status().state != state:
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"run never reached {state!r}; status {run.status()}")
        await asyncio.sleep(0.005)
