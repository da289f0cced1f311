"""Model providers. Real adapters (OpenAI-compatible, Anthropic, Gemini) come from the
``agent-providers`` crate when it is built in; :class:`ScriptedProvider` replays a script."""

from __future__ import annotations


from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native

__all__ = [
    "Provider",
    "ScriptedProvider",
    "Reply",
    "ToolCallStep",
    "ProviderFailure",
    "FailAfter",
    "Delay",
    "Hang",
    "Step",
    "OpenAICompatible",
    "Anthropic",
    "Gemini",
    "FallbackRouter",
    "provider_from_env",
]


class Provider:
    """A model provider handle. Build one with :class:`ScriptedProvider` (or a real adapter)."""

    def __init__(self, native: _native.Provider) -> None:
        self._native = native

    @property
    def id(self) -> str:
        """A short identifier such as ``openai-compatible``."""
        return self._native.id

    @property
    def model(self) -> str:
        """The model's name, when known."""
        return self._native.model

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r}, model={self.model!r})"


@dataclass
class Reply:
    """A scripted model answer: text, optional reasoning, and tool calls.

    ``tool_calls`` items are ``(name, arguments)`` pairs; arguments are a dict, or a string sent
    verbatim (so a script can send malformed JSON on purpose).
    """

    text: str = ""
    tool_calls: Sequence[Tuple[str, Union[Mapping[str, Any], str]]] = ()
    reasoning: Optional[str] = None
    usage: Optional[Mapping[str, int]] = None

    def _to_dict(self) -> Dict[str, Any]:
        return {
            "kind": "reply",
            "text": self.text,
            "reasoning": self.reasoning,
            "tool_calls": [{"name": n, "arguments": a} for n, a in self.tool_calls],
            "usage": dict(self.usage) if self.usage else None,
        }


def ToolCallStep(name: str, arguments: Union[Mapping[str, Any], str, None] = None, text: str = "") -> Reply:
    """A reply that calls one tool."""
    return Reply(text=text, tool_calls=[(name, {} if arguments is None else arguments)])


@dataclass
class ProviderFailure:
    """A model call that fails before streaming. ``error`` is the kind: ``rate_limited``,
    ``timeout``, ``transport``, ``server``, ``auth``, ``bad_request``, ``context_overflow``,
    ``malformed``, ``config`` or ``cancelled``."""

    error: str = "server"
    message: str = ""
    status: Optional[int] = None
    retry_after: Optional[float] = None

    def _to_dict(self) -> Dict[str, Any]:
        return {
            "kind": "error",
            "error": self.error,
            "message": self.message,
            "status": self.status,
            "retry_after": self.retry_after,
        }


@dataclass
class FailAfter:
    """Streams the reply's text, then fails with the error."""

    reply: Reply
    error: ProviderFailure

    def _to_dict(self) -> Dict[str, Any]:
        return {"kind": "fail_after", "reply": self.reply._to_dict(), "error": self.error._to_dict()}


@dataclass
class Delay:
    """Waits ``seconds`` inside the model call (a slow model), then does ``then``."""

    seconds: float
    then: "Step" = field(default_factory=Reply)

    def _to_dict(self) -> Dict[str, Any]:
        return {"kind": "delay", "seconds": self.seconds, "then": _step(self.then)}


@dataclass
class Hang:
    """Streams ``text`` and then never finishes (until cancelled or timed out)."""

    text: str = ""

    def _to_dict(self) -> Dict[str, Any]:
        return {"kind": "hang", "text": self.text}


Step = Union[Reply, ProviderFailure, FailAfter, Delay, Hang, str]


def _step(step: Any) -> Dict[str, Any]:
    if isinstance(step, str):
        return Reply(step)._to_dict()
    if isinstance(step, dict):
        return step
    to_dict = getattr(step, "_to_dict", None)
    if to_dict is None:
        raise TypeError(f"not a script step: {step!r}")
    result: Dict[str, Any] = to_dict()
    return result


class ScriptedProvider(Provider):
    """**Not a language model.** Replays a fixed script, one step per model call, through the
    same streaming path real adapters use: for tests, benchmarks and offline demos.

    Steps: :class:`Reply` (or a plain string), :class:`ProviderFailure`, :class:`FailAfter`,
    :class:`Delay`, :class:`Hang`. When the script runs out, the call fails saying so.
    :meth:`from_fn` chooses each step from the request instead.
    """

    def __init__(self, steps: Sequence[Step] = (), *, record_requests: bool = False) -> None:
        super().__init__(_native.Provider.scripted([_step(s) for s in steps], record_requests))

    @classmethod
    def from_fn(
        cls, choose: Callable[[Dict[str, Any]], Step], *, record_requests: bool = False
    ) -> "ScriptedProvider":
        """A provider whose steps come from ``choose(request)``, where ``request`` is the model
        request as a dict (``system``, ``messages``, ``tools``, ...). ``choose`` runs
        synchronously on a runtime thread: keep it fast."""
        self = cls.__new__(cls)
        Provider.__init__(self, _native.Provider.scripted_fn(lambda req: _step(choose(req)), record_requests))
        return self

    @property
    def call_count(self) -> int:
        """Model calls made."""
        return self._native.call_count()

    def requests(self) -> List[Dict[str, Any]]:
        """The requests received (when built with ``record_requests=True``)."""
        return self._native.requests()

    @property
    def live_streams(self) -> int:
        """Response streams alive now (0 once every call ended or was dropped)."""
        return self._native.live_streams()


def tool_results(request: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """Helper for :meth:`ScriptedProvider.from_fn`: the tool messages of a request, each as
    ``{"name", "tool_call_id", "text", "is_error"}``."""
    out = []
    for m in request.get("messages", []):
        if m.get("role") == "tool":
            text = "".join(p.get("text", "") for p in m.get("content", []) if p.get("type") == "text")
            out.append(
                {
                    "name": m.get("name") or m.get("tool_name"),
                    "tool_call_id": m.get("tool_call_id"),
                    "text": text,
                    "is_error": bool(m.get("is_error")),
                }
            )
    return out




class _Configured(Provider):
    _kind = ""

    def __init__(
        self,
        model: str,
        api_key: str = "",
        *,
        base_url: Optional[str] = None,
        streaming: bool = True,
        max_input_tokens: Optional[int] = None,
        headers: Optional[Mapping[str, str]] = None,
        http: Optional[Mapping[str, Any]] = None,
    ) -> None:
        super().__init__(
            _native.provider_configured(
                self._kind,
                model,
                api_key,
                base_url,
                streaming,
                max_input_tokens,
                list((headers or {}).items()),
                dict(http) if http else None,
            )
        )


class OpenAICompatible(_Configured):
    """OpenAI Chat Completions and servers that copy it (OpenAI, OpenRouter, Ollama, LM Studio,
    Groq, DeepSeek, LiteLLM, vLLM). ``base_url`` defaults to ``https://api.openai.com/v1``; an
    empty ``api_key`` sends no authentication header (local servers).

    ``http`` sets timeouts (seconds) and retries: ``connect_timeout``, ``read_timeout``,
    ``idle_timeout``, ``call_timeout``, ``max_attempts``, ``backoff_base``, ``backoff_max``,
    ``max_retry_after``, ``user_agent``; and what one response may hold (past a cap the call
    fails ``provider.malformed`` naming it): ``max_response_bytes`` (64 MiB),
    ``max_error_body_bytes`` (64 KiB), ``max_tool_args_bytes`` (1 MiB), ``max_tool_calls`` (128).
    """

    _kind = "openai-compatible"


class Anthropic(_Configured):
    """Anthropic Messages (streaming, tool use, thinking)."""

    _kind = "anthropic"


class Gemini(_Configured):
    """Google Gemini generateContent (``base_url`` is ignored)."""

    _kind = "gemini"


def provider_from_env() -> Provider:
    """The provider ``LLM_PROVIDER`` (``openai-compatible`` | ``anthropic`` | ``gemini``),
    ``LLM_MODEL``, ``LLM_API_KEY`` and ``LLM_BASE_URL`` describe. A missing variable raises
    :class:`ConfigError` naming it; an unknown provider raises ``Unknown LLM provider: <name>``."""
    return Provider(_native.provider_from_env())


class FallbackRouter(Provider):
    """Tries ``primary``, then each fallback in order on retryable errors (429, 5xx,
    timeouts, transport), only before the first streamed content."""

    def __init__(self, primary: Provider, *fallbacks: Provider) -> None:
        super().__init__(_native.provider_fallback(primary._native, [f._native for f in fallbacks]))
