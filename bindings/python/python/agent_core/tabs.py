"""The tab hub: one agent session per tab, git-style short handles, deliver (start a turn or
queue), ``send_to_tab`` / ``read_tab`` permissions and the auto-wake budget; and the wiring of
hub tabs to a browser's own tabs, with page tools that act on each agent's own browser tab."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native
from ._agent import (
    AgentConfig,
    Event,
    GateFn,
    Run,
    Session,
    _config_dict,
    _native_hooks,
    _wrap_event_callback,
    _wrap_gate,
)
from ._approvals import Decision, decisions_dict
from ._host_tabs import HostTab, OpenedTab, OpenedTabPolicy, _native_policy
from ._options import plain
from .hosts import BrowserHost, CdpHost, PageToolsConfig
from .providers import Provider
from .stores import Store
from .tools import Tool

__all__ = ["TabHub", "TabPermissions", "Delivery", "HostTab", "OpenedTab", "OpenedTabPolicy"]


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

    A browser that gives each of its tabs an agent wires every hub tab to its browser tab
    (:meth:`open_tab_for_host`, :meth:`wire_host_tab`) and builds the hub with
    ``page_tools=host``: each tab's agent then gets page tools that act on its own browser
    tab whatever tab is active, so agents in several tabs work at the same time, each on its
    own page. Tell the hub when a browser tab closes (:meth:`host_tab_closed`).
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
        hooks: Sequence[Any] = (),
        max_held_messages: Optional[int] = None,
        page_tools: Union[BrowserHost, CdpHost, None] = None,
        page_tools_config: Optional[PageToolsConfig] = None,
        opened_tab_policy: Optional[OpenedTabPolicy] = None,
    ) -> "TabHub":
        """Builds a hub (restoring the tabs a persistent store holds). Every tab's agent is
        built from the same parts as :class:`Agent` takes them (``hooks`` included).

        ``max_held_messages`` caps the messages from other tabs' agents one tab's queue may
        hold (default 32); past it :meth:`deliver` with ``origin="agent"`` (and the sending
        model's ``send_to_tab``) is refused with :class:`TabQueueFullError`. Messages from the
        person are never refused.

        ``page_tools`` (a :class:`CdpHost` or a Python :class:`BrowserHost`) gives every tab's
        agent the page and tab tools over that browser, bound to the browser tab its hub tab
        is wired to (looked up on every call): configure them with ``page_tools_config`` (the
        keyword arguments of :func:`page_tools`, as a :class:`PageToolsConfig` dict). A hub
        tab not wired yet, or whose browser tab closed, fails its page tools with an error
        that tells the model to stop and say so. For a Python host, create the hub inside the
        asyncio loop that should run the host's async methods.

        ``opened_tab_policy`` decides who gets a browser tab an agent opens with tab_open:
        ``"same_agent"`` (the default: the agent that opened it works there from then on),
        ``"new_agent"`` (a new hub tab with its own agent; the opener stays in its tab), or a
        plain function taking an :class:`OpenedTab` and returning one of those two. The hub
        asks the function while the agent's tab_open call waits, so it should decide quickly
        from the tab alone; if it raises, the exception is printed and the opener keeps the
        tab."""
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
            hooks=_native_hooks(hooks),
        )
        if page_tools_config is not None and page_tools is None:
            raise TypeError("page_tools_config configures page_tools: pass the browser host as page_tools=... too")
        native = await _native.TabHub.build(
            parts,
            _perm(default_permissions),
            auto_wake_budget,
            max_held_messages,
            page_tools._native if isinstance(page_tools, CdpHost) else page_tools,
            plain(page_tools_config) if page_tools_config is not None else None,
            _native_policy(opened_tab_policy),
        )
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

    async def deliver(
        self,
        tab: str,
        message: str,
        origin: str = "human",
        *,
        schema: Any = None,
        name: Optional[str] = None,
        strict: bool = False,
    ) -> Delivery:
        """Delivers a message to a tab from ``human`` (refills the auto-wake budget) or
        ``agent``: an idle tab starts a turn, a busy one queues the message. Raises
        :class:`TabQueueFullError` when the tab already holds ``max_held_messages`` messages
        from agents and this one comes from an agent.

        With ``schema`` (what :meth:`Session.send_typed` takes: a pydantic model class, a
        dataclass, a TypedDict or a JSON Schema dict, named by ``name``) the turn that reads
        the message is a typed turn of its own (never merged with other queued messages, and
        still typed when the tab is restored from its store); a turn started at once comes
        back as a :class:`TypedRun` whose outcome's ``answer`` is the parsed answer; ``strict``
        as in :meth:`Session.send_typed`."""
        if schema is None:
            d = await self._native.deliver(tab, message, origin)
            run = d.pop("run")
            return Delivery(run=Run(run) if run is not None else None, **d)
        from ._typed import TypedRun, output_schema

        schema_name, json_schema, convert = output_schema(schema, name)
        d = await self._native.deliver(tab, message, origin, schema_name, json_schema, strict)
        run = d.pop("run")
        return Delivery(run=TypedRun(run, convert) if run is not None else None, **d)

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

    async def dismiss_clarification(self, tab: str, clarification_id: str) -> None:
        """Dismisses the question the tab's turn is parked on, without answering it (the
        person closed it; see :meth:`Session.dismiss_clarification`). Messages held only
        because the tab waited for its person then start a turn, within the auto-wake
        budget. Raises :class:`ClarificationError` when that question is not the one pending."""
        await self._native.dismiss_clarification(tab, clarification_id)

    async def resolve_approval(self, tab: str, approval_id: str, decisions: Mapping[str, Decision]) -> Run:
        """Answers the approval the tab's turn is parked on (see
        :meth:`Session.resolve_approval`); the turn continues in the returned run (queued
        messages follow it). Counts as a human message."""
        return Run(await self._native.resolve_approval(tab, approval_id, decisions_dict(decisions)))

    async def dismiss_approval(self, tab: str, approval_id: str) -> None:
        """Dismisses the approval the tab's turn is parked on: its calls do not run. Messages
        held only because the tab waited for its person then start a turn, within the
        auto-wake budget."""
        await self._native.dismiss_approval(tab, approval_id)

    async def open_tab_for_host(self, host_tab: str) -> str:
        """Opens a new tab (a new session, the default permissions) wired to the browser tab
        ``host_tab`` (the host's id for it, :class:`TabInfo` ``id``) and returns its id: its
        agent's page tools act on that browser tab."""
        return await self._native.open_tab_for_host(host_tab)

    def wire_host_tab(self, tab: str, host_tab: str) -> None:
        """Wires the browser tab ``host_tab`` to the hub tab ``tab`` and makes it the one
        that tab's agent works in, from its next page tool call. A browser tab wired to
        another hub tab is taken from it. Raises :class:`TabNotFoundError` for an unknown
        ``tab`` (open it first)."""
        self._native.wire_host_tab(tab, host_tab)

    def host_tab_closed(self, host_tab: str) -> Optional[str]:
        """Tells the hub that the browser closed ``host_tab``; returns the hub tab it belonged
        to (None if none). That tab's agent, if it worked there, has no browser tab until one
        is wired again, and its page tools say so. The hub tab stays open: close it with
        :meth:`close_tab` when it has nothing left to do."""
        return self._native.host_tab_closed(host_tab)

    def host_tab(self, tab: str) -> HostTab:
        """The browser tab the hub tab's agent works in (:class:`HostTab`)."""
        return HostTab._from_dict(self._native.host_tab(tab))

    def host_tabs(self, tab: str) -> List[str]:
        """Every open browser tab that belongs to the hub tab (its own and those its agent
        opened), oldest first."""
        return self._native.host_tabs(tab)

    def tab_for_host(self, host_tab: str) -> Optional[str]:
        """The hub tab a browser tab belongs to, if any."""
        return self._native.tab_for_host(host_tab)

    async def adopt_host_tab(self, opener: str, host_tab: str, url: str = "") -> str:
        """Hands a browser tab that the agent of ``opener`` opened (a popup its page opened,
        say) to its owner, as ``opened_tab_policy`` decides; returns the hub tab that got it.
        The page tools' tab_open does this itself."""
        return await self._native.adopt_host_tab(opener, host_tab, url)

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
