"""Sessions in PostgreSQL: a session run, resumed through a second store (another replica),
listed and deleted; two writers to one session; the errors for a server that is not there.

The server comes from AGENT_CORE_TEST_POSTGRES_URL: scripts/test-python (and scripts/test)
start a throwaway one and set it, so these tests never skip there. Run by hand without it, the
tests that need a server are skipped with that reason. Each test uses a schema of its own."""

import os
import socket
import uuid

import pytest

import agent_core as ac

URL = os.environ.get("AGENT_CORE_TEST_POSTGRES_URL")
needs_server = pytest.mark.skipif(
    not URL, reason="needs PostgreSQL: set AGENT_CORE_TEST_POSTGRES_URL (scripts/test-python starts one)"
)


def fresh_schema() -> str:
    return "py_" + uuid.uuid4().hex


@ac.tool
def remember(fact: str) -> str:
    """Remembers a fact."""
    return f"remembered {fact}"


@needs_server
async def test_a_session_runs_and_resumes_on_another_store():
    assert URL is not None
    schema = fresh_schema()
    store = ac.PostgresStore(URL, schema=schema, max_connections=2)
    assert store.schema == schema
    assert await store.schema_version() >= 1
    provider = ac.ScriptedProvider([ac.ToolCallStep("remember", {"fact": "tea"}), "Noted."])
    agent = ac.Agent(provider, tools=[remember], store=store)
    session = await agent.create_session()
    assert (await session.send("I like tea")).status == "done"
    sid = session.id

    # Another replica: its own pool on the same schema.
    other = ac.PostgresStore(URL, schema=schema, connect_timeout_ms=5000)
    provider2 = ac.ScriptedProvider(["You like tea."], record_requests=True)
    agent2 = ac.Agent(provider2, store=other)
    resumed = await agent2.open_session(sid)
    msgs = await resumed.messages()
    assert [m["message"]["role"] for m in msgs] == ["user", "assistant", "tool", "assistant"]
    assert [m["seq"] for m in msgs] == [1, 2, 3, 4]
    outcome = await resumed.send("What do I like?")
    assert outcome.final_text == "You like tea."
    sent = provider2.requests()[0]["messages"]
    assert any(m["role"] == "tool" and "remembered tea" in m["content"][0]["text"] for m in sent)
    assert [s["id"] for s in await store.list_sessions()] == [sid]
    calls = await other.tool_calls(sid)
    assert calls[0]["name"] == "remember" and calls[0]["state"] == "succeeded"
    await store.delete_session(sid)
    assert await other.list_sessions() == []
    # A new agent (agent2 keeps its open session live) finds it gone.
    with pytest.raises(ac.SessionNotFoundError):
        await ac.Agent(ac.ScriptedProvider([]), store=other).open_session(sid)
    with pytest.raises(ac.SessionNotFoundError):
        await store.delete_session(sid)
    store.close()
    other.close()


@needs_server
async def test_two_agents_on_one_session_cannot_interleave():
    assert URL is not None
    schema = fresh_schema()
    first = ac.Agent(ac.ScriptedProvider(["one"]), store=ac.PostgresStore(URL, schema=schema))
    second = ac.Agent(ac.ScriptedProvider(["two"]), store=ac.PostgresStore(URL, schema=schema))
    session = await first.create_session()
    stale = await second.open_session(session.id)
    assert (await session.send("hi")).status == "done"
    # The second agent's view is stale: its append conflicts and the turn fails with a store
    # error, writing nothing.
    outcome = await stale.send("hello")
    assert outcome.status == "error"
    assert "conflict" in (outcome.error or "").lower()
    msgs = await (await first.open_session(session.id)).messages()
    assert [m["message"]["content"][0]["text"] for m in msgs] == ["hi", "one"]


async def test_a_server_that_is_not_there_is_a_store_error_naming_it():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ac.StoreError) as info:
        ac.PostgresStore(f"postgres://agent:pw-secret@127.0.0.1:{port}/agents", connect_timeout_ms=2000)
    text = str(info.value)
    assert f"could not connect to PostgreSQL at 127.0.0.1:{port}" in text
    assert "is the server running" in text
    assert "pw-secret" not in text


async def test_a_store_made_inside_a_tool_reports_its_error_there():
    # Tools run on the binding's threads: connecting from one must answer, not panic.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    @ac.tool
    def open_archive() -> str:
        """Opens the archive database."""
        try:
            ac.PostgresStore(f"postgres://agent@127.0.0.1:{port}/archive", connect_timeout_ms=2000)
        except ac.StoreError as e:
            return f"no archive: {e}"
        return "opened"

    provider = ac.ScriptedProvider([ac.ToolCallStep("open_archive", {}), "Done."])
    agent = ac.Agent(provider, tools=[open_archive])
    session = await agent.create_session()
    assert (await session.send("open it")).status == "done"
    results = [m for m in await session.messages() if m["message"]["role"] == "tool"]
    text = results[0]["message"]["content"][0]["text"]
    assert text.startswith("no archive: ") and "could not connect to PostgreSQL at 127.0.0.1" in text, text


def test_bad_options_are_config_errors():
    with pytest.raises(ac.ConfigError, match="unknown field"):
        ac._native.PostgresStore("postgres://u@127.0.0.1/db", {"pool": 1})
    with pytest.raises(ac.StoreError, match="not a plain schema name"):
        ac.PostgresStore("postgres://u@127.0.0.1/db", schema="Drop Table")
