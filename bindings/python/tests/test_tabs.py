"""The tab hub: handles, deliver (start, queue), permissions, send_to_tab / read_tab."""

import asyncio

import agent_core as ac


def tab_script():
    def choose(request):
        last = request["messages"][-1]
        text = "".join(p.get("text", "") for p in last.get("content", []))
        tools = {t["name"] for t in request.get("tools", [])}
        if last["role"] == "tool":
            return ac.Reply("Sent it.")
        if text.startswith("[message from tab"):
            return ac.Reply("Got your message.")
        if text.startswith("tell ") and "send_to_tab" in tools:
            _, handle, msg = text.split(" ", 2)
            return ac.Reply(tool_calls=[("send_to_tab", {"tab_id": handle, "message": msg})])
        if text == "slow":
            return ac.Delay(300, ac.Reply("slow done"))
        return ac.Reply(f"echo: {text}")

    return ac.ScriptedProvider.from_fn(choose)


async def test_open_resolve_deliver_read():
    hub = await ac.TabHub.create(tab_script())
    a = await hub.open_tab()
    b = await hub.open_tab()
    ha, hb = hub.handle(a), hub.handle(b)
    assert len(ha) >= 4 and a.startswith(ha) and b.startswith(hb)
    assert sorted(hub.handles()) == sorted([(a, ha), (b, hb)])
    assert hub.resolve(ha.upper()) == {"status": "ok", "tab": a, "handle": ha}
    assert hub.resolve("zz")["status"] == "invalid"
    missing = "0000" if not (a.startswith("0000") or b.startswith("0000")) else "ffff"
    none = hub.resolve(missing)
    assert none["status"] == "none" and sorted(none["open_handles"]) == sorted([ha, hb])

    d = await hub.deliver(a, "hello")
    assert d.status == "started" and isinstance(d.run, ac.Run)
    outcome = await d.run
    assert outcome.final_text == "echo: hello"
    await hub.wait_idle(a)
    snap = await hub.read(a)
    assert snap["last_response"] == "echo: hello" and snap["state"] == "idle"
    info = hub.tab(a)
    assert info["open"] and info["state"] == "idle" and info["auto_wake_budget"] == 6
    session = await hub.session(a)
    assert len(await session.messages()) == 2

    await hub.close_tab(b)
    assert hub.handle(b) is None
    assert [t for t, _ in hub.handles()] == [a]
    await hub.reopen_tab(b)
    assert hub.handle(b) is not None


async def test_busy_tab_queues_then_runs_the_queued_message():
    hub = await ac.TabHub.create(tab_script())
    tab = await hub.open_tab()
    events = hub.subscribe()
    first = await hub.deliver(tab, "slow")
    assert first.status == "started"
    second = await hub.deliver(tab, "after")
    assert second.status == "queued" and second.queue_len == 1 and second.run is None
    await hub.wait_idle(tab)
    snap = await hub.read(tab)
    assert snap["last_response"] == "echo: after"
    seen = []

    async def drain():
        async for ev in events:
            seen.append(ev)
            if ev["type"] == "agent" and ev["event"]["type"] == "run_completed" and len(
                [e for e in seen if e["type"] == "agent" and e["event"]["type"] == "run_completed"]
            ) == 2:
                return

    await asyncio.wait_for(drain(), 5)
    kinds = [e["event"]["type"] for e in seen if e["type"] == "agent"]
    assert "message_queued" in kinds
    assert any(e["type"] == "state_changed" and e["state"] == "running" for e in seen)
    assert all(e["tab_id"] == tab for e in seen)


async def test_permissions_gate_the_tab_tools():
    hub = await ac.TabHub.create(tab_script())
    a = await hub.open_tab()
    b = await hub.open_tab()
    # Off by default: the model is not offered send_to_tab.
    d = await hub.deliver(a, f"tell {hub.handle(b)} hi there")
    assert (await d.run).final_text.startswith("echo: tell")
    await hub.wait_idle(a)  # the hub sees the turn end just after the run does
    await hub.set_permissions(a, ac.TabPermissions(send_to_tab=True))
    assert hub.tab(a)["permissions"] == {"send_to_tab": True, "read_tab": False}
    events = hub.subscribe()
    d = await hub.deliver(a, f"tell {hub.handle(b)} hi there")
    assert (await d.run).final_text == "Sent it."
    await hub.wait_all_idle()

    async def run_started_in_both():
        started = {}
        async for ev in events:
            if ev["type"] == "agent" and ev["event"]["type"] == "run_started":
                started.setdefault(ev["tab_id"], ev["event"])
                if a in started and b in started:
                    return started

    # The turn b runs for a's message says a started it, not the person.
    started = await asyncio.wait_for(run_started_in_both(), 5)
    assert started[a]["origin"] == {"kind": "person"}
    assert started[b]["origin"] == {"kind": "tab", "tab_id": a, "handle": hub.handle(a)}
    snap = await hub.read(b)
    assert snap["last_response"] == "Got your message."
    msgs = await (await hub.session(b)).messages()
    first_user = msgs[0]["message"]["content"][0]["text"]
    assert first_user.startswith(f"[message from tab {hub.handle(a)}: written by that tab's agent")
    assert "<untrusted-content nonce=" in first_user and "\nhi there\n" in first_user
    assert hub.tab(b)["auto_wake_budget"] == 5  # an agent wake spent one unit


async def test_python_tools_in_tabs():
    seen = []

    @ac.tool
    async def note(text: str) -> str:
        """Notes."""
        seen.append(text)
        return "noted"

    def choose(request):
        if request["messages"][-1]["role"] == "tool":
            return ac.Reply("done")
        return ac.ToolCallStep("note", {"text": "from tab"})

    hub = await ac.TabHub.create(ac.ScriptedProvider.from_fn(choose), tools=[note])
    tab = await hub.open_tab()
    d = await hub.deliver(tab, "go")
    assert (await d.run).status == "done"
    assert seen == ["from tab"]


async def test_unknown_tab_errors():
    hub = await ac.TabHub.create(tab_script())
    import uuid

    try:
        await hub.deliver(str(uuid.uuid4()), "hi")
    except ac.TabNotFoundError as e:
        assert "not found" in str(e) and isinstance(e, ac.TabError)
    else:
        raise AssertionError("expected TabNotFoundError")
    try:
        await hub.deliver("nope", "hi")
    except ac.TabError as e:
        assert "invalid tab id" in str(e)
    else:
        raise AssertionError("expected TabError")


async def test_clarification_in_a_tab():
    def choose(request):
        last = request["messages"][-1]
        text = "".join(p.get("text", "") for p in last.get("content", []))
        if last["role"] == "user" and "[User Response to Clarification]" not in text:
            return ac.ToolCallStep("ask_clarification", {"kind": "confirm", "question": "Proceed?"})
        return ac.Reply(f"answered: {text}")

    hub = await ac.TabHub.create(ac.ScriptedProvider.from_fn(choose), clarification=True)
    tab = await hub.open_tab()
    d = await hub.deliver(tab, "do it")
    assert (await d.run).status == "awaiting_user"
    pending = (await hub.session(tab)).pending_clarification()
    assert pending is not None and pending.kind == "confirm"
    try:
        await hub.answer_clarification(tab, pending.id, "perhaps")
    except ac.ClarificationError as e:
        assert e.kind == "clarification.invalid_answer"
    else:
        raise AssertionError("expected ClarificationError")
    run = await hub.answer_clarification(tab, pending.id, "yes")
    outcome = await run
    assert outcome.status == "done" and "yes" in outcome.final_text
