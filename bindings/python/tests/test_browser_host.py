"""A Python BrowserHost stub behind the Rust page tools: the plumbing (calls, arguments,
results, sync and async methods, error mapping). The real browser runs in examples/webkit."""

import asyncio

import pytest

import agent_core as ac
from conftest import run_and_collect


class StubHost:
    """Records calls; async and sync methods mixed on purpose."""

    def __init__(self):
        self.calls = []
        self.tab_list = [{"id": "t1", "url": "http://127.0.0.1/a", "title": "A", "active": True}]
        self.fail_evaluate = None

    async def evaluate(self, tab, expression):
        self.calls.append(("evaluate", tab, expression[:40]))
        await asyncio.sleep(0)
        if self.fail_evaluate:
            raise self.fail_evaluate
        if expression == "location.href":
            return next(t["url"] for t in self.tab_list if t["active"])
        return {"ok": True}

    async def navigate(self, tab, url):
        self.calls.append(("navigate", tab, url))
        for t in self.tab_list:
            if t["active"]:
                t["url"] = url

    def wait_settled(self, tab, timeout):
        self.calls.append(("wait_settled", tab, timeout))

    def tabs(self):
        self.calls.append(("tabs",))
        return list(self.tab_list)

    async def open_tab(self, url):
        self.calls.append(("open_tab", url))
        for t in self.tab_list:
            t["active"] = False
        tab = {"id": f"t{len(self.tab_list) + 1}", "url": url or "about:blank", "title": "", "active": True}
        self.tab_list.append(tab)
        return tab

    def close_tab(self, tab):
        self.calls.append(("close_tab", tab))
        if tab not in [t["id"] for t in self.tab_list]:
            raise ac.HostError(f"no tab {tab}", host_kind="no_such_tab")
        self.tab_list = [t for t in self.tab_list if t["id"] != tab]

    def activate_tab(self, tab):
        self.calls.append(("activate_tab", tab))
        for t in self.tab_list:
            t["active"] = t["id"] == tab


def allow(req):
    return True


async def test_page_tools_run_through_a_python_host():
    host = StubHost()
    assert isinstance(host, ac.BrowserHost)
    tools = ac.page_tools(host, settle_timeout_ms=2000)
    assert {"page_read", "page_navigate", "page_click", "tabs_list", "tab_open", "tab_close"} <= set(tools.names)
    provider = ac.ScriptedProvider(
        [
            ac.ToolCallStep("tabs_list"),
            ac.ToolCallStep("page_navigate", {"url": "http://127.0.0.1:8000/links.html"}),
            ac.ToolCallStep("tab_open", {"url": "http://127.0.0.1:8000/b.html"}),
            ac.ToolCallStep("tab_close", {"id": "t9"}),
            "done",
        ]
    )
    agent = ac.Agent(provider, tools=[tools], gate=allow)
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("go"))
    assert outcome.status == "done", outcome
    results = {e.name: e for e in events if e.type in ("tool_call_succeeded", "tool_call_failed")}
    assert "http://127.0.0.1/a" in results["tabs_list"].output
    assert results["page_navigate"].type == "tool_call_succeeded"
    assert "127.0.0.1:8000/links.html" in results["page_navigate"].output
    assert ("navigate", None, "http://127.0.0.1:8000/links.html") in host.calls
    assert any(c[0] == "wait_settled" and c[2] == 2.0 for c in host.calls)
    assert ("open_tab", "http://127.0.0.1:8000/b.html") in host.calls
    assert results["tab_close"].type == "tool_call_failed"
    assert "no tab with id" in results["tab_close"].error


@pytest.mark.parametrize(
    "error, fatal",
    [
        (ac.HostError("ReferenceError: x is not defined", host_kind="script"), False),
        (RuntimeError("weird"), False),
        (ConnectionError("the web view was destroyed"), True),
    ],
)
async def test_host_errors_map_to_tool_errors(error, fatal):
    host = StubHost()
    host.fail_evaluate = error
    provider = ac.ScriptedProvider([ac.ToolCallStep("page_read"), "recovered"])
    agent = ac.Agent(provider, tools=[ac.page_tools(host)])
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("read"))
    failed = next(e for e in events if e.type == "tool_call_failed")
    assert failed.fatal is fatal
    assert str(error) in failed.error
    assert outcome.status == ("error" if fatal else "done")


def test_missing_methods_are_a_config_error():
    class Half:
        async def evaluate(self, tab, expression):
            return None

    with pytest.raises(ac.ConfigError, match="navigate"):
        ac.page_tools(Half())


async def test_page_tools_bound_to_a_tab_pass_its_id_to_the_host():
    host = StubHost()
    host.tab_list.append({"id": "t2", "url": "http://127.0.0.1/b", "title": "B", "active": False})
    provider = ac.ScriptedProvider(
        [ac.ToolCallStep("page_navigate", {"url": "http://127.0.0.1:8000/links.html"}), "done"]
    )
    agent = ac.Agent(provider, tools=[ac.page_tools(host, tab="t2")], gate=allow)
    outcome = await (await agent.create_session()).send("go")
    assert outcome.status == "done", outcome
    # The background tab t2, not the active t1 (None).
    assert ("navigate", "t2", "http://127.0.0.1:8000/links.html") in host.calls
    assert not [c for c in host.calls if c[0] in ("evaluate", "navigate") and c[1] is None]


def test_a_tab_that_is_not_an_id_is_refused_saying_what_to_pass():
    with pytest.raises(TypeError, match="tab id as a string"):
        ac.page_tools(StubHost(), tab={"id": "t1"})
    with pytest.raises(ac.ConfigError, match="leave tab out for the active tab"):
        ac.page_tools(StubHost(), tab=" ")
