"""Browser hosts: written in Python (:class:`BrowserHost`), or headless Chromium driven over
the DevTools protocol by Rust (:class:`CdpHost`); and the Rust page tools that run through
them."""

from __future__ import annotations

import os
from types import TracebackType
from typing import Any, Awaitable, Dict, List, Literal, Optional, Sequence, Tuple, Type, Union, cast

from . import _native
from ._options import options
from .tools import NativeTools

try:
    from typing import Protocol, TypedDict, runtime_checkable
except ImportError:  # pragma: no cover
    from typing_extensions import Protocol, TypedDict, runtime_checkable  # type: ignore[assignment]

__all__ = ["BrowserHost", "CdpHost", "DialogInfo", "PageToolsConfig", "ScrapePolicy", "TabInfo", "page_tools"]


class ScrapePolicy(TypedDict, total=False):
    """Which addresses page_scrape may reach besides public https ones (``page_tools(scrape=
    ...)``; ScrapePolicy in ``api/options.json``). Every switch is off by default."""

    allow_loopback: bool
    """Allow loopback addresses (127.0.0.0/8, ::1) over https."""
    allow_loopback_http: bool
    """Allow ``http://`` to loopback addresses too (tests, local development); implies
    ``allow_loopback``."""
    allow_private: bool
    """Allow private, link-local and other non-public addresses (and loopback) over https,
    for pages on a private network."""
    extra_roots_pem: List[str]
    """Extra trusted root certificates, PEM text each (a private CA, or a test server's
    certificate)."""


class DialogInfo(TypedDict):
    """A JavaScript dialog open in a tab; the page's scripts are paused until it is answered."""

    kind: str
    """``"alert"``, ``"confirm"``, ``"prompt"`` or ``"beforeunload"``."""
    message: str
    """The page's message (page text: untrusted)."""
    default_text: str
    """A prompt's prefilled answer (empty for the other kinds)."""


class PageToolsConfig(TypedDict, total=False):
    """The page tools' options as one value (``TabHub.create(page_tools_config=...)``; the
    keyword arguments of :func:`page_tools`; PageToolsConfig in ``api/options.json``). A
    missing key keeps its default (in brackets)."""

    search_template: str
    """Where a search phrase goes; ``{}`` is replaced by the encoded phrase
    [``https://duckduckgo.com/?q={}``]."""
    settle_timeout_ms: float
    """How long to wait for a page to settle after an action or a navigation [5000]."""
    max_chars: int
    """Cap on any result, in characters [20000]."""
    max_elements: int
    """Most element lines per page_read page [100]."""
    scrape_loopback_http: bool
    """Let page_scrape fetch loopback addresses over ``http://`` too [False]."""
    scrape: ScrapePolicy
    """Which other addresses page_scrape may reach (:class:`ScrapePolicy`)."""
    upload_root: str
    """The folder page_upload may take files from (give it the filesystem tools' root);
    without one page_upload refuses every file [None]."""
    screenshot_max_width: int
    """The widest screenshot the model is sent, in pixels; larger captures are scaled down
    [1280]."""
    screenshot_max_height: int
    """The tallest screenshot the model is sent, in pixels [1280]."""
    preview_chars: int
    """Characters of the page's text page_read shows first [1500]."""


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
    ``readyState`` complete and no DOM changes for a moment), ``resolve_address(text)`` (the
    host's own address bar; return None to use the built-in resolver), ``hover(tab, x, y)``
    (move a real mouse pointer to ``x, y``, CSS pixels in the tab's viewport: page_hover) and
    ``press_key(tab, key, modifiers)`` (press one key, a DOM key value such as ``"Enter"`` or
    ``"a"``, as real keyboard input to the focused element with ``modifiers`` held, each of
    ``"Alt"``, ``"Control"``, ``"Meta"``, ``"Shift"``: page_press_key). Without ``hover`` or
    ``press_key`` that tool answers the model that this host cannot do it. ``dialog(tab)``
    returns the JavaScript dialog open in the tab (a :class:`DialogInfo` dict) or None, and
    ``answer_dialog(tab, accept, text)`` presses OK (with ``text`` for a prompt) or Cancel
    (page_dialog); a host that reports dialogs should fail ``evaluate`` at once while one is
    open, since the page's scripts are paused. ``set_files(tab, element, paths)`` puts files
    into the file input that the JavaScript expression ``element`` evaluates to (page_upload).
    ``screenshot(tab, area, max_width, max_height)`` returns the tab as PNG or JPEG ``bytes``
    no larger than the bounds (scaled down, keeping proportions), ``area`` being
    ``{"kind": "viewport"}``, ``{"kind": "full_page"}`` or ``{"kind": "region", "x", "y",
    "width", "height"}`` in CSS pixels from the viewport's top left (page_screenshot).
    ``history(tab)`` returns the tab's session history as the browser records it,
    ``{"entries": [addresses, oldest first], "current": index}``, or None: page_back and
    page_forward then name the host they go to for the gate and host rules (without it they
    name none, so a host rule never approves them).
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


class CdpHost:
    """Chromium driven over the DevTools protocol by the Rust host (``agent_tools::CdpHost``).

    ``await CdpHost.launch()`` starts Debian's ``/usr/bin/chromium`` headless with a fresh
    profile directory (removed on close) and every flag a closed network needs (no background
    networking, component updates or sync; only loopback names resolve);
    ``await CdpHost.connect(url)`` attaches to a running browser. Pass the host to
    :func:`page_tools` (or call :meth:`page_tools`) to give an agent the page and tab tools.

    A browser that has exited or was closed fails every tool call with a ``disconnected``
    host error, which ends the turn. Use ``async with`` (or :meth:`close`) to shut it down.
    """

    __slots__ = ("_native",)

    def __init__(self, native: _native.CdpHost) -> None:
        """Wraps a native handle; use :meth:`launch` or :meth:`connect`."""
        self._native = native

    @classmethod
    async def launch(
        cls,
        *,
        executable: "Union[str, os.PathLike[str], None]" = None,
        extra_args: Optional[Sequence[str]] = None,
        window_size: Optional[Tuple[int, int]] = None,
        launch_timeout_ms: Optional[float] = None,
        call_timeout_ms: Optional[float] = None,
        kill_on_parent_exit: Optional[bool] = None,
        sandbox: Optional[Literal["auto", "on", "off"]] = None,
    ) -> "CdpHost":
        """Launches the browser headless and opens one blank tab. The options are the keys
        of CdpConfig (``api/options.json``); None keeps the default.

        Args:
            executable: The browser binary (default ``/usr/bin/chromium``).
            extra_args: Extra command-line flags, added after the closed-network flags (for
                example ``--lang=en-US``; a later ``--user-data-dir=...`` overrides the fresh
                profile, which is still created and removed).
            window_size: Window (and viewport) size, default ``(1280, 800)``.
            launch_timeout_ms: Milliseconds the browser may take to start (default 30000).
            call_timeout_ms: The longest any single browser call may take, in milliseconds
                (default 30000).
            kill_on_parent_exit: Kill the browser when this process exits even without a clean
                shutdown (default True).
            sandbox: Chromium's sandbox: ``"auto"`` (default: on, unless this process runs as
                root or user namespaces are unavailable, with a warning whenever it is off),
                ``"on"`` (the launch fails where the sandbox cannot run) or ``"off"``
                (``--no-sandbox``).

        Raises :class:`ConfigError` for an invalid option and :class:`HostError` when the
        browser is missing or does not start.
        """
        native = await _native.CdpHost.launch(
            options(
                executable=executable,
                extra_args=extra_args,
                window_size=window_size,
                launch_timeout_ms=launch_timeout_ms,
                call_timeout_ms=call_timeout_ms,
                kill_on_parent_exit=kill_on_parent_exit,
                sandbox=sandbox,
            )
        )
        return cls(native)

    @classmethod
    async def connect(cls, url: str, *, call_timeout_ms: Optional[float] = None) -> "CdpHost":
        """Connects to a running browser by its ``ws://`` DevTools address (or
        ``http://host:port``, looked up at ``/json/version``); its pages become the tabs.
        ``call_timeout_ms`` is the longest any single browser call may take (default 30000).
        Closing this host does not stop a browser it did not launch."""
        return cls(await _native.CdpHost.connect(url, call_timeout_ms))

    async def close(self) -> None:
        """Closes the browser (when this host launched it) and removes its profile directory.
        Safe to call more than once."""
        await self._native.close()

    @property
    def ws_url(self) -> str:
        """The browser's DevTools websocket address (another client can connect to it)."""
        return self._native.ws_url

    @property
    def pid(self) -> Optional[int]:
        """The browser's process id, when this host launched it."""
        return self._native.pid

    def is_alive(self) -> bool:
        """Whether the browser is still reachable as far as this host knows."""
        return self._native.is_alive()

    # The methods of BrowserHost, for the code that wires browser tabs to a TabHub
    # (``hub.open_tab_for_host(tab["id"])``) or looks into a page. Each raises HostError.

    async def tabs(self) -> List[TabInfo]:
        """The open tabs, in the order they were opened."""
        return cast(List[TabInfo], await self._native.tabs())

    async def open_tab(self, url: Optional[str] = None) -> TabInfo:
        """Opens a tab (at ``url`` or blank) and makes it active."""
        return cast(TabInfo, await self._native.open_tab(url))

    async def close_tab(self, tab: str) -> None:
        """Closes a tab (the last open tab cannot be closed). Tell a :class:`TabHub` with
        ``hub.host_tab_closed(tab)``."""
        await self._native.close_tab(tab)

    async def activate_tab(self, tab: str) -> None:
        """Makes a tab the active one."""
        await self._native.activate_tab(tab)

    async def evaluate(self, tab: Optional[str], expression: str) -> Any:
        """Evaluates a JavaScript expression in the tab (None: the active one) and returns
        its value as JSON data; a promise is awaited."""
        return await self._native.evaluate(tab, expression)

    async def navigate(self, tab: Optional[str], url: str) -> None:
        """Loads ``url`` in the tab (None: the active one) and returns when it loaded."""
        await self._native.navigate(tab, url)

    async def wait_settled(self, tab: Optional[str], timeout: float) -> None:
        """Waits up to ``timeout`` seconds until the tab's page has loaded and stopped
        changing."""
        await self._native.wait_settled(tab, timeout)

    async def hover(self, tab: Optional[str], x: float, y: float) -> None:
        """Moves the mouse pointer to ``(x, y)``, CSS pixels from the top left of the tab's
        viewport, as real input (the page gets its mouse events; ``:hover`` styles apply)."""
        await self._native.hover(tab, x, y)

    async def dialog(self, tab: Optional[str]) -> Optional[DialogInfo]:
        """The JavaScript dialog open in the tab (alert, confirm, prompt, leave-page warning),
        or None. While one is open the page's scripts are paused and :meth:`evaluate` fails."""
        return cast(Optional[DialogInfo], await self._native.dialog(tab))

    async def answer_dialog(self, tab: Optional[str], accept: bool, text: Optional[str] = None) -> None:
        """Answers the tab's open dialog: ``accept`` presses OK (for a prompt, with ``text``,
        else its prefilled answer), otherwise Cancel."""
        await self._native.answer_dialog(tab, accept, text)

    async def screenshot(
        self,
        tab: Optional[str] = None,
        area: Optional[Dict[str, Any]] = None,
        *,
        max_width: int = 1280,
        max_height: int = 1280,
    ) -> bytes:
        """The tab (None: the active one) as PNG bytes no larger than ``max_width`` x
        ``max_height`` (scaled down, keeping proportions): ``area`` is ``{"kind": "viewport"}``
        (the default), ``{"kind": "full_page"}`` or ``{"kind": "region", "x": ..., "y": ...,
        "width": ..., "height": ...}`` in CSS pixels from the viewport's top left."""
        return await self._native.screenshot(tab, area, max_width, max_height)

    async def press_key(self, tab: Optional[str], key: str, modifiers: Sequence[str] = ()) -> None:
        """Presses one key (a DOM key value: ``"Enter"``, ``"Tab"``, ``"a"``, ...) as real
        keyboard input to the tab's focused element, with ``modifiers`` held (``"Alt"``,
        ``"Control"``, ``"Meta"``, ``"Shift"``)."""
        await self._native.press_key(tab, key, list(modifiers))

    def page_tools(
        self,
        *,
        tab: Optional[str] = None,
        search_template: Optional[str] = None,
        settle_timeout_ms: Optional[float] = None,
        max_chars: Optional[int] = None,
        max_elements: Optional[int] = None,
        scrape_loopback_http: Optional[bool] = None,
        scrape: Optional[ScrapePolicy] = None,
        upload_root: "Union[str, os.PathLike[str], None]" = None,
        screenshot_max_width: Optional[int] = None,
        screenshot_max_height: Optional[int] = None,
        preview_chars: Optional[int] = None,
    ) -> NativeTools:
        """The page and tab tools over this browser: ``page_tools(self, ...)``; with ``tab``
        (a tab id from the ``tabs_list`` tool or a :class:`TabInfo`) bound to that tab."""
        return page_tools(
            self,
            tab=tab,
            search_template=search_template,
            settle_timeout_ms=settle_timeout_ms,
            max_chars=max_chars,
            max_elements=max_elements,
            scrape_loopback_http=scrape_loopback_http,
            scrape=scrape,
            upload_root=upload_root,
            screenshot_max_width=screenshot_max_width,
            screenshot_max_height=screenshot_max_height,
            preview_chars=preview_chars,
        )

    async def __aenter__(self) -> "CdpHost":
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"CdpHost(ws_url={self.ws_url!r}, pid={self.pid!r})"


def page_tools(
    host: Union[BrowserHost, CdpHost],
    *,
    tab: Optional[str] = None,
    search_template: Optional[str] = None,
    settle_timeout_ms: Optional[float] = None,
    max_chars: Optional[int] = None,
    max_elements: Optional[int] = None,
    scrape_loopback_http: Optional[bool] = None,
    scrape: Optional[ScrapePolicy] = None,
    upload_root: "Union[str, os.PathLike[str], None]" = None,
    screenshot_max_width: Optional[int] = None,
    screenshot_max_height: Optional[int] = None,
    preview_chars: Optional[int] = None,
) -> NativeTools:
    """The Rust page and tab tools over ``host`` (a Python :class:`BrowserHost` or a
    :class:`CdpHost`): page_read, page_text, page_click, page_fill, page_navigate and the
    other page_* tools, and tabs_list, tab_open, tab_activate and tab_close
    (``docs/page-tools.md`` describes each; ``.names`` lists them). The page logic is
    JavaScript shipped with agent-tools, run through ``host.evaluate``, so every host behaves
    the same. For a Python host, call it from inside the asyncio loop that should run the
    host's async methods.

    page_scrape is gated (the gate must allow each call) and by default fetches public
    ``https://`` addresses only, checked on every redirect and resolved address.

    Without ``tab`` the tools act on whichever tab is active. With ``tab`` (the host's id of a
    browser tab, :class:`TabInfo` ``id``) they act on that tab whatever tab is active, so an
    agent that belongs to one tab reads and clicks its own page: give each tab's agent its own
    ``page_tools(host, tab=...)``. A tab that agent opens with tab_open becomes its own and
    the one it works in; tab_activate and tab_close accept only its own tabs. Once its tab is
    closed, every page tool answers the model with an error saying the tab was closed and what
    to do instead (tell the person, or open a new tab). With a :class:`TabHub`, use
    ``TabHub.create(page_tools=host)`` instead: each hub tab's agent then works in the browser
    tab that hub tab is wired to.

    ``page_read`` takes ``since_last: true`` to list only what changed since the previous read
    by the same set of tools (after a click, say): far shorter than a full read.

    The options are the keys of PageToolsConfig (``api/options.json``); None keeps the default:

    Args:
        tab: The browser tab the tools act on (a host tab id); None for the active tab.
        search_template: Where a search phrase goes; ``{}`` is replaced by the encoded phrase
            (default ``https://duckduckgo.com/?q={}``).
        settle_timeout_ms: How long to wait for a page to settle after an action or a
            navigation, in milliseconds (default 5000).
        max_chars: Cap on any result, in characters (default 20000).
        max_elements: Most element lines per page_read page (default 100).
        scrape_loopback_http: Let page_scrape fetch loopback addresses over ``http://`` too
            (tests, local development); the same as ``scrape={"allow_loopback_http": True}``.
        scrape: Which other addresses page_scrape may reach and which extra root certificates
            it trusts (:class:`ScrapePolicy`).
        upload_root: The folder page_upload may take files from (give it the filesystem
            tools' root); without one page_upload refuses every file.
        screenshot_max_width: The widest screenshot the model is sent, in pixels (default
            1280); larger captures are scaled down, keeping proportions.
        screenshot_max_height: The tallest screenshot the model is sent (default 1280).
        preview_chars: Characters of the page's text page_read shows first (default 1500).

    ``page_screenshot`` (the viewport, ``full_page``, or one element by ``ref``; ``annotate``
    draws page_read's refs on it) and ``page_read(screenshot=true)`` return images, for an
    agent whose model is sent them (``vision``; see :attr:`Agent.takes_images`).
    """
    if tab is not None and not isinstance(tab, str):
        raise TypeError(
            f"page_tools(tab=...) takes the host's tab id as a string (TabInfo['id']), not {type(tab).__name__}"
        )
    target: Any = host._native if isinstance(host, CdpHost) else host
    config = options(
        search_template=search_template,
        settle_timeout_ms=settle_timeout_ms,
        max_chars=max_chars,
        max_elements=max_elements,
        scrape_loopback_http=scrape_loopback_http,
        scrape=scrape,
        upload_root=os.fspath(upload_root) if upload_root is not None else None,
        screenshot_max_width=screenshot_max_width,
        screenshot_max_height=screenshot_max_height,
        preview_chars=preview_chars,
    )
    return NativeTools(_native.page_tools(target, config, tab))
