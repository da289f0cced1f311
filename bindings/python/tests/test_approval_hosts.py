"""Decisions remembered for a host pattern: the page tools name the host they act on (their
tab's, from the host's ``tabs()``; a navigation's destination), the gate and the parked call
carry it, ``RememberHost`` answers later calls on matching hosts only, a pattern that does not
fit the call is refused, and an approved call does not run once the tab has moved to another
host."""

import pytest

import agent_core as ac
from conftest import run_and_collect, types


class Site:
    """A browser stub with one tab whose address the test sets; navigating leaves it there."""

    def __init__(self, url):
        self.url = url
        self.navigated = []
        self.scripts = []

    async def evaluate(self, tab, expression):
        if expression == "location.href":
            return self.url
        self.scripts.append(expression)
        return {"ok": True}

    async def navigate(self, tab, url):
        self.navigated.append(url)

    def wait_settled(self, tab, timeout):
        pass

    def tabs(self):
        return [{"id": "t1", "url": self.url, "title": "", "active": True}]

    def open_tab(self, url):
        raise ac.HostError("one tab only")

    def close_tab(self, tab):
        raise ac.HostError("one tab only")

    def activate_tab(self, tab):
        pass


def on_each_message(tool, arguments):
    """Calls ``tool`` on each user message (``arguments`` made from its text), then answers."""

    def choose(request):
        last = request["messages"][-1]
        if last["role"] == "user":
            return ac.Reply("Going.", tool_calls=[(tool, arguments(last["content"][0]["text"]))])
        return ac.Reply("done")

    return ac.ScriptedProvider.from_fn(choose)


def fixture(url, provider):
    site = Site(url)
    hosts = []

    def ask(request):
        hosts.append(request.host)
        return ac.Ask("Go on?")

    agent = ac.Agent(provider, tools=[ac.page_tools(site, settle_timeout_ms=500)], gate=ask)
    return site, hosts, agent


async def test_a_host_rule_answers_on_matching_hosts_only():
    # A navigation acts on the host it goes to (the message's address here), not the tab's.
    site, hosts, agent = fixture("https://tab.example.org/", on_each_message("page_navigate", lambda text: {"url": text}))
    session = await agent.create_session()
    approval = (await session.send("https://Shop.Example.com/next")).approval
    (call,) = approval.calls
    assert call.host == "shop.example.com" and hosts == ["shop.example.com"]

    with pytest.raises(ac.ApprovalError) as info:
        session.resolve_approval(approval.id, {call.call_id: ac.Approve(remember=ac.RememberHost("other.org"))})
    assert info.value.kind == "approval.invalid_remember" and "does not match" in str(info.value)
    assert session.pending_approval() is not None

    remember = ac.Approve(remember=ac.RememberHost("*.example.com"))
    assert (await session.resolve_approval(approval.id, {call.call_id: remember})).status == "done"
    (rule,) = await agent.approval_rules()
    assert (rule.tool, rule.host_pattern, rule.session_id, rule.allow) == ("page_navigate", "*.example.com", None, True)

    assert (await session.send("https://www.example.com/")).status == "done"
    outcome = await session.send("https://example.org/")
    assert outcome.status == "awaiting_approval" and outcome.approval.calls[0].host == "example.org"
    assert len(site.navigated) == 2
    assert await agent.revoke_approval_rule(rule.id) is True


async def test_an_approved_call_does_not_run_once_the_tab_moved_to_another_host():
    fill = on_each_message("page_fill", lambda text: {"selector": "#q", "text": text})
    site, _, agent = fixture("https://bank.example/", fill)
    session = await agent.create_session()
    approval = (await session.send("pay")).approval
    assert approval.calls[0].host == "bank.example"
    site.url = "https://evil.test/"
    outcome, events = await run_and_collect(session.resolve_approval(approval.id, {approval.calls[0].call_id: "approve"}))
    assert outcome.status == "done" and site.scripts == [], "nothing ran on the page"
    (denied,) = [e for e in events if e.type == "tool_call_denied"]
    assert "bank.example" in denied["reason"] and "evil.test" in denied["reason"], denied
    assert "tool_call_started" not in types(events)


async def test_back_and_forward_are_decided_for_the_history_entry_they_go_to():
    site = Site("https://shop.example.com/cart")
    entries = ["https://evil.test/", "https://shop.example.com/cart", "https://www.example.com/"]
    site.history = lambda tab: {"entries": entries, "current": 1}
    hosts = []

    def ask(request):
        hosts.append(request.host)
        return ac.Ask("Go?")

    def choose(request):
        last = request["messages"][-1]
        if last["role"] == "user":
            return ac.Reply("Going.", tool_calls=[(last["content"][0]["text"], {})])
        return ac.Reply("done")

    agent = ac.Agent(ac.ScriptedProvider.from_fn(choose), tools=[ac.page_tools(site, settle_timeout_ms=500)], gate=ask)
    session = await agent.create_session()
    assert (await session.send("page_back")).approval.calls[0].host == "evil.test"
    assert (await session.send("page_forward")).approval.calls[0].host == "www.example.com"
    assert hosts == ["evil.test", "www.example.com"]
