"""Page tools bound to one browser tab, in real headless Chromium on loopback pages: agents in
two tabs act at the same time, each on its own page (page_tools(host, tab=...) and a TabHub
built with page_tools=host); a closed or unwired tab answers the model with what to do; the
hub's opened-tab policy decides who gets a tab an agent opens; hover and press_key, the real
input of CdpHost and of a Python host, serve page_hover and page_press_key, and dialog /
answer_dialog serve page_dialog. One browser for the module."""

import asyncio

import pytest
import pytest_asyncio

import agent_core as ac
from conftest import allow, results_of, run_and_collect, serve_pages

pytestmark = pytest.mark.asyncio(loop_scope="module")

FORM = (
    "<!doctype html><html><head><title>Form</title><script>"
    "document.title = 'Form ' + new URLSearchParams(location.search).get('agent');"
    "</script></head><body><h1>Order</h1><label>Name <input id='name'></label>"
    "<button id='details-btn' onclick=\"document.getElementById('details').hidden = false\">"
    "Show details</button><p id='details' hidden>Details of this order</p></body></html>"
)
PAGES = {
    "/form.html?agent=a": FORM,
    "/form.html?agent=b": FORM,
    "/form.html?agent=c": FORM,
    "/links.html": "<!doctype html><html><head><title>Links</title></head><body><a href='/x'>X</a></body></html>",
    "/opened.html": "<!doctype html><html><head><title>Opened</title></head><body><p>New tab</p></body></html>",
    "/input.html": (
        "<!doctype html><html><head><title>Input</title></head><body>"
        "<input id='q' aria-label='Query'>"
        "<button id='menu' style='margin:40px' onmouseover=\"document.title = 'hovered'\">Menu</button>"
        "</body></html>"
    ),
}


@pytest.fixture(scope="module")
def site():
    with serve_pages(PAGES) as url:
        yield url


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def host():
    async with await ac.CdpHost.launch(call_timeout_ms=20_000) as browser:
        yield browser


def text_of(message):
    return "".join(p.get("text", "") for p in message.get("content", []) if isinstance(p, dict))


def form_script(request, calls=None):
    """The person's task as a scripted model plays it: "fill NAME" reads the page, fills
    #name with NAME, opens the details, reads again and answers with the title it read;
    "open URL" opens a tab there; "read" reads the page and answers with what it got. Each
    model call of a "fill" task is recorded in ``calls`` as (NAME, tool results so far), in
    the order the calls are made."""
    messages = request["messages"]
    start = max(i for i, m in enumerate(messages) if m["role"] == "user")
    task = text_of(messages[start])
    results = [text_of(m) for m in messages[start:] if m["role"] == "tool"]
    if task.startswith("open "):
        if not results:
            return ac.ToolCallStep("tab_open", {"url": task.split(" ", 1)[1]})
        return ac.Reply(f"opened: {results[0]}")
    if task == "read":
        if not results:
            return ac.ToolCallStep("page_read")
        return ac.Reply(f"read: {results[0]}")
    name = task.split("fill ", 1)[1]
    if calls is not None:
        calls.append((name, len(results)))
    steps = [
        ac.ToolCallStep("page_read"),
        ac.ToolCallStep("page_fill", {"selector": "#name", "text": name}),
        ac.ToolCallStep("page_click", {"selector": "#details-btn"}),
        ac.ToolCallStep("page_read"),
    ]
    if len(results) < len(steps):
        # A slow first model call, so that both agents are surely mid-turn together.
        return ac.Delay(150, steps[0]) if not results else steps[len(results)]
    title = next((line[len("title: ") :] for line in results[3].splitlines() if line.startswith("title: ")), "?")
    title = title.strip('"')  # page_read quotes the title
    return ac.Reply(f"filled {name} in {title}")


async def open_settled(host, url):
    tab = await host.open_tab(url)
    await host.wait_settled(tab["id"], 5.0)
    return tab


async def page_state(host, tab):
    return await host.evaluate(
        tab, "({name: document.querySelector('#name').value, details: !document.getElementById('details').hidden})"
    )


async def active_tab(host):
    return next(t["id"] for t in await host.tabs() if t["active"])


def overlapped(calls, first, second):
    """Whether ``second``'s agent had a tool result back before ``first``'s made its last model
    call: both were mid-task together."""
    return calls.index((second, 1)) < calls.index((first, 4))


def recording_script(calls):
    return ac.ScriptedProvider.from_fn(lambda request: form_script(request, calls))


async def test_two_agents_with_page_tools_bound_to_their_tabs_act_at_once(host, site):
    a = await open_settled(host, f"{site}/form.html?agent=a")
    b = await open_settled(host, f"{site}/form.html?agent=b")
    person = await open_settled(host, f"{site}/links.html")
    calls = []
    provider = recording_script(calls)
    agent_a = ac.Agent(provider, tools=[host.page_tools(tab=a["id"])], gate=allow)
    agent_b = ac.Agent(provider, tools=[ac.page_tools(host, tab=b["id"])], gate=allow)
    sa, sb = await agent_a.create_session(), await agent_b.create_session()

    oa, ob = await asyncio.wait_for(asyncio.gather(sa.send("fill Ada"), sb.send("fill Bob")), 30)

    assert (oa.status, oa.final_text) == ("done", "filled Ada in Form a"), oa
    assert (ob.status, ob.final_text) == ("done", "filled Bob in Form b"), ob
    assert await page_state(host, a["id"]) == {"name": "Ada", "details": True}
    assert await page_state(host, b["id"]) == {"name": "Bob", "details": True}
    assert await active_tab(host) == person["id"], "the tab the person looks at stays active"
    assert overlapped(calls, "Ada", "Bob") and overlapped(calls, "Bob", "Ada"), calls
    for tab in (a, b, person):
        await host.close_tab(tab["id"])


async def test_two_hub_tabs_act_at_once_each_in_its_wired_browser_tab(host, site):
    a = await open_settled(host, f"{site}/form.html?agent=a")
    b = await open_settled(host, f"{site}/form.html?agent=b")
    person = await open_settled(host, f"{site}/links.html")
    calls = []
    hub = await ac.TabHub.create(
        recording_script(calls),
        gate=allow,
        page_tools=host,
        page_tools_config={"settle_timeout_ms": 5000},
    )
    ta = await hub.open_tab_for_host(a["id"])
    tb = await hub.open_tab_for_host(b["id"])

    da, db = await hub.deliver(ta, "fill Ada"), await hub.deliver(tb, "fill Bob")
    assert da.status == db.status == "started"
    oa, ob = await asyncio.wait_for(asyncio.gather(da.run, db.run), 30)

    assert (oa.status, oa.final_text) == ("done", "filled Ada in Form a"), oa
    assert (ob.status, ob.final_text) == ("done", "filled Bob in Form b"), ob
    assert await page_state(host, a["id"]) == {"name": "Ada", "details": True}
    assert await page_state(host, b["id"]) == {"name": "Bob", "details": True}
    assert await active_tab(host) == person["id"]
    assert overlapped(calls, "Ada", "Bob") and overlapped(calls, "Bob", "Ada"), calls
    for tab in (a, b, person):
        await host.close_tab(tab["id"])


async def test_the_hubs_page_tools_config_is_read_and_a_wrong_key_refused(host):
    with pytest.raises(ac.ConfigError, match="settle_timeout"):
        await ac.TabHub.create(
            ac.ScriptedProvider([]), page_tools=host, page_tools_config={"settle_timeout": 5000}
        )


async def deliver_and_collect(hub, tab, message):
    """Delivers ``message`` to ``tab`` and returns the outcome and the tab's run events, read
    from the hub's subscription (the hub watches the run itself, so its event log may already
    be gone when the caller gets to it)."""
    events = hub.subscribe()
    outcome = await asyncio.wait_for((await hub.deliver(tab, message)).run, 20)
    seen = []

    async def until_the_run_ends():
        async for ev in events:
            if ev["type"] == "agent" and ev["tab_id"] == tab:
                seen.append(ac.Event(ev["event"]))
                if ev["event"]["type"] in ("run_completed", "run_failed", "run_capped", "run_cancelled"):
                    return
        raise AssertionError(f"the hub's events ended before the run's: {seen}")

    await asyncio.wait_for(until_the_run_ends(), 10)
    return outcome, seen


def closed_error(events):
    failed = [r for r in results_of(events) if r.name == "page_read"]
    assert len(failed) == 1 and failed[0].type == "tool_call_failed", failed
    assert failed[0].fatal is False, "the model is told, the turn goes on"
    return failed[0].error


async def test_a_closed_tab_gives_the_bound_agent_a_clear_error(host, site):
    c = await open_settled(host, f"{site}/form.html?agent=c")
    agent = ac.Agent(ac.ScriptedProvider.from_fn(form_script), tools=[host.page_tools(tab=c["id"])])
    session = await agent.create_session()
    # Closed in the browser with nobody told: the tools find out on their next call.
    await host.close_tab(c["id"])
    outcome, events = await asyncio.wait_for(run_and_collect(session.send("read")), 20)
    assert outcome.status == "done", outcome
    error = closed_error(events)
    assert f"browser tab {c['id']} was closed" in error, error
    assert "Do not retry" in error and "tab_open" in error, error
    assert "was closed" in outcome.final_text, "the model read the error"


async def test_a_hub_tab_whose_browser_tab_closed_or_was_never_wired_says_so(host, site):
    c = await open_settled(host, f"{site}/form.html?agent=c")
    hub = await ac.TabHub.create(ac.ScriptedProvider.from_fn(form_script), page_tools=host)
    tab = await hub.open_tab_for_host(c["id"])
    await host.close_tab(c["id"])
    assert hub.host_tab_closed(c["id"]) == tab
    assert hub.host_tab(tab) == ac.HostTab("closed", c["id"])
    outcome, events = await deliver_and_collect(hub, tab, "read")
    assert outcome.status == "done", outcome
    error = closed_error(events)
    assert f"browser tab {c['id']} was closed" in error and "Do not retry" in error, error

    unwired = await hub.open_tab()
    assert hub.host_tab(unwired) == ac.HostTab("unwired")
    outcome, events = await deliver_and_collect(hub, unwired, "read")
    error = closed_error(events)
    assert "no browser tab is attached" in error and "Do not retry" in error, error


@pytest.mark.parametrize("choice", ["new_agent", "same_agent"])
async def test_the_opened_tab_policy_decides_who_gets_a_tab_an_agent_opens(host, site, choice):
    home = await open_settled(host, f"{site}/form.html?agent=a")
    asked = []

    def policy(opened: ac.OpenedTab) -> str:
        asked.append(opened)
        return choice

    hub = await ac.TabHub.create(
        ac.ScriptedProvider.from_fn(form_script),
        gate=allow,
        page_tools=host,
        opened_tab_policy=policy,
    )
    tab = await hub.open_tab_for_host(home["id"])
    before = {t["id"] for t in await host.tabs()}
    outcome = await asyncio.wait_for((await hub.deliver(tab, f"open {site}/opened.html")).run, 20)
    assert outcome.status == "done", outcome
    (opened_id,) = {t["id"] for t in await host.tabs()} - before
    assert asked == [ac.OpenedTab(opener=tab, host_tab=opened_id, url=f"{site}/opened.html")]
    owner = hub.tab_for_host(opened_id)
    if choice == "new_agent":
        assert owner not in (None, tab)
        assert hub.host_tab(owner) == ac.HostTab("open", opened_id)
        assert hub.host_tab(tab).open == home["id"], "the opener stays in its own tab"
        assert f"(tab {hub.handle(owner)})" in outcome.final_text
    else:
        assert owner == tab
        assert hub.host_tab(tab).open == opened_id, "the opener works in the tab it opened"
        assert hub.host_tabs(tab) == [home["id"], opened_id]
    for t in (home["id"], opened_id):
        await host.close_tab(t)


class ForwardingHost:
    """A BrowserHost written in Python that hands every call to a CdpHost: the Python host
    path with a real browser behind it. ``input`` says whether it has hover and press_key."""

    def __init__(self, cdp, input=True):
        self.cdp = cdp
        self.seen = []
        if input:
            self.hover = self._hover
            self.press_key = self._press_key
            self.dialog = self._dialog
            self.answer_dialog = self._answer_dialog

    async def evaluate(self, tab, expression):
        return await self.cdp.evaluate(tab, expression)

    async def navigate(self, tab, url):
        await self.cdp.navigate(tab, url)

    async def wait_settled(self, tab, timeout):
        await self.cdp.wait_settled(tab, timeout)

    async def tabs(self):
        return await self.cdp.tabs()

    async def open_tab(self, url):
        return await self.cdp.open_tab(url)

    async def close_tab(self, tab):
        await self.cdp.close_tab(tab)

    async def activate_tab(self, tab):
        await self.cdp.activate_tab(tab)

    async def _hover(self, tab, x, y):
        self.seen.append(("hover", tab))
        await self.cdp.hover(tab, x, y)

    async def _press_key(self, tab, key, modifiers):
        self.seen.append(("press_key", tab, key, modifiers))
        await self.cdp.press_key(tab, key, modifiers)

    async def _dialog(self, tab):
        return await self.cdp.dialog(tab)

    async def _answer_dialog(self, tab, accept, text):
        self.seen.append(("answer_dialog", tab, accept, text))
        await self.cdp.answer_dialog(tab, accept, text)


async def open_confirm(host, tab):
    """Makes the page in ``tab`` ask confirm() (its title says the answer once given) and
    waits until the host reports the dialog."""
    await host.evaluate(tab, "setTimeout(() => { document.title = confirm('Keep the draft?') ? 'ok' : 'cancel' }, 0)")
    for _ in range(100):
        dialog = await host.dialog(tab)
        if dialog is not None:
            return dialog
        await asyncio.sleep(0.02)
    raise AssertionError("the confirm dialog never opened")


async def title_becomes(host, tab, title):
    for _ in range(100):
        if await host.evaluate(tab, "document.title") == title:
            return True
        await asyncio.sleep(0.02)
    return False


async def test_cdp_host_hover_and_press_key_are_real_input(host, site):
    tab = (await open_settled(host, f"{site}/input.html"))["id"]
    await host.evaluate(tab, "document.getElementById('q').focus()")
    for key in ("a", "b", "Backspace", "c"):
        await host.press_key(tab, key)
    assert await host.evaluate(tab, "document.getElementById('q').value") == "ac"
    box = await host.evaluate(
        tab,
        "(r => ({x: r.x + r.width / 2, y: r.y + r.height / 2}))(document.getElementById('menu').getBoundingClientRect())",
    )
    await host.hover(tab, box["x"], box["y"])
    assert await host.evaluate(tab, "document.title") == "hovered"
    await host.close_tab(tab)


async def test_a_python_hosts_hover_and_press_key_serve_the_page_tools(host, site):
    tab = (await open_settled(host, f"{site}/input.html"))["id"]
    forwarding = ForwardingHost(host)
    provider = ac.ScriptedProvider(
        [
            ac.ToolCallStep("page_press_key", {"selector": "#q", "key": "x"}),
            ac.ToolCallStep("page_hover", {"selector": "#menu"}),
            ac.ToolCallStep("page_press_key", {"selector": "#q", "key": "Shift+Tab"}),
            "done",
        ]
    )
    agent = ac.Agent(provider, tools=[ac.page_tools(forwarding, tab=tab)], gate=allow)
    outcome, events = await asyncio.wait_for(run_and_collect((await agent.create_session()).send("go")), 20)
    assert outcome.status == "done", outcome
    results = results_of(events)
    assert [r.name for r in results] == ["page_press_key", "page_hover", "page_press_key"]
    assert all(r.type == "tool_call_succeeded" for r in results), results
    assert forwarding.seen == [("press_key", tab, "x", []), ("hover", tab), ("press_key", tab, "Tab", ["Shift"])]
    assert await host.evaluate(tab, "document.getElementById('q').value") == "x"
    assert await host.evaluate(tab, "document.title") == "hovered"

    # A host without them: the model is told this host cannot, and what it lacks.
    provider = ac.ScriptedProvider([ac.ToolCallStep("page_hover", {"selector": "#menu"}), "ok"])
    agent = ac.Agent(provider, tools=[ac.page_tools(ForwardingHost(host, input=False), tab=tab)])
    outcome, events = await asyncio.wait_for(run_and_collect((await agent.create_session()).send("go")), 20)
    (failed,) = results_of(events)
    assert failed.type == "tool_call_failed" and "not supported by this host" in failed.error, failed
    assert "no `hover` method" in failed.error, failed.error
    await host.close_tab(tab)


async def test_cdp_host_reports_and_answers_a_dialog(host, site):
    tab = (await open_settled(host, f"{site}/input.html"))["id"]
    assert await host.dialog(tab) is None
    assert await open_confirm(host, tab) == {"kind": "confirm", "message": "Keep the draft?", "default_text": ""}
    await host.answer_dialog(tab, True)
    assert await title_becomes(host, tab, "ok")
    assert await host.dialog(tab) is None
    await host.close_tab(tab)


async def test_a_python_hosts_dialog_methods_serve_page_dialog(host, site):
    tab = (await open_settled(host, f"{site}/input.html"))["id"]
    forwarding = ForwardingHost(host)
    await open_confirm(host, tab)
    provider = ac.ScriptedProvider([ac.ToolCallStep("page_dialog", {"accept": False}), "done"])
    agent = ac.Agent(provider, tools=[ac.page_tools(forwarding, tab=tab)], gate=allow)
    outcome, events = await asyncio.wait_for(run_and_collect((await agent.create_session()).send("go")), 20)
    assert outcome.status == "done", outcome
    (result,) = results_of(events)
    assert result.type == "tool_call_succeeded", result
    assert forwarding.seen == [("answer_dialog", tab, False, None)]
    assert await title_becomes(host, tab, "cancel")

    # A host without them reports no dialog, so page_dialog has nothing to answer.
    provider = ac.ScriptedProvider([ac.ToolCallStep("page_dialog", {"accept": True}), "ok"])
    agent = ac.Agent(provider, tools=[ac.page_tools(ForwardingHost(host, input=False), tab=tab)], gate=allow)
    outcome, events = await asyncio.wait_for(run_and_collect((await agent.create_session()).send("go")), 20)
    (failed,) = results_of(events)
    assert failed.type == "tool_call_failed" and "no dialog is open" in failed.error, failed
    await host.close_tab(tab)
