"""The tab hub: one agent session per tab, git-style short handles, deliver (start a turn or
queue), ``send_to_tab`` / ``read_tab`` permissions and the auto-wake budget."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native
from ._agent import AgentConfig, Event, GateFn, Run, Session, _config_dict, _wrap_event_callback, _wrap_gate
from .providers import Provider
from .stores import Store
from .tools import Tool

__all__ = ["TabHub", "TabPermissions", "Delivery"]


@dataclass
class TabPermissions:
    """Which tab tools a tab's agent gets. Both are off by default."""

    send_to_tab: bool = False
    read_tab: bool = False

    @classmethod
    def all(cls) -> "TabPermissions":
        """Both tools."""
        return cls(True, True)

    def _to_dict(self) -> Dict[str, bool]:
        return {"send_to_tab": self.send_to_tab, "read_tab": self.read_tab}


def _perm(p: "Union[TabPermissions, Dict[str, bool], None]") -> Optional[Dict[str, bool]]:
    if p is None:
        return None
    if isinstance(p, TabPermissions):
        return p._to_dict()
    return dict(p)


@dataclass
class Delivery:
    """What :meth:`TabHub.deliver` did: ``status`` is ``started`` (a turn started: ``run``),
    ``queued`` (a turn is running; the message starts the next one) or ``held`` (queued, but
    the tab's auto-wake budget is spent or it awaits its person)."""

    status: str
    queue_len: int
    auto_wake_budget: int
    awaiting_user: bool
    run: Optional[Run]


class TabHub:
    """Tracks tabs and decides what happens to each incoming message.

    Build it with ``await TabHub.create(provider=..., tools=..., store=..., ...)``: every tab
    gets an agent made from these settings (as for :class:`Agent`); the hub adds the tab
    tools that each tab's permissions allow.
    """

    def __init__(self, native: _native.TabHub) -> None:
        self._native = native

    @classmethod
    async def create(
        cls,
        provider: Provider,
        *,
        tools: Sequence[Union[Tool, Callable[..., Any]]] = (),
        store: Optional[Store] = None,
        gate: Optional[GateFn] = None,
        system_prompt: Optional[str] = None,
        config: "Union[AgentConfig, Mapping[str, Any], None]" = None,
        on_event: Optional[Callable[[Event], Any]] = None,
        default_permissions: "Union[TabPermissions, Dict[str, bool], None]" = None,
        auto_wake_budget: Optional[int] = None,
        clarification: bool = False,
        max_held_messages: Optional[int] = None,
    ) -> "TabHub":
        """Builds a hub (restoring the tabs a persistent store holds).

        ``max_held_messages`` caps the messages from other tabs' agents one tab's queue may
        hold (default 32); past it :meth:`deliver` with ``origin="agent"`` (and the sending
        model's ``send_to_tab``) is refused with :class:`TabQueueFullError`. Messages from the
        person are never refused."""
        tools = [t if isinstance(t, Tool) or hasattr(t, "_native_tools") else Tool(t) for t in tools]
        gate_fn, gate_async = _wrap_gate(gate) if gate is not None else (None, False)
        parts = _native.AgentParts(
            provider=provider._native,
            tools=[t for t in tools if isinstance(t, Tool)],
            native_tools=[n for t in tools if hasattr(t, "_native_tools") for n in t._native_tools()],
            store=store._native if store is not None else None,
            gate=gate_fn,
            gate_is_async=gate_async,
            system_prompt=system_prompt,
            config=_config_dict(config),
            on_event=_wrap_event_callback(on_event) if on_event is not None else None,
            clarification=clarification,
        )
        native = await _native.TabHub.build(parts, _perm(default_permissions), auto_wake_budget, max_held_messages)
        return cls(native)

    async def open_tab(
        self, id: Optional[str] = None, *, permissions: "Union[TabPermissions, Dict[str, bool], None]" = None
    ) -> str:
        """Opens a tab and returns its id (a UUID)."""
        return await self._native.open_tab(id, _perm(permissions))

    async def close_tab(self, tab: str) -> None:
        """Closes a tab (its handle is freed; its session stays)."""
        await self._native.close_tab(tab)

    async def reopen_tab(self, tab: str) -> None:
        """Reopens a closed tab."""
        await self._native.reopen_tab(tab)

    async def deliver(self, tab: str, message: str, origin: str = "human") -> Delivery:
        """Delivers a message to a tab from ``human`` (refills the auto-wake budget) or
        ``agent``: an idle tab starts a turn, a busy one queues the message. Raises
        :class:`TabQueueFullError` when the tab already holds ``max_held_messages`` messages
        from agents and this one comes from an agent."""
        d = await self._native.deliver(tab, message, origin)
        run = d.pop("run")
        return Delivery(run=Run(run) if run is not None else None, **d)

    def resolve(self, handle: str) -> Dict[str, Any]:
        """Resolves a handle or id prefix among open tabs: ``{"status": "ok", "tab", "handle"}``,
        ``none`` (with ``open_handles``), ``ambiguous`` (with ``matches``) or ``invalid``."""
        return self._native.resolve(handle)

    def handle(self, tab: str) -> Optional[str]:
        """The tab's current handle: the shortest unique prefix of its id (at least 4 chars)."""
        return self._native.handle(tab)

    def handles(self) -> List[Tuple[str, str]]:
        """``(tab id, handle)`` of every open tab."""
        return self._native.handles()

    def tab(self, tab: str) -> Optional[Dict[str, Any]]:
        """A tab's info (state, queue_len, auto_wake_budget, held, permissions, ...)."""
        return self._native.tab(tab)

    def tabs(self) -> List[Dict[str, Any]]:
        """Every tab's info."""
        return self._native.tabs()

    async def set_permissions(self, tab: str, permissions: "Union[TabPermissions, Dict[str, bool]]") -> None:
        """Sets which tab tools the tab's agent has."""
        await self._native.set_permissions(tab, _perm(permissions) or {})

    async def read(self, tab: str) -> Dict[str, Any]:
        """What ``read_tab`` sees: the last completed answer and the state; never waits."""
        return await self._native.read(tab)

    async def session(self, tab: str) -> Session:
        """The tab's session."""
        return Session(await self._native.session(tab))

    async def cancel(self, tab: str) -> None:
        """Cancels the tab's running turn."""
        await self._native.cancel(tab)

    async def answer_clarification(self, tab: str, clarification_id: str, answer: str) -> Run:
        """Answers the question the tab's turn is parked on; the turn continues in the
        returned run (queued messages follow it). Counts as a human message."""
        return Run(await self._native.answer_clarification(tab, clarification_id, answer))

    async def take_queue(self, tab: str) -> List[Dict[str, Any]]:
        """Removes and returns the tab's queued messages."""
        return await self._native.take_queue(tab)

    async def wait_idle(self, tab: str) -> Dict[str, Any]:
        """Waits until the tab is idle with an empty queue; returns its info."""
        return await self._native.wait_idle(tab)

    async def wait_all_idle(self) -> None:
        """Waits until every tab is idle."""
        await self._native.wait_all_idle()

    async def events(self) -> AsyncIterator[Dict[str, Any]]:
        """The hub's events from now on: ``tab_opened``, ``tab_closed``, ``state_changed``,
        ``agent`` (a run event, under ``event``) and ``notice``; each has ``tab_id``."""
        source = self._native.subscribe()
        while True:
            ev = await source.next()
            if ev is None:
                return
            yield ev

    def subscribe(self) -> "_TabEventStream":
        """Subscribes now (so nothing after this call is missed); iterate with ``async for``."""
        return _TabEventStream(self._native.subscribe())


class _TabEventStream:
    def __init__(self, native: Any) -> None:
        self._native = native

    def __aiter__(self) -> "_TabEventStream":
        return self

    async def __anext__(self) -> Dict[str, Any]:
        ev = await self._native.next()
        if ev is None:
            raise StopAsyncIteration
        event: Dict[str, Any] = ev
        return event
