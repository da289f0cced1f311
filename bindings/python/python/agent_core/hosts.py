"""Browser hosts written in Python, and the Rust page tools that run through them."""

from __future__ import annotations

from typing import Any, Awaitable, List, Optional, Union

from . import _native
from .tools import NativeTools

try:
    from typing import Protocol, TypedDict, runtime_checkable
except ImportError:  # pragma: no cover
    from typing_extensions import Protocol, TypedDict, runtime_checkable  # type: ignore[assignment]

__all__ = ["BrowserHost", "TabInfo", "page_tools"]


class TabInfo(TypedDict):
    """One tab as a host reports it."""

    id: str
    url: str
    title: str
    active: bool


@runtime_checkable
class BrowserHost(Protocol):
    """What a browser supplies so that the page tools work in its tabs. Every method may be a
    plain ``def`` or an ``async def``; ``tab`` is a tab id from :meth:`tabs`, ``None`` meaning
    the active tab.

    Raise :class:`HostError` with ``host_kind`` = ``"script"``, ``"navigation"``,
    ``"timeout"``, ``"no_such_tab"`` or ``"disconnected"`` (the browser is gone: ends the
    turn) to say what failed; ``TimeoutError`` and ``ConnectionError`` map to timeout and
    disconnected, anything else is reported to the model.

    Optional methods: ``wait_settled(tab, timeout)`` (without it the tools wait with a script:
    ``readyState`` complete and no DOM changes for a moment) and ``resolve_address(text)`` (the
    host's own address bar; return None to use the built-in resolver).
    """

    def evaluate(self, tab: Optional[str], expression: str) -> Union[Any, Awaitable[Any]]:
        """Evaluates a JavaScript expression in the tab and returns its value as JSON data; a
        promise is awaited."""
        ...

    def navigate(self, tab: Optional[str], url: str) -> Union[None, Awaitable[None]]:
        """Loads ``url`` and returns when the load finished (or raises when it failed)."""
        ...

    def tabs(self) -> Union[List[TabInfo], Awaitable[List[TabInfo]]]:
        """The open tabs."""
        ...

    def open_tab(self, url: Optional[str]) -> Union[TabInfo, Awaitable[TabInfo]]:
        """Opens a tab (at ``url`` or blank) and makes it active."""
        ...

    def close_tab(self, tab: str) -> Union[None, Awaitable[None]]:
        """Closes a tab."""
        ...

    def activate_tab(self, tab: str) -> Union[None, Awaitable[None]]:
        """Makes a tab the active one."""
        ...


def page_tools(
    host: BrowserHost,
    *,
    settle_timeout: Optional[float] = None,
    max_chars: Optional[int] = None,
    max_elements: Optional[int] = None,
    scrape_loopback_http: bool = False,
    search_template: Optional[str] = None,
) -> NativeTools:
    """The Rust page and tab tools over ``host``: page_read, page_text, page_scrape,
    page_navigate, page_click, page_fill, page_select, tabs_list, tab_open, tab_activate and
    tab_close. The page logic is JavaScript shipped with agent-tools, run through
    ``host.evaluate``, so every host behaves the same. Call it from inside the asyncio loop
    that should run the host's async methods."""
    return NativeTools(
        _native.page_tools(host, settle_timeout, max_chars, max_elements, scrape_loopback_http, search_template)
    )
