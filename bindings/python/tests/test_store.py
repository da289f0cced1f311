"""Sessions: the SQLite store, resuming a session, errors; the encrypted key store."""

import asyncio
import uuid

import pytest

import agent_core as ac


@ac.tool
def remember(fact: str) -> str:
    """Remembers a fact."""
    return f"remembered {fact}"


async def test_sqlite_store_persists_and_resumes(tmp_path):
    db = tmp_path / "profile.db"
    store = ac.SqliteStore(db)
    assert await store.schema_version() >= 1
    provider = ac.ScriptedProvider([ac.ToolCallStep("remember", {"fact": "tea"}), "Noted."])
    agent = ac.Agent(provider, tools=[remember], store=store)
    session = await agent.create_session()
    assert (await session.send("I like tea")).status == "done"
    sid = session.id
    del agent, session

    # A new store and agent (as after a restart) resume the session from the file.
    store2 = ac.SqliteStore(str(db))
    provider2 = ac.ScriptedProvider(["You like tea."], record_requests=True)
    agent2 = ac.Agent(provider2, store=store2)
    resumed = await agent2.open_session(sid)
    assert resumed.id == sid
    msgs = await resumed.messages()
    assert [m["message"]["role"] for m in msgs] == ["user", "assistant", "tool", "assistant"]
    assert [m["seq"] for m in msgs] == [1, 2, 3, 4]
    outcome = await resumed.send("What do I like?")
    assert outcome.final_text == "You like tea."
    sent = provider2.requests()[0]["messages"]
    assert sent[0]["content"][0]["text"] == "I like tea"
    assert any(m["role"] == "tool" and "remembered tea" in m["content"][0]["text"] for m in sent)
    sessions = await store2.list_sessions()
    assert [s["id"] for s in sessions] == [sid]
    calls = await store2.tool_calls(sid)
    assert calls[0]["name"] == "remember" and calls[0]["state"] == "succeeded"
    await store2.delete_session(sid)
    with pytest.raises(ac.SessionNotFoundError):
        await agent2.open_session(str(uuid.uuid4()))


@ac.tool
def bulky() -> str:
    """Returns a lot."""
    return "x" * 6000


async def test_a_capped_store_ends_the_turn_with_a_clear_error_and_keeps_what_was_saved(tmp_path):
    db = tmp_path / "capped.db"
    store = ac.SqliteStore(db)
    del store
    size = db.stat().st_size
    capped = ac.SqliteStore(db, max_size_bytes=size + 160 * 1024, group_commit_delay_ms=1)
    provider = ac.ScriptedProvider([step for _ in range(100) for step in (ac.ToolCallStep("bulky", {}), "done")])
    agent = ac.Agent(provider, tools=[bulky], store=capped)
    session = await agent.create_session()
    done = 0
    while True:
        outcome = await session.send(f"turn {done}")
        if outcome.status != "done":
            break
        done += 1
        assert done < 100, "the cap never took effect"
    assert done >= 2
    assert outcome.status == "error" and outcome.error_kind == "store"
    assert "database or disk is full" in outcome.error
    sid = session.id
    del agent, session, capped

    # Every finished turn is in the file; with room again the session goes on.
    store = ac.SqliteStore(db, write_behind=False)
    agent = ac.Agent(ac.ScriptedProvider(["again"]), store=store)
    resumed = await agent.open_session(sid)
    texts = [m["message"]["content"][0]["text"] for m in await resumed.messages() if m["message"]["role"] == "user"]
    assert texts[:done] == [f"turn {i}" for i in range(done)]
    assert (await resumed.send("with room")).status == "done"


def test_store_options_are_checked(tmp_path):
    with pytest.raises(ac.ConfigError):
        ac.SqliteStore(tmp_path / "x.db", group_commit_delay_ms=-1)


async def test_session_ids_and_errors():
    agent = ac.Agent(ac.ScriptedProvider([]), store=ac.MemoryStore())
    sid = str(uuid.uuid4()).upper()
    session = await agent.create_session(sid)
    assert session.id == sid.lower()
    with pytest.raises(ac.SessionExistsError, match="already exists"):
        await agent.create_session(sid)
    with pytest.raises(ac.InvalidSessionIdError, match="invalid session id"):
        await agent.create_session("not-a-uuid")
    with pytest.raises(ac.SessionNotFoundError) as info:
        await agent.open_session(str(uuid.uuid4()))
    assert isinstance(info.value, ac.StoreError) and isinstance(info.value, ac.AgentCoreError)
    assert info.value.kind == "store.not_found"
    again = await agent.open_session(sid)
    assert again.id == session.id


async def test_without_store_sessions_live_in_memory():
    agent = ac.Agent(ac.ScriptedProvider(["hi", "again"]))
    session = await agent.create_session()
    await session.send("one")
    same = await agent.open_session(session.id)
    await same.send("two")
    assert len(await session.messages()) == 4


def test_config_errors():
    with pytest.raises(ac.ConfigError, match="unknown field `bogus`"):
        ac.Agent(ac.ScriptedProvider([]), bogus=1)
    with pytest.raises(ac.ConfigError, match="unknown variant `maybe`, expected `end_turn` or `tell_model`"):
        ac.Agent(ac.ScriptedProvider([]), on_denial="maybe")
    with pytest.raises(ac.ConfigError, match="non-negative number of milliseconds"):
        ac.Agent(ac.ScriptedProvider([]), config=ac.AgentConfig(tool_timeout_ms=-1))
    with pytest.raises(ac.ConfigError, match="unknown variant `sometimes`, expected `normal` or `full`"):
        ac.SqliteStore("/tmp/x.db", durability="sometimes")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ac.Agent("not a provider")  # type: ignore[arg-type]
    with pytest.raises(ac.StoreError):
        ac.SqliteStore("/proc/definitely/not/writable.db")


def test_config_is_applied():
    agent = ac.Agent(
        ac.ScriptedProvider([]),
        config=ac.AgentConfig(max_iterations=7, tool_timeout_ms=1500, compression={"max_depth": 3}),
        max_parallel_tools=5,
    )
    c = agent.config
    assert c["max_iterations"] == 7 and c["tool_timeout_ms"] == 1500 and c["max_parallel_tools"] == 5
    assert c["compression"]["max_depth"] == 3 and c["model_timeout_ms"] == 180_000


class XorCrypt:
    """A test double for an OS keychain."""

    def __init__(self, available=True):
        self.available = available
        self.calls = 0

    def is_encryption_available(self):
        return self.available

    def encrypt_string(self, plaintext):
        self.calls += 1
        return bytes(b ^ 0x5A for b in plaintext.encode())

    def decrypt_string(self, ciphertext):
        return bytes(b ^ 0x5A for b in ciphertext).decode()


async def test_key_store_with_python_crypt(tmp_path):
    store = ac.SqliteStore(tmp_path / "keys.db")
    crypt = XorCrypt()
    assert isinstance(crypt, ac.Crypt)
    keys = ac.KeyStore(store, crypt)
    await keys.set_key("anthropic", "sk-ant-123")
    assert crypt.calls == 1
    assert await keys.get_key("anthropic") == "sk-ant-123"
    assert await keys.get_key("openai") is None
    status = {s["provider"]: s for s in await keys.status()}
    assert status["anthropic"]["usable"] and not status["openai"]["stored"]
    assert "sk-ant-123" not in repr(await keys.status())
    with pytest.raises(ac.ConfigError, match="unknown provider"):
        await keys.set_key("nope", "k")
    with pytest.raises(ac.ConfigError, match="empty"):
        await keys.set_key("openai", "  ")
    await keys.clear_key("anthropic")
    assert await keys.get_key("anthropic") is None
    # The raw file never holds the key in plaintext.
    await keys.set_key("gemini", "secret-gemini-key")
    raw = (tmp_path / "keys.db").read_bytes() + b"".join(
        p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("keys.db-")
    )
    assert b"secret-gemini-key" not in raw


async def test_key_store_without_encryption_refuses(tmp_path):
    keys = ac.KeyStore(ac.SqliteStore(tmp_path / "k.db"), XorCrypt(available=False))
    with pytest.raises(ac.CryptError, match="never stored in plaintext"):
        await keys.set_key("openai", "sk-1")
    assert await keys.get_key("openai") is None


async def test_key_store_with_key_file(tmp_path):
    store = ac.SqliteStore(tmp_path / "k.db")
    keys = ac.KeyStore(store, key_file=tmp_path / "profile.key")
    await keys.set_key("openai", "sk-file")
    assert await keys.get_key("openai") == "sk-file"
    # Another key file (another machine) cannot read it: the key reads as absent.
    other = ac.KeyStore(ac.SqliteStore(tmp_path / "k.db"), key_file=tmp_path / "other.key")
    assert await other.get_key("openai") is None
    with pytest.raises(ac.ConfigError):
        ac.KeyStore(store)
