"""agent_core.CdpHost: the Rust CDP host driving a real headless Chromium (/usr/bin/chromium,
installed by scripts/lib/ensure-chromium.sh). These tests fail, never skip, without it."""

import asyncio
import os
import signal

import pytest

import agent_core as ac
from conftest import allow, results_of, run_and_collect, serve_pages

CHROMIUM = "/usr/bin/chromium"

PAGES = {
    "/index.html": (
        "<!doctype html><html><head><title>Reading list</title></head><body>"
        "<h1>Reading list</h1><p>Three books about gardens.</p>"
        '<a href="/second.html">Second page</a><button>Save</button></body></html>'
    ),
    "/second.html": (
        "<!doctype html><html><head><title>Second page</title></head><body>"
        "<p>The second page says hello.</p></body></html>"
    ),
}


@pytest.fixture
def site():
    """A loopback HTTP server with the test pages; yields its base URL."""
    with serve_pages(PAGES) as url:
        yield url


def test_chromium_is_installed():
    assert os.access(CHROMIUM, os.X_OK), f"{CHROMIUM} is missing: run scripts/lib/ensure-chromium.sh"


async def test_agent_reads_and_navigates_a_page_in_chromium(site):
    async with await ac.CdpHost.launch(call_timeout_ms=20_000) as host:
        assert host.is_alive()
        assert isinstance(host.pid, int) and host.pid > 0
        assert host.ws_url.startswith("ws://127.0.0.1:")
        assert "CdpHost(" in repr(host)
        tools = ac.page_tools(host, settle_timeout_ms=5000)
        assert {"page_read", "page_navigate", "tabs_list"} <= set(tools.names)
        provider = ac.ScriptedProvider(
            [
                ac.ToolCallStep("page_navigate", {"url": f"{site}/index.html"}),
                ac.ToolCallStep("page_read"),
                ac.ToolCallStep("page_navigate", {"url": f"{site}/second.html"}),
                ac.ToolCallStep("page_read"),
                ac.ToolCallStep("tabs_list"),
                "done",
            ]
        )
        agent = ac.Agent(provider, tools=[tools], gate=allow)
        session = await agent.create_session()
        outcome, events = await run_and_collect(session.send("read the reading list"))
        assert outcome.status == "done", outcome
        results = results_of(events)
        assert [r.name for r in results] == ["page_navigate", "page_read", "page_navigate", "page_read", "tabs_list"]
        assert all(r.type == "tool_call_succeeded" for r in results), results
        assert f"loaded {site}/index.html" in results[0].output
        assert "Reading list" in results[1].output
        assert "Three books about gardens." in results[1].output
        assert "Second page" in results[1].output  # the link, as an element line
        assert f"loaded {site}/second.html" in results[2].output
        assert "The second page says hello." in results[3].output
        assert f"{site}/second.html" in results[4].output
    assert not host.is_alive()
    await host.close()  # closing twice is fine


async def test_navigation_needs_the_gate(site):
    async with await ac.CdpHost.launch() as host:
        provider = ac.ScriptedProvider([ac.ToolCallStep("page_navigate", {"url": f"{site}/index.html"}), "ok"])
        agent = ac.Agent(provider, tools=[host.page_tools()], gate=lambda req: ac.Deny("not now"))
        session = await agent.create_session()
        outcome, events = await run_and_collect(session.send("go"))
        assert outcome.status == "denied", outcome
        assert any(e.type == "tool_call_denied" for e in events)
        assert not results_of(events)


async def test_connect_to_a_running_browser(site):
    async with await ac.CdpHost.launch() as first:
        provider = ac.ScriptedProvider([ac.ToolCallStep("page_navigate", {"url": f"{site}/index.html"}), "ok"])
        agent = ac.Agent(provider, tools=[first.page_tools()], gate=allow)
        outcome, _ = await run_and_collect((await agent.create_session()).send("go"))
        assert outcome.status == "done", outcome

        second = await ac.CdpHost.connect(first.ws_url, call_timeout_ms=10_000)
        assert second.pid is None
        provider = ac.ScriptedProvider([ac.ToolCallStep("tabs_list"), "ok"])
        agent = ac.Agent(provider, tools=[second.page_tools()])
        outcome, events = await run_and_collect((await agent.create_session()).send("list"))
        assert outcome.status == "done", outcome
        assert f"{site}/index.html" in results_of(events)[0].output
        await second.close()
        assert first.is_alive(), "closing a connected host leaves the browser running"


async def run_page_read(host):
    provider = ac.ScriptedProvider([ac.ToolCallStep("page_read"), "never reached"])
    agent = ac.Agent(provider, tools=[host.page_tools()])
    session = await agent.create_session()
    return await asyncio.wait_for(run_and_collect(session.send("read")), timeout=20)


async def test_a_killed_browser_is_a_clear_fatal_error():
    host = await ac.CdpHost.launch()
    try:
        pid = host.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        for _ in range(100):
            if not host.is_alive():
                break
            await asyncio.sleep(0.05)
        assert not host.is_alive()
        outcome, events = await run_page_read(host)
        failed = results_of(events)[0]
        assert failed.type == "tool_call_failed"
        assert failed.fatal is True
        assert "the browser is not reachable" in failed.error, failed.error
        assert outcome.status == "error", outcome
    finally:
        await host.close()


async def test_a_closed_browser_is_a_clear_fatal_error():
    host = await ac.CdpHost.launch()
    await host.close()
    assert not host.is_alive()
    outcome, events = await run_page_read(host)
    failed = results_of(events)[0]
    assert failed.type == "tool_call_failed" and failed.fatal is True
    assert "the browser is not reachable" in failed.error, failed.error
    assert outcome.status == "error", outcome


async def test_a_missing_browser_is_a_host_error(tmp_path):
    with pytest.raises(ac.HostError, match="Chromium not found") as info:
        await ac.CdpHost.launch(executable=tmp_path / "no-chromium")
    assert info.value.host_kind == "other"


async def test_connecting_to_nothing_is_a_disconnected_host_error():
    with pytest.raises(ac.HostError) as info:
        await ac.CdpHost.connect("ws://127.0.0.1:9/devtools/browser/none", call_timeout_ms=5000)
    assert info.value.host_kind in ("disconnected", "timeout")


async def test_launch_with_the_sandbox_off():
    async with await ac.CdpHost.launch(sandbox="off") as host:
        assert host.is_alive()
        provider = ac.ScriptedProvider([ac.ToolCallStep("tabs_list"), "ok"])
        outcome, _ = await run_and_collect((await ac.Agent(provider, tools=[host.page_tools()]).create_session()).send("list"))
        assert outcome.status == "done", outcome
