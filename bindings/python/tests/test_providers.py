"""Real provider adapters against a loopback OpenAI-compatible server; env configuration."""

import pytest

import agent_core as ac
from conftest import run_and_collect, types
from mock_openai import MockOpenAI
from mock_responses import MockResponses


@ac.tool
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


async def test_openai_compatible_against_a_local_server():
    with MockOpenAI() as server:
        provider = ac.OpenAICompatible("mock-model", api_key="sk-test", base_url=server.base_url)
        assert provider.id == "openai-compatible" and provider.model == "mock-model"
        agent = ac.Agent(provider, tools=[add], system_prompt="Be brief.")
        session = await agent.create_session()
        outcome, events = await run_and_collect(session.send("What is 2 + 3?"))
        assert outcome.status == "done", outcome
        assert outcome.final_text == "The answer is 5."
        assert outcome.usage.input_tokens == 22 and outcome.usage.output_tokens == 14
        assert "tool_call_succeeded" in types(events)
        first = server.requests[0]
        assert first["path"] == "/v1/chat/completions" and first["auth"] == "Bearer sk-test"
        assert first["body"]["model"] == "mock-model" and first["body"]["stream"] is True
        assert first["body"]["messages"][0] == {"role": "system", "content": "Be brief."}
        assert first["body"]["tools"][0]["function"]["name"] == "add"
        assert first["body"]["tools"][0]["function"]["parameters"]["required"] == ["a", "b"]


async def test_provider_errors_keep_the_rust_text():
    with MockOpenAI(status=401) as server:
        provider = ac.OpenAICompatible("mock-model", api_key="bad", base_url=server.base_url, http={"max_attempts": 1})
        agent = ac.Agent(provider)
        session = await agent.create_session()
        outcome = await session.send("hi")
        assert outcome.status == "error" and outcome.error_kind == "provider.auth"
        assert "authentication failed (HTTP 401)" in outcome.error and "invalid api key" in outcome.error


async def test_a_response_past_a_byte_cap_fails_naming_the_cap():
    # The mock's tool call carries `{"a": 2, "b": 3}`: more than 4 bytes of arguments.
    with MockOpenAI() as server:
        provider = ac.OpenAICompatible(
            "mock-model", api_key="k", base_url=server.base_url, http={"max_tool_args_bytes": 4, "max_attempts": 1}
        )
        session = await ac.Agent(provider, tools=[add]).create_session()
        outcome = await session.send("What is 2 + 3?")
        assert outcome.status == "error" and outcome.error_kind == "provider.malformed", outcome
        assert "max_tool_args_bytes" in outcome.error


async def test_fallback_router_moves_on_after_a_retryable_error():
    with MockOpenAI() as server:
        down = ac.OpenAICompatible(
            "m", api_key="k", base_url="http://127.0.0.1:9/v1", http={"max_attempts": 1, "connect_timeout_ms": 2000}
        )
        up = ac.OpenAICompatible("mock-model", api_key="k", base_url=server.base_url)
        agent = ac.Agent(ac.FallbackRouter(down, up))
        session = await agent.create_session()
        outcome, events = await run_and_collect(session.send("hi"))
        assert outcome.final_text == "The answer is no tools."
        routed = [e for e in events if e.type == "model_routed"]
        assert routed and routed[-1].model == "mock-model"


def test_provider_from_env(monkeypatch):
    for name in ("LLM_PROVIDER", "LLM_MODEL", "LLM_API_KEY", "LLM_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ac.ConfigError, match="LLM_PROVIDER is not set"):
        ac.provider_from_env()
    monkeypatch.setenv("LLM_PROVIDER", "unknown-provider")
    with pytest.raises(ac.ConfigError, match="^Unknown LLM provider: unknown-provider$"):
        ac.provider_from_env()
    monkeypatch.setenv("LLM_PROVIDER", "anthropic")
    monkeypatch.setenv("LLM_MODEL", "claude-x")
    with pytest.raises(ac.ConfigError, match="LLM_API_KEY"):
        ac.provider_from_env()
    monkeypatch.setenv("LLM_API_KEY", "sk-ant-secret")
    provider = ac.provider_from_env()
    assert provider.id == "anthropic" and provider.model == "claude-x"
    assert "sk-ant-secret" not in repr(provider)
    with pytest.raises(ac.ConfigError, match="unknown variant `nope`"):
        ac.Provider(ac._native.provider_configured({"kind": "nope", "model": "m"}))


@ac.tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Rain in {city}"


async def test_openai_responses_against_a_local_server():
    # The fixtures are constructed from the public API reference (see their README).
    with MockResponses("stream-tool-call.sse", "stream-text.sse") as server:
        provider = ac.OpenAIResponses("gpt-4.1", api_key="sk-test", base_url=server.base_url)
        assert provider.id == "openai-responses" and provider.model == "gpt-4.1"
        agent = ac.Agent(provider, tools=[get_weather], system_prompt="You are terse.")
        session = await agent.create_session()
        outcome, events = await run_and_collect(session.send("Weather in New York?"))
        assert outcome.status == "done", outcome
        assert outcome.final_text.startswith("Olá! I can't check live weather")
        assert "tool_call_succeeded" in types(events)
        assert outcome.usage.cached_input_tokens >= 1152, outcome.usage  # the text fixture's cached_tokens
        first, second = server.requests
        assert first["path"] == "/v1/responses"
        assert first["body"]["store"] is False and first["body"]["stream"] is True
        assert first["body"]["instructions"] == "You are terse."
        assert first["body"]["tools"][0]["name"] == "get_weather"
        # The second request carries the call and its output as input items.
        kinds = [item.get("type") for item in second["body"]["input"]]
        assert "function_call" in kinds and "function_call_output" in kinds, kinds
        output = next(i for i in second["body"]["input"] if i.get("type") == "function_call_output")
        assert "Rain in New York City" in output["output"]


async def test_openai_responses_reasoning_summaries_can_be_turned_off():
    # A reasoning model asks for summaries by default; an organization OpenAI has not
    # verified turns them off and still gets the encrypted reasoning.
    for summary, expected in ((None, {"summary": "auto"}), ("detailed", {"summary": "detailed"}), ("off", None)):
        with MockResponses("stream-text.sse") as server:
            provider = ac.OpenAIResponses("gpt-5", base_url=server.base_url, reasoning_summary=summary)
            outcome = await (await ac.Agent(provider).create_session()).send("hi")
            assert outcome.status == "done", outcome
            body = server.requests[0]["body"]
            assert body.get("reasoning") == expected, body
            assert body["include"] == ["reasoning.encrypted_content"]
