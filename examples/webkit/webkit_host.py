"""A WebKitGTK browser window and an agent_core BrowserHost implemented on it.

GTK and WebKit run on a dedicated thread with their own GLib main loop; asyncio stays on the
caller's thread. Each host call schedules its WebKit work with ``GLib.idle_add`` and the
WebKit callback completes an asyncio future with ``loop.call_soon_threadsafe``. Scripts run in
an isolated script world: the page's own scripts cannot see the tools' globals (the DOM is
shared). Navigation completes on ``load-changed`` FINISHED (``load-failed`` is an error).

The window: an address/chat entry on top (``; message`` talks to the agent, anything else is
an address), tabs (a Gtk.Notebook of WebViews), and the agent's log below.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any, Callable, Dict, List, Optional

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("WebKit2", "4.1")
from gi.repository import GLib, Gtk, WebKit2  # noqa: E402

import agent_core as ac  # noqa: E402

WORLD = "agent-core"
SOURCE_URI = "agent-core://page-tools"


class WebKitHost:
    """A BrowserHost over a GTK window of WebKit web views (one per tab)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, *, title: str = "agent-core WebKit example") -> None:
        self.loop = loop
        self.on_chat: Optional[Callable[[str], None]] = None
        self._title = title
        self._views: Dict[str, WebKit2.WebView] = {}
        self._next_id = 1
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._gtk_main, name="gtk", daemon=True)
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("GTK did not start (is there a display? run under xvfb-run)")

    # ------------------------------------------------------------------ GTK thread

    def _gtk_main(self) -> None:
        self._main_loop = GLib.MainLoop()
        self.context = WebKit2.WebContext.get_default()
        self.window = Gtk.Window(title=self._title)
        self.window.set_default_size(1100, 800)
        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=4)
        self.entry = Gtk.Entry(placeholder_text="Address, or ; message for the agent")
        self.entry.connect("activate", self._on_entry)
        self.notebook = Gtk.Notebook()
        self.notebook.set_vexpand(True)
        self.log_view = Gtk.TextView(editable=False, cursor_visible=False, wrap_mode=Gtk.WrapMode.WORD_CHAR)
        scroller = Gtk.ScrolledWindow()
        scroller.set_size_request(-1, 180)
        scroller.add(self.log_view)
        box.pack_start(self.entry, False, False, 0)
        box.pack_start(self.notebook, True, True, 0)
        box.pack_start(scroller, False, True, 0)
        self.window.add(box)
        self._new_view(None)
        self.window.show_all()
        self._ready.set()
        self._main_loop.run()

    def _new_view(self, url: Optional[str]) -> str:
        view = WebKit2.WebView.new_with_context(self.context)
        tab_id = f"tab{self._next_id}"
        self._next_id += 1
        self._views[tab_id] = view
        label = Gtk.Label(label=tab_id)
        view.connect("notify::title", lambda v, _p: label.set_text((v.get_title() or tab_id)[:24]))
        index = self.notebook.append_page(view, label)
        view.show()
        self.notebook.set_current_page(index)
        if url:
            view.load_uri(url)
        return tab_id

    def _active_id(self) -> Optional[str]:
        page = self.notebook.get_nth_page(self.notebook.get_current_page())
        return next((k for k, v in self._views.items() if v is page), None)

    def _view(self, tab: Optional[str]) -> WebKit2.WebView:
        key = tab or self._active_id()
        if key is None or key not in self._views:
            raise ac.HostError(f"no tab {tab!r}", host_kind="no_such_tab")
        return self._views[key]

    def _info(self, tab_id: str) -> Dict[str, Any]:
        view = self._views[tab_id]
        return {
            "id": tab_id,
            "url": view.get_uri() or "about:blank",
            "title": view.get_title() or "",
            "active": tab_id == self._active_id(),
        }

    def _on_entry(self, entry: Gtk.Entry) -> None:
        text = entry.get_text().strip()
        entry.set_text("")
        if not text:
            return
        if text.startswith(";"):
            # The embedded-agent plan's URL-bar routing: "; message" talks to the agent.
            if self.on_chat:
                self.on_chat(text[1:].strip())
            return
        url = text if "://" in text or text.startswith("about:") else f"http://{text}"
        self._view(None).load_uri(url)

    # ------------------------------------------------------------------ bridge

    def _call(self, start: Callable[[Callable[[Any, Optional[BaseException]], None]], None]) -> "asyncio.Future[Any]":
        """Runs ``start(done)`` on the GTK thread; ``done(value, error)`` completes the future."""
        fut: asyncio.Future[Any] = self.loop.create_future()

        def done(value: Any = None, error: Optional[BaseException] = None) -> None:
            def settle() -> None:
                if fut.done():
                    return
                if error is not None:
                    fut.set_exception(error)
                else:
                    fut.set_result(value)

            self.loop.call_soon_threadsafe(settle)

        def on_gtk() -> bool:
            try:
                start(done)
            except BaseException as e:  # noqa: BLE001 - reported to the caller
                done(None, e)
            return False

        GLib.idle_add(on_gtk)
        return fut

    def log(self, text: str) -> None:
        """Appends a line to the window's agent log (thread-safe)."""

        def append() -> bool:
            buf = self.log_view.get_buffer()
            buf.insert(buf.get_end_iter(), text + "\n")
            self.log_view.scroll_to_iter(buf.get_end_iter(), 0.0, False, 0.0, 1.0)
            return False

        GLib.idle_add(append)

    def close(self) -> None:
        """Closes the window and stops the GTK thread."""

        def stop() -> bool:
            self.window.destroy()
            self._main_loop.quit()
            return False

        GLib.idle_add(stop)
        self._thread.join(10)

    # ------------------------------------------------------------------ BrowserHost

    async def evaluate(self, tab: Optional[str], expression: str) -> Any:
        """Evaluates ``expression`` in the isolated world; promises are awaited."""

        def start(done: Callable[..., None]) -> None:
            view = self._view(tab)

            def finished(v: WebKit2.WebView, result: Any) -> None:
                try:
                    value = v.call_async_javascript_function_finish(result)
                    text = value.to_json(0) if value is not None else None
                    done(json.loads(text) if text else None)
                except GLib.Error as e:
                    done(None, ac.HostError(e.message, host_kind="script"))
                except Exception as e:  # noqa: BLE001
                    done(None, e)

            body = f"return await ({expression});"
            view.call_async_javascript_function(body, -1, None, WORLD, SOURCE_URI, None, finished)

        return await asyncio.wait_for(self._call(start), 60)

    async def navigate(self, tab: Optional[str], url: str) -> None:
        """Loads ``url`` and waits for load-changed FINISHED (load-failed is an error)."""

        def start(done: Callable[..., None]) -> None:
            view = self._view(tab)
            ids: List[int] = []
            failed: List[str] = []

            def finish(err: Optional[BaseException]) -> None:
                for i in ids:
                    view.disconnect(i)
                ids.clear()
                done(None, err)

            def on_failed(_v: Any, _event: Any, uri: str, error: GLib.Error) -> bool:
                failed.append(f"{uri}: {error.message}")
                return False

            def on_changed(_v: Any, event: Any) -> None:
                if event == WebKit2.LoadEvent.FINISHED:
                    finish(ac.HostError(failed[0], host_kind="navigation") if failed else None)

            ids.append(view.connect("load-failed", on_failed))
            ids.append(view.connect("load-changed", on_changed))
            view.load_uri(url)

        await asyncio.wait_for(self._call(start), 60)

    async def tabs(self) -> List[Dict[str, Any]]:
        return await self._call(lambda done: done([self._info(k) for k in self._views]))

    async def open_tab(self, url: Optional[str]) -> Dict[str, Any]:
        tab_id = await self._call(lambda done: done(self._new_view(None)))
        if url:
            await self.navigate(tab_id, url)
        return await self._call(lambda done: done(self._info(tab_id)))

    async def close_tab(self, tab: str) -> None:
        def start(done: Callable[..., None]) -> None:
            view = self._view(tab)
            self.notebook.remove_page(self.notebook.page_num(view))
            del self._views[tab]
            view.destroy()
            done()

        await self._call(start)

    async def activate_tab(self, tab: str) -> None:
        def start(done: Callable[..., None]) -> None:
            self.notebook.set_current_page(self.notebook.page_num(self._view(tab)))
            done()

        await self._call(start)
