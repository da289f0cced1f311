"""Decisions remembered for a host pattern: the page tools name their tab's host (from the
host's ``tabs()``), the gate and the parked call carry it, ``RememberHost`` answers later calls
on matching hosts only, a pattern that does not fit the call is refused, and an approved call
does not run once the tab has moved to another host."""

import pytest

import agent_core as ac
from conftest import run_and_collect, types


class Site:
    """A browser stub with one tab whose address the test sets; navigating leaves it there."""

    def __init__(self, url):
        self.url = url
        self.navigated = []

    async def evaluate(self, tab, expression):
        return self.url if expression == "location.href" else {"ok": True}

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


def go_next():
    """Navigates on each user message, then answers."""

    def choose(request):
        if request["messages"][-1]["role"] == "user":
            return ac.Reply("Going.", tool_calls=[("page_navigate", {"url": "https://shop.example.com/next"})])
        return ac.Reply("done")

    return ac.ScriptedProvider.from_fn(choose)


def fixture(url):
    site = Site(url)
    hosts = []

    def ask(request):
        hosts.append(request.host)
        return ac.Ask("Go on?")

    agent = ac.Agent(go_next(), tools=[ac.page_tools(site, settle_timeout_ms=500)], gate=ask)
    return site, hosts, agent


async def test_a_host_rule_answers_on_matching_hosts_only():
    site, hosts, agent = fixture("https://Shop.Example.com/cart")
    session = await agent.create_session()
    approval = (await session.send("go")).approval
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

    site.url = "https://www.example.com/"
    assert (await session.send("again")).status == "done"
    site.url = "https://example.org/"
    outcome = await session.send("elsewhere")
    assert outcome.status == "awaiting_approval" and outcome.approval.calls[0].host == "example.org"
    assert len(site.navigated) == 2
    assert await agent.revoke_approval_rule(rule.id) is True


async def test_an_approved_call_does_not_run_once_the_tab_moved_to_another_host():
    site, _, agent = fixture("https://bank.example/")
    session = await agent.create_session()
    approval = (await session.send("go")).approval
    site.url = "https://evil.test/"
    outcome, events = await run_and_collect(session.resolve_approval(approval.id, {approval.calls[0].call_id: "approve"}))
    assert outcome.status == "done" and site.navigated == []
    (denied,) = [e for e in events if e.type == "tool_call_denied"]
    assert "bank.example" in denied["reason"] and "evil.test" in denied["reason"], denied
    assert "tool_call_started" not in types(events)
