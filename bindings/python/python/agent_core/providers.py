"""Model providers. Real adapters (OpenAI-compatible, Anthropic, Gemini) come from the
``agent-providers`` crate when it is built in; :class:`ScriptedProvider` replays a script."""

from __future__ import annotations


from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Literal, Mapping, Optional, Sequence, Tuple, TypedDict, Union

from . import _native
from ._options import options, plain

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
    "HttpConfig",
    "OpenAICompatible",
    "OpenAIResponses",
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


def _drop_none(d: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


@dataclass
class Reply:
    """A scripted model answer: text, optional reasoning, and tool calls (the ScriptStepSpec
    reply shape ``{"text", "reasoning", "tool_calls": [{"name", "arguments"}], "usage"}``).

    ``tool_calls`` items are ``(name, arguments)`` pairs (or ``{"name", "arguments"}`` dicts);
    arguments are a dict, or a string sent verbatim (so a script can send malformed JSON on
    purpose). ``usage`` takes the keys of :class:`Usage` (``input_tokens`` and
    ``output_tokens`` required).
    """

    text: str = ""
    tool_calls: Sequence[Union[Tuple[str, Union[Mapping[str, Any], str]], Mapping[str, Any]]] = ()
    reasoning: Optional[str] = None
    usage: Optional[Mapping[str, int]] = None

    def _to_dict(self) -> Dict[str, Any]:
        return _drop_none(
            {
                "text": self.text,
                "reasoning": self.reasoning,
                "tool_calls": [_call(c) for c in self.tool_calls],
                "usage": plain(self.usage),
            }
        )


def _call(call: Any) -> Dict[str, Any]:
    if isinstance(call, Mapping):
        return dict(call)
    name, arguments = call
    return {"name": name, "arguments": arguments}


def ToolCallStep(name: str, arguments: Union[Mapping[str, Any], str, None] = None, text: str = "") -> Reply:
    """A reply that calls one tool."""
    return Reply(text=text, tool_calls=[(name, {} if arguments is None else arguments)])


@dataclass
class ProviderFailure:
    """A model call that fails before streaming (the ScriptStepSpec ``error`` object).
    ``kind``: ``rate_limited``, ``timeout``, ``transport``, ``server`` (the default),
    ``auth``, ``bad_request``, ``context_overflow``, ``malformed``, ``config`` or
    ``cancelled``. ``status`` is the HTTP status of ``server`` (500) and ``auth`` (401);
    ``retry_after_ms`` the ``Retry-After`` of ``rate_limited``, in milliseconds."""

    kind: str = "server"
    message: Optional[str] = None
    status: Optional[int] = None
    retry_after_ms: Optional[float] = None

    def _error(self) -> Dict[str, Any]:
        return _drop_none(
            {"kind": self.kind, "message": self.message, "status": self.status, "retry_after_ms": self.retry_after_ms}
        )

    def _to_dict(self) -> Dict[str, Any]:
        return {"error": self._error()}


@dataclass
class FailAfter:
    """Streams the reply's text, then fails with the error."""

    reply: Reply
    error: ProviderFailure

    def _to_dict(self) -> Dict[str, Any]:
        return {**self.reply._to_dict(), "error": self.error._error()}


@dataclass
class Delay:
    """Waits ``delay_ms`` milliseconds inside the model call (a slow model), then does
    ``then``."""

    delay_ms: float
    then: "Step" = field(default_factory=Reply)

    def _to_dict(self) -> Dict[str, Any]:
        return {"delay_ms": self.delay_ms, "then": _step(self.then)}


@dataclass
class Hang:
    """Streams ``text`` and then never finishes (until cancelled or timed out)."""

    text: str = ""

    def _to_dict(self) -> Dict[str, Any]:
        return {"hang": self.text}


Step = Union[Reply, ProviderFailure, FailAfter, Delay, Hang, str, Mapping[str, Any]]
"""One step of a script: a helper object, a string (a text reply), or a dict in the
ScriptStepSpec format (``{"text", "reasoning", "tool_calls", "usage", "error"}``,
``{"delay_ms", "then"}`` or ``{"hang"}``)."""


def _step(step: Any) -> Any:
    if isinstance(step, (str, dict)):
        return step
    if isinstance(step, Mapping):
        return dict(step)
    to_dict = getattr(step, "_to_dict", None)
    if to_dict is None:
        raise TypeError(f"not a script step: {step!r}")
    return to_dict()


class ScriptedProvider(Provider):
    """**Not a language model.** Replays a fixed script, one step per model call, through the
    same streaming path real adapters use: for tests, benchmarks and offline demos.

    Steps: :class:`Reply` (or a plain string), :class:`ProviderFailure`, :class:`FailAfter`,
    :class:`Delay`, :class:`Hang`, or dicts in the same format (ScriptStepSpec in
    ``api/options.json``); an unknown key raises :class:`ConfigError`. When the script runs
    out, the call fails saying so.
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




class HttpConfig(TypedDict, total=False):
    """Timeouts, retries and response caps of a real provider (``http=``; HttpConfig in
    ``api/options.json``). Durations are milliseconds. A missing key keeps its default (in
    brackets). Past a cap the call fails ``provider.malformed`` naming it."""

    connect_timeout_ms: float
    """Establishing the TCP/TLS connection [30000]."""
    read_timeout_ms: float
    """Waiting for the response headers, and for a whole non-streamed body [60000]."""
    idle_timeout_ms: float
    """The longest silence between two chunks of a streamed body [120000]."""
    call_timeout_ms: float
    """The whole model call, retries and stream included [180000]."""
    max_attempts: int
    """Attempts per call, the first included [3]."""
    backoff_base_ms: float
    """The first backoff delay; each retry doubles it, with full jitter [500]."""
    backoff_max_ms: float
    """The largest backoff delay [8000]."""
    max_retry_after_ms: float
    """The longest ``Retry-After`` honoured; a server asking for more fails the call [60000]."""
    user_agent: str
    """Sent as ``User-Agent`` [agent-providers/<version>]."""
    proxy: Optional[str]
    """An HTTP(S) proxy URL for every request [None: no proxy; the environment is not read]."""
    max_response_bytes: int
    """The most bytes of one response body [64 MiB]."""
    max_error_body_bytes: int
    """The most bytes of an error body read [64 KiB]."""
    max_tool_args_bytes: int
    """The most bytes of one tool call's arguments [1 MiB]."""
    max_tool_calls: int
    """The most tool calls in one response [128]."""


class _Configured(Provider):
    _kind = ""

    def __init__(
        self,
        model: str,
        *,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        http: Optional[HttpConfig] = None,
        streaming: Optional[bool] = None,
        max_input_tokens: Optional[int] = None,
        headers: Optional[Mapping[str, str]] = None,
        prompt_cache: Optional[Literal["auto", "static", "off"]] = None,
        reasoning_summary: Optional[Literal["auto", "concise", "detailed", "off"]] = None,
    ) -> None:
        """A provider (ProviderConfig in ``api/options.json``; ``kind`` is the class).

        Args:
            model: The model name sent to the provider.
            api_key: The API key; none (or empty) sends no authentication header (local
                servers).
            base_url: Overrides the provider's default base URL.
            http: Timeouts, retries and response caps (:class:`HttpConfig`).
            streaming: Stream the answer over SSE (default True) or make a plain JSON call.
            max_input_tokens: The model's context window in tokens, when known (compaction).
            headers: Extra request headers (for example OpenRouter's ``HTTP-Referer``).
            prompt_cache: Anthropic prompt caching: ``"auto"`` (default; breakpoints on the
                last tool, the system prompt and the newest messages), ``"static"`` (tools
                and system prompt only) or ``"off"``. The other providers ignore it.
            reasoning_summary: OpenAI Responses: the reasoning summaries asked of reasoning
                models, ``"auto"`` (default), ``"concise"``, ``"detailed"`` or ``"off"``
                (OpenAI sends them only to verified organizations and refuses the request of
                one it has not verified). The other providers ignore it.
        """
        super().__init__(
            _native.provider_configured(
                options(
                    kind=self._kind,
                    model=model,
                    api_key=api_key,
                    base_url=base_url,
                    http=http,
                    streaming=streaming,
                    max_input_tokens=max_input_tokens,
                    headers=headers,
                    prompt_cache=prompt_cache,
                    reasoning_summary=reasoning_summary,
                )
            )
        )


class OpenAICompatible(_Configured):
    """OpenAI Chat Completions and servers that copy it (OpenAI, OpenRouter, Ollama, LM Studio,
    Groq, DeepSeek, LiteLLM, vLLM). ``base_url`` defaults to ``https://api.openai.com/v1``;
    without an ``api_key`` no authentication header is sent (local servers).

    ``http`` (:class:`HttpConfig`) sets timeouts in milliseconds (``connect_timeout_ms``,
    ``read_timeout_ms``, ``idle_timeout_ms``, ``call_timeout_ms``), retries (``max_attempts``,
    ``backoff_base_ms``, ``backoff_max_ms``, ``max_retry_after_ms``), ``user_agent``,
    ``proxy``, and what one response may hold (past a cap the call fails
    ``provider.malformed`` naming it): ``max_response_bytes`` (64 MiB),
    ``max_error_body_bytes`` (64 KiB), ``max_tool_args_bytes`` (1 MiB), ``max_tool_calls`` (128).
    """

    _kind = "openai-compatible"


class OpenAIResponses(_Configured):
    """OpenAI's Responses API (``/v1/responses``), which the newest OpenAI models need.
    Requests are sent with ``store: false``; reasoning models' encrypted reasoning is kept in
    the transcript and sent back, so multi-turn reasoning needs no state on OpenAI's side.
    ``base_url`` defaults to ``https://api.openai.com/v1``; the options are
    :class:`OpenAICompatible`'s."""

    _kind = "openai-responses"


class Anthropic(_Configured):
    """Anthropic Messages (streaming, tool use, thinking)."""

    _kind = "anthropic"


class Gemini(_Configured):
    """Google Gemini generateContent (``base_url`` is ignored)."""

    _kind = "gemini"


def provider_from_env() -> Provider:
    """The provider ``LLM_PROVIDER`` (``openai-compatible`` | ``openai-responses`` |
    ``anthropic`` | ``gemini``),
    ``LLM_MODEL``, ``LLM_API_KEY`` and ``LLM_BASE_URL`` describe. A missing variable raises
    :class:`ConfigError` naming it; an unknown provider raises ``Unknown LLM provider: <name>``."""
    return Provider(_native.provider_from_env())


class FallbackRouter(Provider):
    """Tries ``primary``, then each fallback in order on retryable errors (429, 5xx,
    timeouts, transport), only before the first streamed content."""

    def __init__(self, primary: Provider, *fallbacks: Provider) -> None:
        super().__init__(_native.provider_fallback(primary._native, [f._native for f in fallbacks]))
