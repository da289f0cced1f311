"""Agents, sessions, runs, events and outcomes."""

from __future__ import annotations

import asyncio
import enum
import inspect
import types
from dataclasses import dataclass, field, fields
from typing import (
    TYPE_CHECKING,
    Any,
    AsyncIterator,
    Awaitable,
    Callable,
    Dict,
    Generator,
    List,
    Mapping,
    Literal,
    Optional,
    Sequence,
    Type,
    TypedDict,
    TypeVar,
    Union,
    overload,
)

from . import _native
from ._approvals import ApprovalCall, ApprovalRule, Ask, Decision, approval_fields, decisions_dict
from ._options import plain
from .errors import RunError
from .providers import Provider
from .stores import Store
from .tools import NativeTools, Tool

if TYPE_CHECKING:
    from ._typed import TypedRun

_T = TypeVar("_T")

__all__ = [
    "Agent",
    "AgentConfig",
    "CompactionConfig",
    "CompressionConfig",
    "Session",
    "Run",
    "RunStatus",
    "Event",
    "Outcome",
    "Usage",
    "GateRequest",
    "TurnOrigin",
    "Clarification",
    "Allow",
    "Deny",
    "GateDecision",
    "OUTCOME_STATUSES",
]

OUTCOME_STATUSES = ("done", "denied", "capped", "cancelled", "error", "awaiting_user", "awaiting_approval", "awaiting_tools")
"""Every way a turn can end."""


class _Default(enum.Enum):
    """The default of a setting whose ``None`` means something of its own (``max_tool_calls``:
    None is unlimited), so that leaving it out and passing None can differ."""

    DEFAULT = "default"

    def __repr__(self) -> str:
        return "<default>"


_DEFAULT = _Default.DEFAULT


def _given(key: str, value: Any) -> bool:
    """Whether a setting was given: not left at its default. None counts as given only for
    ``max_tool_calls``, where it means unlimited; anywhere else it keeps the default."""
    if value is _DEFAULT:
        return False
    return value is not None or key == "max_tool_calls"


class CompressionConfig(TypedDict, total=False):
    """Limits of the write-time JSON compression of tool results (``AgentConfig.compression``).
    A missing key keeps its default (in brackets)."""

    head_chars: int
    """Characters kept at the start of a shortened string [100]."""
    keep_array_items: int
    """How many items a shortened array keeps [3]."""
    max_array_items: int
    """Arrays with more items than this are shortened [5]."""
    max_depth: int
    """Values nested deeper than this become ``"[deep nested]"`` (the root is depth 0) [5]."""
    max_value_chars: int
    """Strings with more characters than this are shortened [500]."""
    tail_chars: int
    """Characters kept at the end of a shortened string [50]."""


class CompactionConfig(TypedDict, total=False):
    """When and how older turns are compacted to fit the model's context window
    (``AgentConfig.compaction``). A missing key keeps its default (in brackets)."""

    chars_per_token: float
    """Characters per token of the uncalibrated estimate [4.0]."""
    enabled: bool
    """Whether to compact at all [True]."""
    max_attempts: int
    """Tries at summarising before falling back to the trim [3]."""
    max_input_tokens: Optional[int]
    """The model's input window in tokens; None asks the provider [None]."""
    ratio: float
    """Compact when the estimated input exceeds ``ratio * max_input_tokens`` [0.7]."""
    summary_max_tokens: int
    """Output tokens requested for the summary [1024]."""


class ModelPrice(TypedDict, total=False):
    """One model's prices in US dollars per million tokens (``AgentConfig.prices``).
    ``input`` and ``output`` are required; the others default to them."""

    input: float
    """Input tokens neither read from nor written to the cache."""
    cached_input: float
    """Input tokens read from the provider's cache [the input price]."""
    cache_write: float
    """Input tokens written to the provider's cache, as Anthropic bills them [the input price]."""
    output: float
    """Generated tokens."""
    reasoning: float
    """Reasoning tokens, for a provider that bills them apart from other output; they are
    counted within the output tokens and billed at this price instead [the output price]."""


@dataclass
class AgentConfig:
    """The loop's limits and defaults: the keys of the Rust ``AgentConfig``. ``None`` keeps the
    core's default (shown in brackets), except for ``max_tool_calls``, whose default is left
    out and where ``None`` means unlimited. Durations are milliseconds, in fields ending
    ``_ms``.
    """

    max_iterations: Optional[int] = None
    """Model calls per turn before the turn ends ``capped`` [100]."""
    max_tool_calls: Union[int, None, Literal[_Default.DEFAULT]] = _DEFAULT
    """Tool calls per turn before the turn ends ``capped``, with a message saying the limit was
    reached [12]. Leave it out for the default, give a number for another cap, or ``None``
    for no cap at all (``AgentConfig(max_tool_calls=None)``)."""
    max_repeated_calls: Optional[int] = None
    """The same tool called with the same arguments and getting the same result (or failing)
    this many times in a row gets a note telling the model it is stuck; one more such call
    ends the turn ``capped`` with its own message [3]. ``0`` turns the guard off."""
    model_timeout_ms: Optional[float] = None
    """The whole model call, stream included, in milliseconds [180000]."""
    tool_timeout_ms: Optional[float] = None
    """A tool call, unless the tool sets its own timeout, in milliseconds [60000]."""
    max_parallel_tools: Optional[int] = None
    """Parallel-safe tools running at once [3]."""
    result_cap_chars: Optional[int] = None
    """Characters of a tool result sent to the model [20000]."""
    on_denial: Optional[Literal["end_turn", "tell_model"]] = None
    """``"end_turn"`` (end the turn ``denied``) or ``"tell_model"`` [end_turn]."""
    event_buffer: Optional[int] = None
    """Events buffered per run for slow subscribers [1024]."""
    max_output_tokens: Optional[int] = None
    """Upper bound on generated tokens per model call [provider default]."""
    temperature: Optional[float] = None
    """Sampling temperature [provider default]."""
    compression: Optional[CompressionConfig] = None
    """Write-time JSON compression limits (:class:`CompressionConfig`)."""
    clarification_ttl_ms: Optional[float] = None
    """How long a clarification question waits for an answer, in milliseconds [1800000]."""
    approval_ttl_ms: Optional[float] = None
    """How long a turn parked for approval waits for the person, in milliseconds [1800000];
    then its calls do not run and the model is told."""
    compaction: Optional[CompactionConfig] = None
    """When and how older turns are compacted (:class:`CompactionConfig`)."""
    vision: Optional[Literal["auto", "on", "off"]] = None
    """Whether the model is sent images: ``"auto"`` (as the provider knows its model; a model
    it does not know is sent none), ``"on"`` or ``"off"`` [auto]. Without images, tools that
    return only images (page_screenshot) are not offered and every image becomes a note."""
    max_images: Optional[int] = None
    """Images sent per model call, the newest ones; older ones become a note [3]."""
    stream_tool_arguments: Optional[bool] = None
    """Whether the pieces of a tool call's arguments are ``tool_call_arguments_delta`` events as
    the model streams them, so a UI can show the call forming [False]."""
    agent_name: Optional[str] = None
    """The agent's name in traces: ``invoke_agent {name}`` spans and ``gen_ai.agent.name``
    [none: the span is named ``invoke_agent``]. See :func:`enable_tracing`."""
    trace_content: Optional[bool] = None
    """Whether traces carry what was said: messages and system prompt on ``chat`` spans, tool
    arguments and results on ``execute_tool`` spans [False]."""
    max_run_cost_usd: Optional[float] = None
    """US dollars a turn may spend (its model calls and its sub-agents'); before a model call
    that could pass it, the turn ends ``capped`` with its own message [none]. See
    ``docs/cost.md``."""
    max_session_cost_usd: Optional[float] = None
    """US dollars a session may spend over its turns in this process, checked the same way
    [none]."""
    prices: Optional[Dict[str, ModelPrice]] = None
    """Prices by model name (:class:`ModelPrice`) that replace or add to the built-in table
    [none: the built-in table alone]."""

    def _to_dict(self) -> Dict[str, Any]:
        return _config_dict(self)


@dataclass
class Usage:
    """Token counts. ``input_tokens`` includes the cache reads (``cached_input_tokens``) and
    cache writes (``cache_write_tokens``, reported by Anthropic and OpenRouter)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass
class SubAgentUsage:
    """What the sub-agent behind one tool (:func:`agent_tool`) spent in a turn; already counted
    in the turn's ``usage``."""

    tool: str
    calls: int = 0
    iterations: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: Optional[float] = None
    """What those calls cost in US dollars, as priced by the sub-agent; None when a price was
    unknown."""


@dataclass
class Outcome:
    """How a turn ended.

    ``status`` is one of ``done``, ``denied``, ``capped``, ``cancelled``, ``error``,
    ``awaiting_user`` (``clarification`` holds the question), ``awaiting_approval``
    (``approval`` holds the calls waiting for the person). ``error_source`` is the original Python exception when a Python callback
    (a tool's ``ToolError.fatal``) ended the turn.
    """

    status: str
    final_text: Optional[str] = None
    structured: Any = None
    """The final answer of a typed turn (:meth:`Session.send_typed`) as JSON data, checked
    against its schema; None for other turns and when the turn did not end ``done``."""
    iterations: int = 0
    tool_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: Optional[float] = None
    """What the turn's model calls cost in US dollars, sub-agents included; None when a
    call's price was unknown (see ``docs/cost.md``)."""
    session_cost_usd: Optional[float] = None
    """What the session's turns cost in this process, this one included; None when a call's
    price was unknown."""
    error: Optional[str] = None
    error_kind: Optional[str] = None
    error_source: Optional[BaseException] = None
    sub_agents: List[SubAgentUsage] = field(default_factory=list)
    """What sub-agents (:func:`agent_tool`) spent, per tool."""
    approval: Optional["PendingApproval"] = None
    """For ``awaiting_approval``: what waits for the person."""

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> "Outcome":
        return cls(
            status=d["status"],
            final_text=d.get("final_text"),
            structured=d.get("structured"),
            iterations=d.get("iterations", 0),
            tool_calls=d.get("tool_calls", 0),
            usage=Usage(**(d.get("usage") or {})),
            cost_usd=d.get("cost_usd"),
            session_cost_usd=d.get("session_cost_usd"),
            error=d.get("error"),
            error_kind=d.get("error_kind"),
            error_source=d.get("error_source"),
            sub_agents=[
                SubAgentUsage(
                    tool=a["tool"],
                    calls=a.get("calls", 0),
                    iterations=a.get("iterations", 0),
                    usage=Usage(**(a.get("usage") or {})),
                    cost_usd=a.get("cost_usd"),
                )
                for a in d.get("sub_agents") or []
            ],
            approval=PendingApproval._from_dict(d["approval"]) if d.get("approval") else None,
        )

    @property
    def ok(self) -> bool:
        """Whether the turn ended ``done``."""
        return self.status == "done"

    def parsed(self, tp: Type[_T]) -> _T:
        """The typed answer (``structured``) as ``tp``: a pydantic model, a dataclass, or a
        TypedDict / dict type (the data unchanged). Raises :class:`RunError` when the turn
        gave no typed answer."""
        from ._schema import converter

        if self.structured is None:
            self.raise_for_status()
            raise RunError("the turn gave no typed answer (it was not started with send_typed)")
        convert = converter(tp)
        value: _T = convert(self.structured) if convert is not None else self.structured
        return value

    def raise_for_status(self) -> "Outcome":
        """Returns self when the turn ended ``done``; otherwise raises :class:`RunError` (with
        the Python exception that caused it as ``__cause__``)."""
        if self.status == "done":
            return self
        err = RunError(self.error or f"the turn ended {self.status}", kind=self.error_kind or self.status)
        err.outcome = self
        raise err from self.error_source


@dataclass
class RunStatus:
    """A cheap snapshot of a run, for hosts that poll.

    ``state`` is one of ``idle``, ``thinking``, ``tool_call``, ``complete``, ``error``,
    ``cancelled``, ``awaiting_user`` (parked on a question), ``awaiting_approval`` (parked until
    the person answers a gated call). ``last_message`` is the latest assistant text; while the
    model streams an answer it is the text so far, growing with every streamed piece, so a
    host that polls can show progress.
    """

    state: str
    iteration: int = 0
    current_tool: Optional[str] = None
    last_message: Optional[str] = None
    error: Optional[str] = None


class Event(dict):  # type: ignore[type-arg]
    """One event of a run: a dict with the Rust event's fields (``type``, ``session_id``, and
    the fields of that event), also readable as attributes (``event.type``)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def outcome(self) -> Optional[Outcome]:
        """The outcome carried by a final event (``run_completed``, ``run_failed``, ...)."""
        o = self.get("outcome")
        return Outcome._from_dict(o) if o is not None else None


@dataclass(frozen=True)
class TurnOrigin:
    """Who started a turn: ``kind`` is ``"person"`` or ``"tab"`` (another tab's agent, through
    ``send_to_tab``; then ``tab_id`` and ``handle`` name it). A turn another tab started does
    not carry the person's authority: a gate should say so when it asks, or refuse."""

    kind: str = "person"
    tab_id: Optional[str] = None
    handle: Optional[str] = None

    @property
    def is_person(self) -> bool:
        """Whether the person started the turn."""
        return self.kind == "person"

    @classmethod
    def _from_dict(cls, d: Optional[Dict[str, Any]]) -> "TurnOrigin":
        if not d:
            return cls()
        return cls(kind=d.get("kind", "person"), tab_id=d.get("tab_id"), handle=d.get("handle"))


def _with_origin(d: Dict[str, Any]) -> Dict[str, Any]:
    """The fields of a native dict, with its ``origin`` as a :class:`TurnOrigin`."""
    fields = dict(d)
    fields["origin"] = TurnOrigin._from_dict(fields.get("origin"))
    return fields


@dataclass
class Clarification:
    """A question the model asked the person (``kind``: ``confirm``, ``choice`` or
    ``input``). Answer it with :meth:`Session.answer_clarification`."""

    id: str
    call_id: str
    kind: str
    question: str
    title: Optional[str] = None
    options: List[str] = field(default_factory=list)
    asked_at_ms: int = 0
    expires_at_ms: int = 0
    origin: TurnOrigin = field(default_factory=TurnOrigin)
    """Who started the turn that asked (the resumed turn acts for them too)."""

    @classmethod
    def _from_dict(cls, d: Dict[str, Any]) -> "Clarification":
        return cls(**_with_origin(d))


@dataclass
class PendingApproval:
    """A turn parked until the person approves or rejects a gated call (the gate answered
    :class:`Ask`). Answer it with :meth:`Session.resolve_approval`; it survives a restart when
    the agent has a persistent store."""

    id: str
    calls: List[ApprovalCall]
    asked_at_ms: int = 0
    expires_at_ms: int = 0
    message: Optional[str] = None
    """The model's text in the message that made the calls, if it wrote any."""
    origin: TurnOrigin = field(default_factory=TurnOrigin)
    """Who started the turn: the person, or another tab's agent."""

    @classmethod
    def _from_dict(cls, d: Dict[str, Any]) -> "PendingApproval":
        return cls(**_with_origin(approval_fields(d)))


@dataclass
class GateRequest:
    """A gated tool call waiting for consent."""

    session_id: str
    call_id: str
    tool: str
    arguments: Dict[str, Any]
    origin: TurnOrigin = field(default_factory=TurnOrigin)
    """Who started the turn: the person, or another tab's agent."""
    host: Optional[str] = None
    """The host of the web page the call acts on (page tools: their tab's address as the
    browser reports it, lowercased ASCII), or None. A call allowed here does not run if the
    page has moved to another host by then."""

    @classmethod
    def _from_dict(cls, d: Dict[str, Any]) -> "GateRequest":
        return cls(**_with_origin(d))


@dataclass
class Allow:
    """Gate decision: run the call."""


@dataclass
class Deny:
    """Gate decision: do not run the call."""

    reason: Optional[str] = None


GateDecision = Union[bool, Allow, Deny, Ask, None]
GateFn = Callable[[GateRequest], Union[GateDecision, Awaitable[GateDecision]]]


def _decision(value: Any) -> Dict[str, Any]:
    if value is True or isinstance(value, Allow):
        return {"decision": "allow"}
    if isinstance(value, Deny):
        return {"decision": "deny", "reason": value.reason}
    if isinstance(value, Ask):
        return {"decision": "ask", "prompt": value.prompt}
    if value is False or value is None:
        return {"decision": "deny", "reason": None}
    if isinstance(value, str):
        v = value.lower()
        if v in ("allow", "yes", "ok"):
            return {"decision": "allow"}
        if v == "ask":
            return {"decision": "ask"}
        return {"decision": "deny", "reason": value if v not in ("deny", "no") else None}
    raise TypeError(f"a gate must return True/False, Allow(), Deny(reason) or Ask(prompt), not {value!r}")


def _wrap_gate(gate: GateFn) -> "tuple[Callable[[Dict[str, Any]], Any], bool]":
    is_async = inspect.iscoroutinefunction(gate) or inspect.iscoroutinefunction(getattr(gate, "__call__", None))

    if is_async:

        async def agate(req: Dict[str, Any]) -> Dict[str, Any]:
            result = gate(GateRequest._from_dict(req))
            if inspect.isawaitable(result):
                result = await result
            return _decision(result)

        return agate, True

    def sgate(req: Dict[str, Any]) -> Dict[str, Any]:
        return _decision(gate(GateRequest._from_dict(req)))

    return sgate, False


def _config_dict(config: Union[AgentConfig, Mapping[str, Any], None]) -> Dict[str, Any]:
    """An AgentConfig (or a dict of its keys) as the options dict the native module reads: a
    key left at its default is left out, and ``max_tool_calls: None`` is kept (unlimited)."""
    if config is None:
        return {}
    result = plain(config)
    if not isinstance(result, dict):
        raise TypeError(f"config must be an AgentConfig or a dict of its keys, not {type(config).__name__}")
    return {key: value for key, value in result.items() if value is not _DEFAULT}


def _wrap_event_callback(cb: Callable[[Event], Any]) -> Callable[[Dict[str, Any]], None]:
    def deliver(ev: Dict[str, Any]) -> None:
        result = cb(Event(ev))
        if inspect.isawaitable(result):
            asyncio.ensure_future(result)

    return deliver


HOOK_POINTS = ("before_model_call", "after_model_call", "before_tool_call", "after_tool_call", "turn_ended")


def _native_hooks(hooks: Sequence[Any]) -> List[Any]:
    """Each hooks object as the native module takes it: only the hook methods it has (so a
    missing one costs nothing), ``turn_ended`` getting an :class:`Outcome` rather than a dict."""
    if isinstance(hooks, (str, bytes)) or not isinstance(hooks, Sequence):
        raise TypeError("hooks must be a list of hook objects")
    adapted = []
    for hook in hooks:
        methods = {name: getattr(hook, name) for name in HOOK_POINTS if callable(getattr(hook, name, None))}
        if not methods:
            raise TypeError(f"{type(hook).__name__} has none of the hook methods: {', '.join(HOOK_POINTS)}")
        ended = methods.get("turn_ended")
        if ended is not None and inspect.iscoroutinefunction(ended):

            async def aended(session_id: str, outcome: Dict[str, Any], f: Any = ended) -> None:
                await f(session_id, Outcome._from_dict(outcome))

            methods["turn_ended"] = aended
        elif ended is not None:

            def sended(session_id: str, outcome: Dict[str, Any], f: Any = ended) -> None:
                f(session_id, Outcome._from_dict(outcome))

            methods["turn_ended"] = sended
        adapted.append(types.SimpleNamespace(**methods))
    return adapted


class Agent:
    """An LLM agent: a provider, tools, an optional store and gate, a system prompt and the
    loop's configuration. Cheap to share; every session of the agent uses them.

    ``hooks`` are objects with any of these methods (``def`` or ``async def``), run in order at
    their point of every turn; one that raises ends the turn with ``error_kind == "hook"``:

    - ``before_model_call(session_id, request)``: ``request`` is the model request as a dict
      (``system``, ``messages``, ``tools``, ...), after compaction (the compaction summary's
      request comes here too); return a replacement dict (to redact, say) or None to keep it.
    - ``after_model_call(session_id, response)``: the response dict (``message``, ``usage``,
      ``finish_reason``); return a replacement or None.
    - ``before_tool_call(call)``: ``call`` has ``session_id``, ``call_id``, ``tool``,
      ``arguments`` and ``origin``; return None or True to allow, ``{"deny": "reason"}`` (the
      model is told) or ``{"arguments": {...}}`` to run it with other arguments (checked against
      the tool's schema again). It runs before the gate.
    - ``after_tool_call(call, result)``: ``result`` is ``{"ok": True, "content": [...],
      "structured": ..., "truncated": ...}`` or ``{"ok": False, "error": "...", "fatal": ...}``;
      return a replacement or None.
    - ``turn_ended(session_id, outcome)``: the :class:`Outcome`, before it is returned.

    ``gate`` decides gated tool calls: a ``def`` or ``async def`` taking a :class:`GateRequest`
    and returning ``True``/``False``, :class:`Allow` or :class:`Deny`. Without a gate, gated
    calls are denied and never run.

    ``on_event`` sees every event of every run, in order, on the asyncio loop that started the
    run. Events wait for it in a queue of ``event_buffer`` (1 024) at most: a callback that
    falls behind (one that blocks the loop while runs stream) loses streamed tokens first,
    then the oldest events, and a ``RuntimeWarning`` says how many.

    ``clarification=True`` offers the model the built-in ``ask_clarification`` tool: the turn
    ends ``awaiting_user`` with a ``clarification_pending`` event, and
    :meth:`Session.answer_clarification` continues it.

    ``config`` is an :class:`AgentConfig` (or a dict of its keys); further keyword arguments
    are :class:`AgentConfig` keys too (``Agent(provider, max_iterations=5,
    tool_timeout_ms=10_000)``) and win over ``config``'s. An unknown key raises
    :class:`ConfigError` naming it.

    A turn makes at most 12 tool calls by default, then ends ``capped``:
    ``Agent(provider, max_tool_calls=40)`` sets another cap, ``max_tool_calls=None`` removes
    it (``agent.config["max_tool_calls"]`` reads None then).
    """

    def __init__(
        self,
        provider: Provider,
        *,
        tools: Sequence[Union[Tool, Callable[..., Any]]] = (),
        store: Optional[Store] = None,
        gate: Optional[GateFn] = None,
        system_prompt: Optional[str] = None,
        config: Union[AgentConfig, Mapping[str, Any], None] = None,
        on_event: Optional[Callable[[Event], Any]] = None,
        clarification: bool = False,
        hooks: Sequence[Any] = (),
        **settings: Any,
    ) -> None:
        if not isinstance(provider, Provider):
            raise TypeError(f"provider must be an agent_core Provider, not {type(provider).__name__}")
        self.provider = provider
        self.tools: List[Any] = [t if isinstance(t, Tool) or hasattr(t, "_native_tools") else Tool(t) for t in tools]
        python_tools = [t for t in self.tools if isinstance(t, Tool)]
        native_tools = [n for t in self.tools if hasattr(t, "_native_tools") for n in t._native_tools()]
        conf = _config_dict(config)
        conf.update({k: plain(v) for k, v in settings.items() if _given(k, v)})
        gate_fn, gate_async = _wrap_gate(gate) if gate is not None else (None, False)
        self._native = _native.Agent(
            _native.AgentParts(
                provider=provider._native,
                tools=python_tools,
                native_tools=native_tools,
                store=store._native if store is not None else None,
                gate=gate_fn,
                gate_is_async=gate_async,
                system_prompt=system_prompt,
                config=conf,
                on_event=_wrap_event_callback(on_event) if on_event is not None else None,
                clarification=clarification,
                hooks=_native_hooks(hooks),
            )
        )

    async def create_session(self, id: Optional[str] = None) -> "Session":
        """Creates a session (with ``id``, a UUID, or a random one)."""
        return Session(await self._native.create_session(id))

    async def open_session(self, id: str) -> "Session":
        """Opens a session this agent has open or one in the store (its history is loaded and
        a turn interrupted by a crash is repaired). Raises :class:`SessionNotFoundError`."""
        return Session(await self._native.open_session(id))

    def tool_specs(self) -> List[Dict[str, Any]]:
        """Every tool's spec (name, description, parameters, gated, parallel_safe, timeout)."""
        return self._native.tool_specs()

    @property
    def takes_images(self) -> bool:
        """Whether the model is sent images: ``vision``, with ``"auto"`` resolved by what the
        provider knows of its model (``browser_prompt(vision=agent.takes_images)``)."""
        return bool(self._native.takes_images)

    @property
    def config(self) -> Dict[str, Any]:
        """The effective configuration: every key of :class:`AgentConfig`, durations in
        milliseconds (``tool_timeout_ms``, ...)."""
        return self._native.config()

    async def approval_rules(self) -> List[ApprovalRule]:
        """The remembered approval decisions, oldest first: in the store when the agent has
        one (shared by every agent on it, kept across restarts), in memory otherwise."""
        return [ApprovalRule._from_dict(r) for r in await self._native.approval_rules()]

    async def revoke_approval_rule(self, rule_id: str) -> bool:
        """Forgets a remembered decision: the gate's questions about that tool go to the
        person again. Whether there was such a rule."""
        return bool(await self._native.revoke_approval_rule(rule_id))


class Session:
    """A conversation. Turns of one session run one after another."""

    def __init__(self, native: _native.Session) -> None:
        self._native = native

    @property
    def id(self) -> str:
        """The session id (a lowercase UUID)."""
        return self._native.id

    def send(self, message: Union[str, Mapping[str, Any]]) -> "Run":
        """Starts a turn with a user message and returns its :class:`Run` at once.

        ``message`` is text, or a message dict such as ``{"content": [{"type": "text", ...},
        {"type": "image", ...}]}``. Call it from the asyncio loop that should run async tools.
        """
        return Run(self._native.send(message if isinstance(message, str) else dict(message)))

    @overload
    def send_typed(
        self,
        message: Union[str, Mapping[str, Any]],
        schema: Type[_T],
        *,
        name: Optional[str] = None,
        strict: bool = False,
    ) -> "TypedRun[_T]": ...

    @overload
    def send_typed(
        self,
        message: Union[str, Mapping[str, Any]],
        schema: Mapping[str, Any],
        *,
        name: Optional[str] = None,
        strict: bool = False,
    ) -> "TypedRun[Any]": ...

    def send_typed(
        self, message: Union[str, Mapping[str, Any]], schema: Any, *, name: Optional[str] = None, strict: bool = False
    ) -> Any:
        """Starts a turn whose final answer must match ``schema`` and returns its run at once.

        ``schema`` is a pydantic model class (its ``model_json_schema()``), a dataclass, a
        TypedDict, or a JSON Schema dict; ``name`` names it for the model (default: the class
        name, or the dict's ``title``, or ``"answer"``). Tools stay offered. The answer is
        checked against the schema with one correction; ``await run`` gives a
        :class:`TypedOutcome` whose ``answer`` is a model / dataclass instance (the dict for a
        TypedDict or a dict schema) and ``structured`` the JSON data. A second bad answer ends
        the turn ``error`` with ``error_kind`` ``output.invalid``; a schema that is not a valid
        JSON Schema ``output.schema``. ``strict=True`` asks for the provider's strict schema mode
        where it has one (OpenAI's, which needs every property required and
        ``additionalProperties: false``)."""
        from ._typed import TypedRun, output_schema

        schema_name, json_schema, convert = output_schema(schema, name)
        msg = message if isinstance(message, str) else dict(message)
        return TypedRun(self._native.send_with_schema(msg, schema_name, json_schema, strict), convert)

    def pending_clarification(self) -> Optional["Clarification"]:
        """The question a turn of this session is parked on, if any (it survives a restart
        when the agent has a persistent store)."""
        q = self._native.pending_clarification()
        return Clarification._from_dict(q) if q is not None else None

    def answer_clarification(self, clarification_id: str, answer: str) -> "Run":
        """Answers the pending question; the parked turn continues in the returned run. An
        answer that does not fit (not yes/no for ``confirm``, not an option for ``choice``,
        empty ``input``) raises :class:`ClarificationError` and the question stays pending."""
        return Run(self._native.answer_clarification(clarification_id, answer))

    async def dismiss_clarification(self, clarification_id: str) -> None:
        """Dismisses the pending question without answering it (the person closed it): the
        model's ``ask_clarification`` call gets a "dismissed" result, the question is no
        longer pending (in the store too), and a ``clarification_dismissed`` event goes to
        ``on_event``. No turn starts; the model reads the dismissal with the next message.
        Waits for a running turn of the session to end first. Raises
        :class:`ClarificationError` (``kind`` ``clarification.not_pending``) when that question
        is not the one pending: read :meth:`pending_clarification` for the current one."""
        await self._native.dismiss_clarification(clarification_id)

    def pending_approval(self) -> Optional["PendingApproval"]:
        """The approval a turn of this session is parked on, if any (it survives a restart
        when the agent has a persistent store)."""
        a = self._native.pending_approval()
        return PendingApproval._from_dict(a) if a is not None else None

    def resolve_approval(self, approval_id: str, decisions: Mapping[str, Decision]) -> "Run":
        """Answers the pending approval, one decision per call id (:class:`Approve`,
        :class:`Reject`, ``"approve"`` or ``"reject"``), and continues the parked turn in the
        returned run: approved calls run (with the edited arguments, when given), rejected
        ones do not and the model reads why. Raises :class:`ApprovalError` (the approval stays
        pending) when a call has no decision, a decision names a call the approval does not
        hold, or edited arguments do not match the tool's schema."""
        return Run(self._native.resolve_approval(approval_id, decisions_dict(decisions)))

    async def dismiss_approval(self, approval_id: str) -> None:
        """Dismisses the pending approval without answering it: its calls do not run and the
        model reads why with the next message; no turn starts."""
        await self._native.dismiss_approval(approval_id)

    async def messages(self) -> List[Dict[str, Any]]:
        """Every stored message (``seq``, ``message``, ``created_at_ms``), including those
        hidden from the model."""
        return await self._native.messages()

    async def model_history(self) -> List[Dict[str, Any]]:
        """The messages the model would see on the next turn."""
        return await self._native.model_history()

    def cost_usd(self) -> Optional[float]:
        """What the session's finished turns cost in US dollars (sub-agents and compaction's
        summaries included), or None when a call's price was unknown. Kept in the agent's store,
        so a session opened again after a restart goes on from what it spent, and so does its
        budget. See ``docs/cost.md``."""
        return self._native.cost_usd()

    def __repr__(self) -> str:
        return f"Session({self.id!r})"


class Run:
    """One turn, running in the background.

    ``async for event in run.events()`` streams its events; ``run.status()`` is a cheap
    snapshot; ``run.cancel()`` stops it; ``await run`` gives the :class:`Outcome`. Cancelling
    the task that awaits the run cancels the turn too.
    """

    def __init__(self, native: _native.Run) -> None:
        self._native = native

    @property
    def id(self) -> str:
        """The run id."""
        return self._native.id

    @property
    def session_id(self) -> str:
        """The session id."""
        return self._native.session_id

    def status(self) -> RunStatus:
        """A snapshot of the run's progress."""
        return RunStatus(**self._native.status())

    def cancel(self) -> None:
        """Asks the run to stop; it ends ``cancelled`` promptly with a valid transcript."""
        self._native.cancel()

    @property
    def finished(self) -> bool:
        """Whether the run has ended."""
        return self._native.is_finished()

    async def events(self) -> AsyncIterator[Event]:
        """The run's events, in order, ending after the final one (``run_completed``,
        ``run_failed``, ``run_cancelled`` or ``run_capped``). The first call sees every event
        from ``run_started`` on; later calls see events from when they start."""
        source = self._native.events()
        while True:
            ev = await source.next()
            if ev is None:
                return
            yield Event(ev)

    async def outcome(self) -> Outcome:
        """Waits for the turn to end. Cancelling the awaiting task cancels the turn."""
        try:
            return Outcome._from_dict(await self._native.outcome())
        except asyncio.CancelledError:
            self._native.cancel()
            raise

    def __await__(self) -> Generator[Any, None, Outcome]:
        return self.outcome().__await__()

    def __repr__(self) -> str:
        return f"Run(id={self.id!r}, session_id={self.session_id!r})"




def agent_tool(
    name: str, description: str, agent: "Agent", *, max_depth: int = 3, output: Any = None
) -> NativeTools:
    """Offers ``agent`` to another agent as the tool ``name``, taking a ``task``: each call runs
    one turn of ``agent`` in a new session and answers with its final text. It acts for whoever
    started the calling turn (its gate sees that origin; a call its gate asks the person about
    parks the calling turn too), stops when that turn is cancelled, and nests at most
    ``max_depth`` levels below the first agent; what it spent is in the calling turn's
    ``usage`` and, per tool, in ``Outcome.sub_agents``. With ``output`` (a pydantic model
    class, a dataclass, a TypedDict or a JSON Schema dict, as :meth:`Session.send_typed`
    takes) its turns are typed and the call answers with the checked answer as JSON::

        researcher = Agent(provider, system_prompt="You research one question.")
        lead = Agent(provider, tools=[agent_tool("ask_researcher", "Ask the researcher.", researcher)])
    """
    if not isinstance(agent, Agent):
        raise TypeError(f"agent_tool takes an agent_core Agent, not {type(agent).__name__}")
    typed = None
    if output is not None:
        from ._typed import output_schema

        schema_name, json_schema, _ = output_schema(output)
        typed = (schema_name, json_schema)
    return NativeTools([_native.agent_tool(name, description, agent._native, max_depth, typed)])
