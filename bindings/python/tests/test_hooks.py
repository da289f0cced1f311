"""Lifecycle hooks from Python: a redacting before_model_call keeps a secret out of every
request; after_model_call edits the answer; before_tool_call denies, rewrites (checked again
against the schema) or fails; after_tool_call rewrites a result; turn_ended sees the Outcome;
hooks run in order, sync or async; a hook that raises ends the turn with error_kind "hook"."""

import pytest

import agent_core as ac
from conftest import run_and_collect


def echo(text: str) -> str:
    """Echoes a text."""
    return f"echo: {text}"


def script(text):
    """Calls echo with ``text`` once, then answers with the tool results it saw."""

    def choose(request):
        results = ["".join(p.get("text", "") for p in m["content"]) for m in request["messages"] if m["role"] == "tool"]
        if not results:
            return ac.ToolCallStep("echo", {"text": text})
        return ac.Reply("results: " + " | ".join(results))

    return ac.ScriptedProvider.from_fn(choose, record_requests=True)


class Redact:
    def before_model_call(self, session_id, request):
        for message in request["messages"]:
            for part in message["content"]:
                if part.get("type") == "text":
                    part["text"] = part["text"].replace("sk-SECRET", "[redacted]")
            for call in message.get("tool_calls") or []:
                call["arguments"] = call["arguments"].replace("sk-SECRET", "[redacted]")
        return request

    async def after_tool_call(self, call, result):
        if result["ok"]:
            result["content"] = [
                {"type": "text", "text": p["text"].replace("sk-SECRET", "[redacted]")} for p in result["content"]
            ]
            return result
        return None


async def test_a_redacting_hook_keeps_the_secret_from_every_request():
    provider = script("the key is sk-SECRET")
    agent = ac.Agent(provider, tools=[echo], hooks=[Redact()])
    outcome, _ = await run_and_collect((await agent.create_session()).send("use sk-SECRET"))
    assert outcome.status == "done", outcome
    sent = repr(provider.requests())
    assert "sk-SECRET" not in sent
    assert "use [redacted]" in sent and "echo: the key is [redacted]" in sent


class Decide:
    def __init__(self):
        self.ended = []

    async def before_tool_call(self, call):
        assert call["tool"] == "echo" and call["session_id"]
        text = call["arguments"]["text"]
        if text == "deny":
            return {"deny": "echo is not for that"}
        if text == "rewrite":
            return {"arguments": {"text": "rewritten"}}
        if text == "bad":
            return {"arguments": {"text": 7}}
        if text == "explode":
            raise RuntimeError("the policy server is down")
        if text == "nonsense":
            return 42
        return None

    def turn_ended(self, session_id, outcome):
        assert isinstance(outcome, ac.Outcome)
        self.ended.append(outcome.status)


@pytest.mark.parametrize(
    "text, answer",
    [
        ("deny", "denied by the host: echo is not for that. echo did not run."),
        ("rewrite", "echo: rewritten"),
        ("bad", "the host rewrote the arguments of echo into ones its schema refuses"),
        ("fine", "echo: fine"),
    ],
)
async def test_before_tool_call_allows_denies_and_rewrites(text, answer):
    hooks = Decide()
    agent = ac.Agent(script(text), tools=[echo], hooks=[hooks])
    outcome, _ = await run_and_collect((await agent.create_session()).send("go"))
    assert outcome.status == "done", outcome
    assert answer in outcome.final_text
    assert hooks.ended == ["done"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("explode", "the host's before_tool_call hook failed: RuntimeError: the policy server is down"),
        ("nonsense", "the host's before_tool_call hook failed: it returned 42"),
    ],
)
async def test_a_failing_hook_ends_the_turn_with_the_hook_kind(text, message):
    hooks = Decide()
    agent = ac.Agent(script(text), tools=[echo], hooks=[hooks])
    outcome, _ = await run_and_collect((await agent.create_session()).send("go"))
    assert outcome.status == "error" and outcome.error_kind == "hook", outcome
    assert outcome.error.startswith(message), outcome.error
    assert hooks.ended == ["error"]


class Tag:
    def __init__(self, name):
        self.name = name

    def after_model_call(self, session_id, response):
        message = response["message"]
        if not message.get("tool_calls"):
            text = "".join(p.get("text", "") for p in message["content"])
            message["content"] = [{"type": "text", "text": f"{text} +{self.name}"}]
            return response
        return None


async def test_hooks_run_in_order_and_edit_the_answer():
    agent = ac.Agent(script("x"), tools=[echo], hooks=[Tag("first"), Tag("second")])
    outcome, _ = await run_and_collect((await agent.create_session()).send("go"))
    assert outcome.final_text == "results: echo: x +first +second"


async def test_an_object_without_hook_methods_is_refused():
    with pytest.raises(TypeError, match="none of the hook methods"):
        ac.Agent(script("x"), hooks=[object()])
    bad = type("Bad", (), {"before_model_call": lambda self, s, r: {"messages": 3}})()
    outcome, _ = await run_and_collect((await ac.Agent(script("x"), hooks=[bad]).create_session()).send("go"))
    assert outcome.error_kind == "hook" and "it returned an invalid request" in outcome.error, outcome
