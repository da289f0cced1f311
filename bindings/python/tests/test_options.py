"""Every options type of api/options.json (written from the Rust types) against the Python
surface: (1) the entry point, dataclass or TypedDict that takes the type names exactly its keys
(a short list of documented exceptions aside), and (2) the binding accepts every key, each set
to its table default (or a valid value where the default is absent), and reads back what it was
given where there is a getter. Then: an unknown key (old seconds-based names included) is a
ConfigError naming it, and durations in milliseconds take effect."""

import asyncio
import dataclasses
import inspect
import json
import time
from pathlib import Path
from typing import Any, Callable, Dict, Set

import pytest

import agent_core as ac
from agent_core import _native
from conftest import run_and_collect
from test_browser_host import StubHost

ROOT = Path(__file__).resolve().parents[3]
TABLE: Dict[str, Dict[str, Any]] = json.loads((ROOT / "api" / "options.json").read_text())


def keys(name: str) -> Set[str]:
    return set(TABLE[name])


def defaults(name: str) -> Dict[str, Any]:
    """The table's default of every key that has one (required keys and ProviderConfig's
    api_key, which is never written out, have none)."""
    return {key: spec["default"] for key, spec in TABLE[name].items() if "default" in spec}


def params(func: Callable[..., Any], *leading: str) -> Set[str]:
    """The parameter names of ``func`` without ``self``/``cls`` and the ``leading`` ones that
    are the call's subject rather than an option (``host``, ``alias``)."""
    names = [n for n in inspect.signature(func).parameters if n not in ("self", "cls")]
    assert names[: len(leading)] == list(leading), names
    return set(names[len(leading) :])


def fields(cls: type) -> Set[str]:
    if dataclasses.is_dataclass(cls):
        return {f.name for f in dataclasses.fields(cls)}
    return set(cls.__annotations__)  # a TypedDict


def step_keys() -> Set[str]:
    """Every key the scripted-step helpers write."""
    steps = [
        ac.Reply("t", tool_calls=[("echo", {})], reasoning="r", usage={"input_tokens": 1, "output_tokens": 1}),
        ac.FailAfter(ac.Reply("t"), ac.ProviderFailure("server")),
        ac.Delay(1, ac.Reply("x")),
        ac.Hang("h"),
    ]
    return {key for s in steps for key in s._to_dict()}


def call_keys() -> Set[str]:
    return {key for call in ac.ToolCallStep("echo", {"a": 1})._to_dict()["tool_calls"] for key in call}


# The Python surface of each type: the names it takes, and the documented differences.
SURFACES: Dict[str, Callable[[], Set[str]]] = {
    "AgentConfig": lambda: fields(ac.AgentConfig),
    "CompressionConfig": lambda: fields(ac.CompressionConfig),
    "CompactionConfig": lambda: fields(ac.CompactionConfig),
    "ModelPrice": lambda: fields(ac.ModelPrice),
    # `kind` is implied by the class (OpenAICompatible, Anthropic, Gemini).
    "ProviderConfig": lambda: params(ac.OpenAICompatible.__init__) | {"kind"},
    "HttpConfig": lambda: fields(ac.HttpConfig),
    "SqliteOptions": lambda: params(ac.SqliteStore.__init__, "path"),
    "PostgresOptions": lambda: params(ac.PostgresStore.__init__, "url"),
    "McpServerEntry": lambda: params(ac.McpClient.connect, "alias"),
    "OutputCaps": lambda: fields(ac.OutputCaps),
    # `tab` is which browser tab the tools act on, not a setting of the tools.
    "PageToolsConfig": lambda: params(ac.page_tools, "host") - {"tab"},
    "ScrapePolicy": lambda: fields(ac.ScrapePolicy),
    # `gated` is the binding's per-tool gating override, not a policy key.
    "FsPolicy": lambda: params(ac.fs_tools) - {"gated"},
    "ShellEnv": lambda: fields(ac.ShellEnv),
    "CdpConfig": lambda: params(ac.CdpHost.launch),
    # Steps are several helpers (Reply, FailAfter, Delay, Hang, ...): the keys they write.
    "ScriptStepSpec": step_keys,
    "ScriptedCallSpec": call_keys,
    "ScriptedErrorSpec": lambda: fields(ac.ProviderFailure),
    "Usage": lambda: fields(ac.Usage),
}


def test_every_options_type_has_a_python_surface():
    assert set(SURFACES) == set(TABLE)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_the_python_surface_names_every_key(name):
    assert SURFACES[name]() == keys(name)


def test_page_tools_config_names_the_keyword_arguments_of_page_tools():
    # TabHub.create(page_tools_config=...) takes the same keys as one dict.
    assert fields(ac.PageToolsConfig) == params(ac.page_tools, "host") - {"tab"}


def test_twin_entry_points_take_the_same_options():
    for cls in (ac.OpenAIResponses, ac.Anthropic, ac.Gemini):
        assert inspect.signature(cls.__init__) == inspect.signature(ac.OpenAICompatible.__init__)
    assert params(ac.CdpHost.page_tools) == params(ac.page_tools, "host")


# --- (2) the binding accepts every key ---------------------------------------------------------


def changed_agent_config() -> Dict[str, Any]:
    """A value other than the default for every AgentConfig key (exact in binary floating
    point, so that it reads back equal)."""
    return {
        "approval_ttl_ms": 4321,
        "clarification_ttl_ms": 1234,
        "compaction": {
            "chars_per_token": 3.5,
            "enabled": False,
            "max_attempts": 2,
            "max_input_tokens": 5000,
            "ratio": 0.5,
            "summary_max_tokens": 512,
        },
        "compression": {
            "head_chars": 10,
            "keep_array_items": 2,
            "max_array_items": 4,
            "max_depth": 3,
            "max_value_chars": 100,
            "tail_chars": 5,
        },
        "event_buffer": 64,
        "max_iterations": 7,
        "max_output_tokens": 256,
        "max_parallel_tools": 2,
        "max_repeated_calls": 4,
        "max_tool_calls": 9,
        "model_timeout_ms": 5000,
        "on_denial": "tell_model",
        "result_cap_chars": 1000,
        "temperature": 0.5,
        "tool_timeout_ms": 1500,
        "vision": "off",
        "max_images": 1,
        "stream_tool_arguments": True,
        "agent_name": "helper",
        "trace_content": True,
        "max_run_cost_usd": 0.5,
        "max_session_cost_usd": 2.0,
        # The budgets need the scripted provider's model priced.
        "prices": {"scripted": {"input": 1.0, "cached_input": 0.25, "cache_write": 1.25, "output": 2.0, "reasoning": 4.0}},
    }


def test_agent_config_reads_back_every_key():
    provider = ac.ScriptedProvider([])
    assert ac.Agent(provider).config == defaults("AgentConfig")
    assert ac.Agent(provider, config=ac.AgentConfig(**defaults("AgentConfig"))).config == defaults("AgentConfig")
    # None is the default, nested too (compaction's max_input_tokens is null by default).
    assert ac.Agent(provider, config=ac.AgentConfig()).config == defaults("AgentConfig")
    changed = changed_agent_config()
    assert set(changed) == keys("AgentConfig")
    assert set(changed["compaction"]) == keys("CompactionConfig")
    assert set(changed["compression"]) == keys("CompressionConfig")
    assert all(changed[k] != v for k, v in defaults("AgentConfig").items())
    assert ac.Agent(provider, config=ac.AgentConfig(**changed)).config == changed
    # As keyword arguments of Agent too, and as a dict.
    assert ac.Agent(provider, **changed).config == changed
    assert ac.Agent(provider, config=changed).config == changed


async def test_none_keeps_the_default_at_every_level_but_not_in_tool_arguments():
    nested_none = {"compaction": {"enabled": None, "ratio": 0.5}, "compression": {"max_depth": None}}
    config = ac.Agent(ac.ScriptedProvider([]), config=nested_none).config
    assert config["compaction"] == dict(defaults("CompactionConfig"), ratio=0.5)
    assert config["compression"] == defaults("CompressionConfig")
    seen = []

    @ac.tool(parameters={"type": "object"})
    def echo(**kwargs: Any) -> str:
        """Records its arguments."""
        seen.append(kwargs)
        return "ok"

    step = {"tool_calls": [{"name": "echo", "arguments": {"x": None, "y": [None]}}], "reasoning": None}
    session = await ac.Agent(ac.ScriptedProvider([step, "done"]), tools=[echo]).create_session()
    assert (await session.send("go")).status == "done"
    assert seen == [{"x": None, "y": [None]}]


async def test_every_script_step_key_is_accepted():
    @ac.tool
    def echo(text: str = "") -> str:
        """Echoes."""
        return text

    assert ac.ScriptedProvider([defaults("ScriptStepSpec")]).call_count == 0
    usage = {k: 3 for k in keys("Usage")}
    reply = {
        "text": "calling",
        "reasoning": "because",
        "tool_calls": [{"name": "echo", "arguments": {"text": "hi"}}],
        "usage": usage,
    }
    error = {"kind": "rate_limited", "message": "slow down", "status": 429, "retry_after_ms": 10}
    steps = [reply, {"delay_ms": 1, "then": "done"}, {"text": "partial", "error": error}, {"hang": "..."}]
    assert set().union(*steps) == keys("ScriptStepSpec")
    assert set(reply["tool_calls"][0]) == keys("ScriptedCallSpec") and set(error) == keys("ScriptedErrorSpec")
    provider = ac.ScriptedProvider(steps, record_requests=True)
    session = await ac.Agent(provider, tools=[echo]).create_session()
    outcome, events = await run_and_collect(session.send("go"))
    assert outcome.status == "done" and outcome.final_text == "done", outcome
    assert outcome.usage.input_tokens >= 3 and outcome.usage.reasoning_tokens >= 3
    assert [e.output for e in events if e.type == "tool_call_succeeded"] == ["hi"]
    failed = await session.send("again")
    assert failed.status == "error" and failed.error_kind == "provider.rate_limited", failed
    assert "slow down" in (failed.error or "")
    # The helpers write the same shapes.
    helpers = [
        ac.FailAfter(ac.Reply("partial"), ac.ProviderFailure("rate_limited", "slow down", 429, retry_after_ms=10)),
        ac.Delay(1, ac.Reply("late")),
        ac.Hang("..."),
    ]
    assert [h._to_dict() for h in helpers] == [
        {"text": "partial", "tool_calls": [], "error": error},
        {"delay_ms": 1, "then": {"text": "late", "tool_calls": []}},
        {"hang": "..."},
    ]
    ac.ScriptedProvider(helpers)


@pytest.mark.parametrize("cls", [ac.OpenAICompatible, ac.Anthropic, ac.Gemini])
def test_every_provider_key_is_accepted(cls):
    given = dict(defaults("ProviderConfig"), model="m", api_key="k", http=defaults("HttpConfig"))
    assert set(given) | {"kind"} == keys("ProviderConfig")
    provider = cls(**given)
    assert provider.model == "m"
    assert provider.id == {ac.OpenAICompatible: "openai-compatible", ac.Anthropic: "anthropic", ac.Gemini: "gemini"}[cls]
    assert cls("m", base_url="http://127.0.0.1:9", streaming=False, max_input_tokens=1000, headers={"X-A": "1"})


async def test_every_sqlite_key_is_accepted(tmp_path):
    store = ac.SqliteStore(tmp_path / "a.db", **defaults("SqliteOptions"))
    assert await store.schema_version() > 0
    other = ac.SqliteStore(
        tmp_path / "b.db",
        durability="full",
        busy_timeout_ms=100,
        max_idle_readers=1,
        write_behind=False,
        group_commit_delay_ms=0,
        max_size_bytes=1 << 30,
    )
    session = await ac.Agent(ac.ScriptedProvider(["ok"]), store=other).create_session()
    assert (await session.send("hi")).status == "done"


async def test_every_mcp_server_key_is_accepted(tmp_path):
    entry = defaults("McpServerEntry")
    entry["caps"] = defaults("OutputCaps")
    # stdio: every key read, then the spawn fails (not the configuration).
    stdio = dict(entry, type="stdio", command=str(tmp_path / "no-server"), cwd=tmp_path, connect_timeout_ms=5000)
    with pytest.raises(ac.McpError) as info:
        await ac.McpClient.connect("s", **stdio)
    assert info.value.kind == "mcp.spawn"

    @ac.tool
    def shout(text: str) -> str:
        """Shouts."""
        return text.upper()

    async with await ac.serve_mcp_http([shout]) as server:
        http = dict(entry, type="http", url=server.url, connect_timeout_ms=10_000, call_timeout_ms=10_000)
        async with await ac.McpClient.connect("h", **http) as client:
            assert client.tool_names == ["h__shout"]


def test_every_page_tools_key_is_accepted():
    config = defaults("PageToolsConfig")
    assert config["scrape"] == defaults("ScrapePolicy")
    tools = ac.page_tools(StubHost(), **config)
    assert "page_scrape" in tools.names


def test_every_fs_policy_key_is_accepted(tmp_path):
    policy = defaults("FsPolicy")
    assert policy["shell_env"] == defaults("ShellEnv")
    policy["root"] = tmp_path
    assert len(ac.fs_tools(**policy)) == 6
    policy.update(root=None, unrestricted=True, shell_env=ac.ShellEnv(**defaults("ShellEnv")))
    assert len(ac.fs_tools(**policy)) == 6
    with pytest.raises(ac.ConfigError, match="not both"):
        ac.fs_tools(tmp_path, unrestricted=True)


async def test_every_cdp_key_is_accepted(tmp_path):
    config = defaults("CdpConfig")
    config["executable"] = tmp_path / "no-chromium"
    # Every key read; then the browser is missing (a host error, not a configuration error).
    with pytest.raises(ac.HostError):
        await ac.CdpHost.launch(**config)


# --- unknown keys ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "build",
    [
        lambda: ac.Agent(ac.ScriptedProvider([]), config={"tool_timeout": 5}),
        lambda: ac.Agent(ac.ScriptedProvider([]), compression={"max_deepness": 1}),
        lambda: ac.ScriptedProvider([{"kind": "reply", "text": "hi"}]),
        lambda: ac.ScriptedProvider([{"error": {"error": "server"}}]),
        lambda: ac.OpenAICompatible("m", http={"connect_timeout": 2}),
        lambda: _native.provider_configured({"kind": "gemini", "model": "m", "timeout": 1}),
        lambda: _native.SqliteStore("/tmp/never-created.db", {"busy_timeout": 1}),
        lambda: _native.filesystem_tools({"root": "/tmp", "shell_inherit_all": True}),
        lambda: ac.fs_tools("/tmp", shell_env={"inherit": True}),
        lambda: _native.page_tools(StubHost(), {"settle_timeout": 1}),
        lambda: ac.page_tools(StubHost(), scrape={"allow_loopbak": True}),
    ],
    ids=[
        "agent-config",
        "compression",
        "step",
        "step-error",
        "http",
        "provider",
        "sqlite",
        "fs-policy",
        "shell-env",
        "page-tools",
        "scrape",
    ],
)
def test_an_unknown_key_is_a_config_error_naming_it(build):
    with pytest.raises(ac.ConfigError, match=r"unknown field `\w+`, expected") as info:
        build()
    assert "`" in str(info.value)


def test_an_unknown_agent_key_lists_the_known_ones():
    with pytest.raises(ac.ConfigError) as info:
        ac.Agent(ac.ScriptedProvider([]), tool_timeout=5)
    message = str(info.value)
    assert "unknown field `tool_timeout`" in message and "`tool_timeout_ms`" in message


async def test_unknown_keys_of_async_entry_points():
    with pytest.raises(ac.ConfigError, match="unknown field `launch_timeout`"):
        await _native.CdpHost.launch({"launch_timeout": 1})
    with pytest.raises(ac.ConfigError, match="unknown field `connect_timeout`"):
        await _native.McpClient.connect("x", {"command": "node", "connect_timeout": 1})
    with pytest.raises(TypeError, match="call_timeout"):
        await ac.McpClient.connect("x", command="node", call_timeout=1)  # type: ignore[call-arg]


# --- durations in milliseconds -----------------------------------------------------------------


async def test_tool_timeout_ms_ends_a_slow_tool():
    @ac.tool
    async def slow() -> str:
        """Sleeps."""
        await asyncio.sleep(30)
        return "late"

    agent = ac.Agent(ac.ScriptedProvider([ac.ToolCallStep("slow"), "gave up"]), tools=[slow], tool_timeout_ms=100)
    session = await agent.create_session()
    started = time.monotonic()
    outcome, events = await run_and_collect(session.send("go"))
    assert time.monotonic() - started < 10
    assert outcome.status == "done" and outcome.final_text == "gave up"
    failed = next(e for e in events if e.type == "tool_call_failed")
    assert "timed out" in failed.error


async def test_model_timeout_ms_ends_a_hanging_model():
    agent = ac.Agent(ac.ScriptedProvider([ac.Hang("thinking")]), config=ac.AgentConfig(model_timeout_ms=100))
    session = await agent.create_session()
    started = time.monotonic()
    outcome = await session.send("go")
    assert time.monotonic() - started < 10
    assert outcome.status == "error" and outcome.error_kind == "provider.timeout", outcome


async def test_delay_ms_is_milliseconds():
    agent = ac.Agent(ac.ScriptedProvider([ac.Delay(200, ac.Reply("late"))]))
    session = await agent.create_session()
    started = time.monotonic()
    assert (await session.send("go")).final_text == "late"
    assert 0.2 <= time.monotonic() - started < 10
