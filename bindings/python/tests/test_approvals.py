"""Durable approvals: a gate answering ``Ask`` parks the turn ``awaiting_approval``; approve,
reject, edit (refused when the schema says no), remembered decisions, expiry, a new message,
a tab hub; and a process killed with SIGKILL while parked, reopened, approved: the tool runs
exactly once."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading

import pytest

import agent_core as ac
from conftest import run_and_collect, types


def script(*amounts):
    """Pays each amount on "pay", then answers with the last tool result."""

    def choose(request):
        last = request["messages"][-1]
        if last["role"] == "user" and last["content"][0]["text"].startswith("pay"):
            amount = int(last["content"][0]["text"].split()[-1]) if " " in last["content"][0]["text"] else 5
            return ac.Reply("Paying.", tool_calls=[("pay", {"amount": amount})])
        if last["role"] == "tool":
            return ac.Reply("after: " + "".join(p.get("text", "") for p in last["content"]))
        return ac.Reply("got: " + last["content"][0]["text"])

    return ac.ScriptedProvider.from_fn(choose)


def payer(paid):
    @ac.tool(gated=True)
    def pay(amount: int) -> str:
        """Pays an amount in cents."""
        paid.append(amount)
        return f"paid {amount}"

    return pay


def ask(_request):
    return ac.Ask("Pay this?")


async def test_ask_parks_and_an_approval_runs_the_call_once():
    paid = []
    agent = ac.Agent(script(), tools=[payer(paid)], gate=ask)
    session = await agent.create_session()
    run = session.send("pay 500")
    outcome, events = await run_and_collect(run)
    assert outcome.status == "awaiting_approval", outcome
    assert run.status().state == "awaiting_approval"
    assert "approval_pending" in types(events)
    approval = outcome.approval
    assert isinstance(approval, ac.PendingApproval) and approval == session.pending_approval()
    (call,) = approval.calls
    assert isinstance(call, ac.ApprovalCall)
    assert (call.tool, call.arguments, call.prompt) == ("pay", {"amount": 500}, "Pay this?")
    assert approval.message == "Paying." and approval.origin.kind == "person"
    assert paid == []

    outcome, events = await run_and_collect(session.resolve_approval(approval.id, {call.call_id: "approve"}))
    assert outcome.status == "done" and outcome.final_text == "after: paid 500", outcome
    assert "approval_resolved" in types(events)
    assert paid == [500] and session.pending_approval() is None
    with pytest.raises(ac.ApprovalError) as info:
        session.resolve_approval(approval.id, {call.call_id: "approve"})
    assert info.value.kind == "approval.not_pending"


async def test_reject_edit_and_what_is_refused():
    paid = []
    agent = ac.Agent(script(), tools=[payer(paid)], gate=ask)
    session = await agent.create_session()
    approval = (await session.send("pay 500")).approval
    call = approval.calls[0].call_id
    with pytest.raises(ac.ApprovalError) as info:
        session.resolve_approval(approval.id, {call: ac.Approve(arguments={"amount": "lots"})})
    assert info.value.kind == "approval.invalid_arguments" and "amount" in str(info.value)
    with pytest.raises(ac.ApprovalError) as info:
        session.resolve_approval(approval.id, {})
    assert info.value.kind == "approval.missing_decision"
    with pytest.raises(ac.ApprovalError) as info:
        session.resolve_approval(approval.id, {"stranger": "approve"})
    assert info.value.kind == "approval.unknown_call"
    with pytest.raises(TypeError):
        session.resolve_approval(approval.id, {call: 42})
    assert session.pending_approval() is not None, "still pending after refused answers"

    outcome = await session.resolve_approval(approval.id, {call: ac.Approve(arguments={"amount": 200})})
    assert outcome.status == "done" and paid == [200]

    approval = (await session.send("pay 900")).approval
    outcome = await session.resolve_approval(approval.id, {approval.calls[0].call_id: ac.Reject("too much")})
    assert outcome.status == "done" and paid == [200]
    assert "the person rejected it: too much" in outcome.final_text


async def test_a_remembered_decision_skips_the_question_until_revoked(tmp_path):
    paid = []
    agent = ac.Agent(script(), tools=[payer(paid)], gate=ask, store=ac.SqliteStore(str(tmp_path / "a.db")))
    session = await agent.create_session()
    approval = (await session.send("pay 1")).approval
    await session.resolve_approval(approval.id, {approval.calls[0].call_id: ac.Approve(remember="session")})
    (rule,) = await agent.approval_rules()
    assert isinstance(rule, ac.ApprovalRule)
    assert (rule.tool, rule.allow, rule.session_id) == ("pay", True, session.id)
    assert (await session.send("pay 2")).status == "done"
    assert paid == [1, 2]
    assert await agent.revoke_approval_rule(rule.id) is True
    assert await agent.revoke_approval_rule(rule.id) is False
    assert (await session.send("pay 3")).status == "awaiting_approval"


async def test_expiry_and_a_new_message_end_the_approval():
    paid = []
    agent = ac.Agent(script(), tools=[payer(paid)], gate=ask, approval_ttl_ms=200)
    session = await agent.create_session()
    events = []
    expired = ac.Agent(script(), tools=[payer(paid)], gate=ask, approval_ttl_ms=200, on_event=events.append)
    s2 = await expired.create_session()
    assert (await s2.send("pay 7")).status == "awaiting_approval"
    # The watcher clears the approval, records why its call did not run, then emits the
    # event, which reaches the callback a moment later: wait for both.
    for _ in range(100):
        if s2.pending_approval() is None and "approval_expired" in [e.type for e in events]:
            break
        await asyncio.sleep(0.05)
    assert s2.pending_approval() is None
    assert "approval_expired" in [e.type for e in events]

    assert (await session.send("pay 8")).status == "awaiting_approval"
    outcome = await session.send("never mind")
    assert outcome.status == "done" and session.pending_approval() is None
    assert paid == []


def test_an_event_after_the_sessions_loop_closed_still_reaches_the_callback():
    # The expiry comes after `asyncio.run` closed the loop the session ran on: the event is
    # delivered on the binding's Python thread instead of being lost with the loop.
    seen = []
    expired = threading.Event()

    def on_event(e):
        seen.append(e.type)
        if e.type == "approval_expired":
            expired.set()

    async def park():
        agent = ac.Agent(script(), tools=[payer([])], gate=ask, approval_ttl_ms=300, on_event=on_event)
        session = await agent.create_session()
        assert (await session.send("pay 7")).status == "awaiting_approval"
        return agent

    agent = asyncio.run(park())
    assert expired.wait(15), seen
    assert seen[0] == "run_started" and seen[-1] == "approval_expired"
    del agent


async def test_a_tab_hub_answers_a_tab_parked_for_approval():
    paid = []
    hub = await ac.TabHub.create(script(), tools=[payer(paid)], gate=ask)
    tab = await hub.open_tab()
    assert (await (await hub.deliver(tab, "pay 3")).run).status == "awaiting_approval"
    await hub.wait_idle(tab)
    approval = (await hub.session(tab)).pending_approval()
    run = await hub.resolve_approval(tab, approval.id, {approval.calls[0].call_id: "approve"})
    assert (await run).status == "done" and paid == [3]


CHILD = textwrap.dedent(
    """
    import asyncio, json, sys
    import agent_core as ac

    db, ledger = sys.argv[1], sys.argv[2]

    @ac.tool(gated=True)
    def pay(amount: int) -> str:
        \"\"\"Pays.\"\"\"
        with open(ledger, "a") as f:
            f.write(f"{amount}\\n")
        return f"paid {amount}"

    async def main():
        provider = ac.ScriptedProvider([ac.Reply("Paying.", tool_calls=[("pay", {"amount": 42})])])
        agent = ac.Agent(provider, tools=[pay], gate=lambda r: ac.Ask(), store=ac.SqliteStore(db))
        session = await agent.create_session()
        outcome = await session.send("pay")
        print(json.dumps({"session": session.id, "status": outcome.status, "approval": outcome.approval.id,
                          "call": outcome.approval.calls[0].call_id}), flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main())
    """
)


async def test_parked_then_killed_reopened_and_approved_runs_the_tool_exactly_once(tmp_path):
    db, ledger = str(tmp_path / "agent.db"), tmp_path / "ledger.txt"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, db, str(ledger)], stdout=subprocess.PIPE, text=True, env=dict(os.environ)
    )
    try:
        line = await asyncio.wait_for(asyncio.to_thread(child.stdout.readline), 30)
        parked = json.loads(line)
        assert parked["status"] == "awaiting_approval", parked
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL
    assert not ledger.exists()

    # A new process (this one) opens the store the killed one left.
    def pay_in_ledger(amount: int) -> str:
        """Pays."""
        with open(ledger, "a") as f:
            f.write(f"{amount}\n")
        return f"paid {amount}"

    pay = ac.tool(gated=True, name="pay")(pay_in_ledger)
    agent = ac.Agent(ac.ScriptedProvider(["Paid after the restart."]), tools=[pay], gate=ask, store=ac.SqliteStore(db))
    session = await agent.open_session(parked["session"])
    pending = session.pending_approval()
    assert pending is not None and pending.id == parked["approval"]
    outcome = await session.resolve_approval(pending.id, {parked["call"]: "approve"})
    assert outcome.status == "done" and outcome.final_text == "Paid after the restart.", outcome
    assert ledger.read_text() == "42\n"
    # Reopened again: nothing pending, nothing run again.
    again = await ac.Agent(ac.ScriptedProvider([]), tools=[pay], store=ac.SqliteStore(db)).open_session(parked["session"])
    assert again.pending_approval() is None
    assert ledger.read_text() == "42\n"


async def test_every_asked_call_of_a_message_is_answered_at_once():
    paid = []
    asked = []

    def gate(request):
        asked.append(request.arguments["amount"])
        return ac.Allow() if request.arguments["amount"] < 10 else ac.Ask()

    provider = ac.ScriptedProvider(
        [ac.Reply("Paying.", tool_calls=[("pay", {"amount": 20}), ("pay", {"amount": 5}), ("pay", {"amount": 30})]), "done"]
    )
    agent = ac.Agent(provider, tools=[payer(paid)], gate=gate)
    session = await agent.create_session()
    outcome = await session.send("pay")
    assert outcome.status == "awaiting_approval"
    assert [c.arguments["amount"] for c in outcome.approval.calls] == [20, 30]
    first, second = (c.call_id for c in outcome.approval.calls)
    outcome = await session.resolve_approval(outcome.approval.id, {first: "approve", second: ac.Reject("no")})
    assert outcome.status == "done" and paid == [20, 5]
    assert asked == [20, 5, 30], "the gate is asked once per call"
