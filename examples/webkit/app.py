"""The WebKitGTK example: a browser window whose tabs an agent_core agent can read and act on.

    python examples/webkit/app.py [--url URL] [--out DIR] [--links-task] [--exit]

Type an address in the entry to load it; type ``; message`` to talk to the agent (the
embedded-agent plan's URL-bar routing). Without LLM_* variables the agent is the offline
scripted model, which knows one task: "save the links of this page" (to DIR/links.txt). With
LLM_PROVIDER, LLM_MODEL, LLM_API_KEY (and LLM_BASE_URL) set, a real model drives it.
``--links-task`` types that request itself; ``--exit`` quits when it is done (tests, CI).
Needs a display: run under ``xvfb-run -a`` when headless.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

import agent_core as ac  # noqa: E402
from links_task import FixtureServer, build_agent  # noqa: E402
from webkit_host import WebKitHost  # noqa: E402

LINKS_REQUEST = "save the links of this page to links.txt"


class App:
    """The window, the agent, and one chat session routed from the entry."""

    def __init__(self, host: WebKitHost, agent: ac.Agent) -> None:
        self.host = host
        self.agent = agent
        self.session: Optional[ac.Session] = None
        host.on_chat = self._on_chat_from_gtk

    def _on_chat_from_gtk(self, message: str) -> None:
        asyncio.run_coroutine_threadsafe(self.chat(message), self.host.loop)

    async def chat(self, message: str) -> ac.Outcome:
        """Sends a message to the agent and shows the run's events in the log."""
        if self.session is None:
            self.session = await self.agent.create_session()
        self.host.log(f"you: {message}")
        run = self.session.send(message)
        async for event in run.events():
            if event.type == "tool_call_started":
                self.host.log(f"  -> {event.name} {event.arguments}")
            elif event.type == "tool_call_failed":
                self.host.log(f"  !! {event.name}: {event.error[:200]}")
            elif event.type == "tool_call_denied":
                self.host.log(f"  denied {event.name}: {event.reason}")
        outcome = await run
        self.host.log(f"agent ({outcome.status}): {outcome.final_text or outcome.error or ''}")
        return outcome


def provider() -> Optional[ac.Provider]:
    if os.environ.get("LLM_PROVIDER"):
        return ac.provider_from_env()
    return None


async def run_links_task(out_dir: Path, url: Optional[str] = None, exit_when_done: bool = True) -> ac.Outcome:
    """Opens the page in WebKit and asks the agent (through the entry's routing) to save its
    links to ``out_dir/links.txt``. Returns the outcome."""
    server = FixtureServer()
    host = WebKitHost(asyncio.get_running_loop())
    try:
        app = App(host, build_agent(host, out_dir, provider()))
        await host.navigate(None, url or server.url("demo-links.html"))
        done: asyncio.Future[ac.Outcome] = asyncio.get_running_loop().create_future()

        async def typed(message: str) -> None:
            outcome = await app.chat(message)
            if not done.done():
                done.set_result(outcome)

        # Exactly what typing "; save the links ..." in the entry does.
        host.on_chat = lambda m: asyncio.run_coroutine_threadsafe(typed(m), host.loop)
        host.on_chat(LINKS_REQUEST)
        outcome = await asyncio.wait_for(done, 120)
        if not exit_when_done:
            host.on_chat = app._on_chat_from_gtk
            await asyncio.Event().wait()
        return outcome
    finally:
        if exit_when_done:
            host.close()
            server.close()


async def interactive(url: Optional[str], out_dir: Path) -> None:
    server = FixtureServer()
    host = WebKitHost(asyncio.get_running_loop())
    App(host, build_agent(host, out_dir, provider()))
    await host.navigate(None, url or server.url("demo-links.html"))
    host.log("Type an address, or ; message for the agent (try: ; save the links of this page)")
    while not host.closed.is_set():
        await asyncio.sleep(0.5)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="page to open (default: the local demo page)")
    parser.add_argument("--out", default=str(Path.home() / "temp"), help="directory for links.txt")
    parser.add_argument("--links-task", action="store_true", help="run the links task")
    parser.add_argument("--exit", action="store_true", help="quit after the links task")
    args = parser.parse_args()
    out_dir = Path(args.out).expanduser()
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.links_task:
        outcome = asyncio.run(run_links_task(out_dir, args.url, exit_when_done=args.exit))
        print(f"{outcome.status}: {outcome.final_text}")
        print((out_dir / "links.txt").read_text() if (out_dir / "links.txt").exists() else "(no file)")
        return 0 if outcome.status == "done" else 1
    asyncio.run(interactive(args.url, out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
