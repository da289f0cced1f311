"""Clarification: the question arrives as an event, the turn parks awaiting_user, and an
answer (checked by kind) resumes it; it survives a restart with a SQLite store; dismissing it
(in a session, in a tab) leaves it unanswered without starting a turn."""

import asyncio

import pytest

import agent_core as ac
from conftest import run_and_collect, types


def script():
    def choose(request):
        last = request["messages"][-1]
        if last["role"] == "user" and "[User Response to Clarification]" not in str(last["content"]):
            return ac.ToolCallStep(
                "ask_clarification",
                {"kind": "choice", "title": "Size", "question": "Which size?", "options": ["small", "large"]},
            )
        text = "".join(p.get("text", "") for p in last.get("content", []))
        return ac.Reply(f"OK: {text}")

    return ac.ScriptedProvider.from_fn(choose)


async def test_question_event_park_and_answer():
    agent = ac.Agent(script(), clarification=True)
    assert "ask_clarification" in [s["name"] for s in agent.tool_specs()]
    session = await agent.create_session()
    outcome, events = await run_and_collect(session.send("order a coffee"))
    assert outcome.status == "awaiting_user"
    pending_event = next(e for e in events if e.type == "clarification_pending")
    question = pending_event.question
    assert question["question"] == "Which size?" and question["options"] == ["small", "large"]
    pending = session.pending_clarification()
    assert isinstance(pending, ac.Clarification)
    assert pending.id == pending_event.clarification_id and pending.kind == "choice"

    with pytest.raises(ac.ClarificationError, match="not one of the options") as info:
        session.answer_clarification(pending.id, "medium")
    assert info.value.kind == "clarification.invalid_answer"
    assert session.pending_clarification() is not None  # still pending

    run = session.answer_clarification(pending.id, "large")
    outcome2, events2 = await run_and_collect(run)
    assert outcome2.status == "done"
    assert "clarification_responded" in types(events2)
    assert "large" in outcome2.final_text
    assert session.pending_clarification() is None
    with pytest.raises(ac.ClarificationError) as info:
        session.answer_clarification(pending.id, "small")
    assert info.value.kind == "clarification.not_pending"


async def test_a_new_message_dismisses_the_question():
    agent = ac.Agent(script(), clarification=True)
    session = await agent.create_session()
    assert (await session.send("order")).status == "awaiting_user"
    outcome, events = await run_and_collect(session.send("never mind"))
    assert "clarification_dismissed" in types(events)
    assert session.pending_clarification() is None or outcome.status == "awaiting_user"


async def test_pending_question_survives_a_restart(tmp_path):
    db = tmp_path / "p.db"
    agent = ac.Agent(script(), store=ac.SqliteStore(db), clarification=True)
    session = await agent.create_session()
    assert (await session.send("order")).status == "awaiting_user"
    qid = session.pending_clarification().id
    del agent, session

    agent2 = ac.Agent(script(), store=ac.SqliteStore(db), clarification=True)
    sessions = await ac.SqliteStore(db).list_sessions()
    resumed = await agent2.open_session(sessions[0]["id"])
    assert resumed.pending_clarification().id == qid
    outcome = await resumed.answer_clarification(qid, "small")
    assert outcome.status == "done" and "small" in outcome.final_text


async def wait_for_event(events, kind, timeout=5.0):
    """Waits until on_event has seen an event of `kind` (callbacks trail the run a little)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while kind not in types(events):
        assert asyncio.get_running_loop().time() < deadline, f"no {kind} event in {types(events)}"
        await asyncio.sleep(0.01)


async def test_dismissing_the_question_leaves_it_unanswered():
    events = []
    agent = ac.Agent(script(), clarification=True, on_event=events.append)
    session = await agent.create_session()
    assert (await session.send("order a coffee")).status == "awaiting_user"
    pending = session.pending_clarification()

    with pytest.raises(ac.ClarificationError, match="no pending clarification") as info:
        await session.dismiss_clarification("some-other-question")
    assert info.value.kind == "clarification.not_pending"
    assert session.pending_clarification() is not None

    await session.dismiss_clarification(pending.id)
    assert session.pending_clarification() is None
    await wait_for_event(events, "clarification_dismissed")
    # The model's question got a result saying so, and no turn started.
    results = [m["message"] for m in await session.messages() if m["message"]["role"] == "tool"]
    assert "dismissed" in str(results[-1]).lower(), results
    assert types(events).count("run_started") == 1
    with pytest.raises(ac.ClarificationError) as info:
        session.answer_clarification(pending.id, "small")
    assert info.value.kind == "clarification.not_pending"


async def test_dismissing_a_tabs_question():
    hub = await ac.TabHub.create(script(), clarification=True)
    tab = await hub.open_tab()
    assert (await (await hub.deliver(tab, "order")).run).status == "awaiting_user"
    await hub.wait_idle(tab)
    assert hub.tab(tab)["awaiting_user"]
    pending = (await hub.session(tab)).pending_clarification()
    await hub.dismiss_clarification(tab, pending.id)
    assert (await hub.session(tab)).pending_clarification() is None
    assert not hub.tab(tab)["awaiting_user"]
    with pytest.raises(ac.ClarificationError):
        await hub.dismiss_clarification(tab, pending.id)
