"""Shared helpers for the agent_core test suite."""

import asyncio
import contextlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Iterator, List

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


@contextlib.contextmanager
def serve_pages(pages: Dict[str, str]) -> Iterator[str]:
    """A loopback HTTP server answering GET for each path of ``pages`` (404 otherwise);
    yields its base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            body = pages.get(self.path)
            if body is None:
                self.send_error(404)
                return
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def allow(req: Any) -> bool:
    """A gate that allows every call."""
    return True


def results_of(events: List[Any]) -> List[Any]:
    """The tool-call results among ``events``."""
    return [e for e in events if e.type in ("tool_call_succeeded", "tool_call_failed")]
