"""The hostile-input options from Python: page_scrape's address policy, shell_exec's
environment, fs_write's cap, the MCP server's bearer token and origin check, the MCP client's
request timeout, the tab hub's held-message cap and the CDP host's sandbox option. Every test
leaves the defaults alone and opts in explicitly where it needs more."""

import asyncio
import json
import socket
import urllib.error
import urllib.request

import pytest

import agent_core as ac
from conftest import allow, results_of, run_and_collect, serve_pages
from test_browser_host import StubHost

PAGE = "<!doctype html><html><body><p>The fixture page says hello.</p></body></html>"


@pytest.fixture
def site():
    """A loopback HTTP server with one page; yields its base URL."""
    with serve_pages({"/page.html": PAGE}) as url:
        yield url


async def run_one(tools, name, arguments, gate=allow):
    provider = ac.ScriptedProvider([ac.ToolCallStep(name, arguments), "done"])
    agent = ac.Agent(provider, tools=[tools], gate=gate)
    session = await agent.create_session()
    return await run_and_collect(session.send("go"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- page_scrape ------------------------------------------------------------------------------


async def test_page_scrape_is_gated_by_default(site):
    outcome, events = await run_one(ac.page_tools(StubHost(), scrape_loopback_http=True), "page_scrape",
                                    {"url": f"{site}/page.html"}, gate=None)
    assert outcome.status == "denied", outcome
    assert any(e.type == "tool_call_denied" for e in events)


async def test_page_scrape_refuses_loopback_http_by_default(site):
    outcome, events = await run_one(ac.page_tools(StubHost()), "page_scrape", {"url": f"{site}/page.html"})
    assert outcome.status == "done", outcome
    [result] = results_of(events)
    assert result.type == "tool_call_failed"
    assert "https addresses only" in result.error
    # Loopback over https is refused by address, before any connection.
    outcome, events = await run_one(ac.page_tools(StubHost()), "page_scrape",
                                    {"url": f"https://127.0.0.1:{free_port()}/"})
    [result] = results_of(events)
    assert result.type == "tool_call_failed"
    assert "loopback address" in result.error


async def test_page_scrape_fetches_loopback_http_when_allowed(site):
    tools = ac.page_tools(StubHost(), scrape_loopback_http=True)
    outcome, events = await run_one(tools, "page_scrape", {"url": f"{site}/page.html"})
    assert outcome.status == "done", outcome
    [result] = results_of(events)
    assert result.type == "tool_call_succeeded", result
    assert "The fixture page says hello." in result.output


async def test_page_scrape_allow_loopback_lifts_the_address_check_only():
    # https to a closed loopback port: no longer refused as loopback, fails to connect instead.
    tools = ac.page_tools(StubHost(), scrape={"allow_loopback": True})
    _, events = await run_one(tools, "page_scrape", {"url": f"https://127.0.0.1:{free_port()}/"})
    [result] = results_of(events)
    assert result.type == "tool_call_failed"
    assert "loopback address" not in result.error
    # Still https only.
    _, events = await run_one(tools, "page_scrape", {"url": f"http://127.0.0.1:{free_port()}/"})
    assert "https addresses only" in results_of(events)[0].error


async def test_page_scrape_private_and_extra_roots_options_are_accepted():
    tools = ac.page_tools(StubHost(), scrape={"allow_private": True, "extra_roots_pem": []})
    _, events = await run_one(tools, "page_scrape", {"url": f"https://127.0.0.1:{free_port()}/"})
    assert "loopback address" not in results_of(events)[0].error
    bad_root = ac.page_tools(StubHost(), scrape={"allow_loopback": True, "extra_roots_pem": ["not a certificate"]})
    _, events = await run_one(bad_root, "page_scrape", {"url": f"https://127.0.0.1:{free_port()}/"})
    [result] = results_of(events)
    assert result.type == "tool_call_failed"
    assert "extra root certificate is invalid" in result.error


async def test_cdp_host_rejects_an_unknown_sandbox_mode():
    with pytest.raises(ac.ConfigError, match="unknown variant `maybe`, expected one of `auto`, `on`, `off`"):
        await ac.CdpHost.launch(sandbox="maybe")  # type: ignore[arg-type]


# --- fs tools ---------------------------------------------------------------------------------

ECHO_SECRET = {"command": 'echo "secret=${AGENT_CORE_TEST_SECRET:-unset} fixed=${AGENT_CORE_TEST_FIXED:-unset}"'}


async def test_shell_exec_does_not_inherit_other_variables_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_CORE_TEST_SECRET", "s3cret")
    tools = ac.fs_tools(tmp_path, gated={"shell_exec": False})
    _, events = await run_one(tools, "shell_exec", ECHO_SECRET)
    [result] = results_of(events)
    assert result.type == "tool_call_succeeded", result
    assert "secret=unset" in result.output
    assert "s3cret" not in result.output


async def test_shell_exec_passthrough_and_set(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_CORE_TEST_SECRET", "s3cret")
    env = ac.ShellEnv(passthrough=["AGENT_CORE_TEST_SECRET"], set={"AGENT_CORE_TEST_FIXED": "yes"})
    tools = ac.fs_tools(tmp_path, gated={"shell_exec": False}, shell_env=env)
    _, events = await run_one(tools, "shell_exec", ECHO_SECRET)
    [result] = results_of(events)
    assert "secret=s3cret fixed=yes" in result.output
    everything = ac.fs_tools(tmp_path, gated={"shell_exec": False}, shell_env=ac.ShellEnv(inherit_all=True))
    _, events = await run_one(everything, "shell_exec", ECHO_SECRET)
    assert "secret=s3cret fixed=unset" in results_of(events)[0].output


async def test_fs_write_over_the_cap_is_refused(tmp_path):
    tools = ac.fs_tools(tmp_path, gated={"fs_write": False}, max_write_bytes=16)
    _, events = await run_one(tools, "fs_write", {"path": "big.txt", "content": "x" * 17})
    [result] = results_of(events)
    assert result.type == "tool_call_failed"
    assert "cap of 16 bytes" in result.error
    assert not (tmp_path / "big.txt").exists()
    _, events = await run_one(tools, "fs_write", {"path": "ok.txt", "content": "x" * 16})
    assert results_of(events)[0].type == "tool_call_succeeded"
    assert (tmp_path / "ok.txt").read_text() == "x" * 16


# --- MCP --------------------------------------------------------------------------------------


@ac.tool
def shout(text: str) -> str:
    """Shouts.

    Args:
        text: What to shout.
    """
    return text.upper()


def post(url, headers):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


async def test_mcp_server_without_token_by_default():
    async with await ac.serve_mcp_http([shout]) as server:
        assert server.bearer_token is None


async def test_mcp_server_bearer_token_refuses_clients_without_it():
    async with await ac.serve_mcp_http([shout], bearer_token=True) as server:
        token = server.bearer_token
        assert token is not None and len(token) == 64
        loop = asyncio.get_running_loop()
        assert await loop.run_in_executor(None, post, server.url, {}) == 401
        assert await loop.run_in_executor(None, post, server.url, {"Authorization": "Bearer wrong"}) == 401
        with pytest.raises(ac.McpError):
            await ac.McpClient.connect("local", url=server.url, connect_timeout_ms=10_000)
        headers = {"Authorization": f"Bearer {token}"}
        async with await ac.McpClient.connect("local", url=server.url, headers=headers, request_timeout_ms=10_000) as client:
            assert client.tool_names == ["local__shout"]
            provider = ac.ScriptedProvider([ac.ToolCallStep("local__shout", {"text": "hi"}), "done"])
            agent = ac.Agent(provider, tools=[client.tools()], gate=allow)
            outcome, events = await run_and_collect((await agent.create_session()).send("go"))
            assert outcome.status == "done", outcome
            assert "HI" in results_of(events)[0].output


async def test_mcp_server_fixed_token_and_origins():
    token = ac.new_bearer_token()
    assert len(token) == 64 and token != ac.new_bearer_token()
    async with await ac.serve_mcp_http([shout], bearer_token=token,
                                       allowed_origins=["https://app.example.com"]) as server:
        assert server.bearer_token == token
        loop = asyncio.get_running_loop()
        auth = {"Authorization": f"Bearer {token}"}
        assert await loop.run_in_executor(None, post, server.url, {**auth, "Origin": "https://evil.example"}) == 403
        assert await loop.run_in_executor(
            None, post, server.url, {**auth, "Origin": "https://app.example.com"}
        ) not in (401, 403)


async def test_mcp_server_bad_token_or_origin_is_a_config_error():
    with pytest.raises(ac.ConfigError, match="bearer token"):
        await ac.serve_mcp_http([shout], bearer_token="has spaces")
    with pytest.raises(ac.ConfigError, match="origin"):
        await ac.serve_mcp_http([shout], allowed_origins=["not an origin"])


# --- tabs -------------------------------------------------------------------------------------


async def test_tab_queue_full_is_a_typed_error():
    hub = await ac.TabHub.create(ac.ScriptedProvider(["ok"] * 4), auto_wake_budget=0, max_held_messages=2)
    tab = await hub.open_tab()
    for text in ("one", "two"):
        d = await hub.deliver(tab, text, origin="agent")
        assert d.status == "held"
    with pytest.raises(ac.TabQueueFullError) as info:
        await hub.deliver(tab, "three", origin="agent")
    assert isinstance(info.value, ac.TabError)
    assert info.value.kind == "tab.queue_full"
    assert "max_held_messages" in str(info.value)
    # The person's messages are never refused.
    d = await hub.deliver(tab, "from the person")
    assert d.status == "started"
    assert d.run is not None
    await d.run
