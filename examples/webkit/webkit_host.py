"""A WebKitGTK browser window and an agent_core BrowserHost implemented on it.

GTK and WebKit run on a dedicated thread with their own GLib main loop (one per process,
shared by every window); asyncio stays on the
caller's thread. Each host call schedules its WebKit work with ``GLib.idle_add`` and the
WebKit callback completes an asyncio future with ``loop.call_soon_threadsafe``. Scripts run in
an isolated script world: the page's own scripts cannot see the tools' globals (the DOM is
shared). Navigation completes on ``load-changed`` FINISHED (``load-failed`` is an error).

The window: an address/chat entry on top (``; message`` talks to the agent, anything else is
an address), tabs (a Gtk.Notebook of WebViews), and the agent's log below.
"""

from __future__ import annotations

import asyncio
import atexit
import io
import json
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

import gi

gi.require_version("Gdk", "3.0")
gi.require_version("Gtk", "3.0")
gi.require_version("WebKit2", "4.1")
from gi.repository import Gdk, GLib, Gtk, WebKit2  # noqa: E402

import agent_core as ac  # noqa: E402

WORLD = "agent-core"
SOURCE_URI = "agent-core://page-tools"

# DOM key values (what page_press_key hands the host) as GDK key names; one character keys
# map through their code point.
GDK_KEYS = {
    "Enter": "Return", "Tab": "Tab", "Escape": "Escape", "Backspace": "BackSpace", "Delete": "Delete",
    " ": "space", "ArrowUp": "Up", "ArrowDown": "Down", "ArrowLeft": "Left", "ArrowRight": "Right",
    "Home": "Home", "End": "End", "PageUp": "Page_Up", "PageDown": "Page_Down", "Insert": "Insert",
    **{f"F{i}": f"F{i}" for i in range(1, 13)},
}
# Modifiers: the key pressed for each and the state bit it sets.
GDK_MODIFIERS = {
    "Control": ("Control_L", Gdk.ModifierType.CONTROL_MASK),
    "Alt": ("Alt_L", Gdk.ModifierType.MOD1_MASK),
    "Meta": ("Meta_L", Gdk.ModifierType.META_MASK),
    "Shift": ("Shift_L", Gdk.ModifierType.SHIFT_MASK),
}
DIALOG_KINDS = {
    WebKit2.ScriptDialogType.ALERT: "alert",
    WebKit2.ScriptDialogType.CONFIRM: "confirm",
    WebKit2.ScriptDialogType.PROMPT: "prompt",
    WebKit2.ScriptDialogType.BEFORE_UNLOAD_CONFIRM: "beforeunload",
}


_GTK_THREAD: Optional[threading.Thread] = None
_GTK_LOCK = threading.Lock()


def _gtk_thread() -> threading.Thread:
    """The process's one GTK thread, running a GLib main loop for good. WebKit binds itself to
    the thread that first uses it, so every window of the process lives on this one."""
    global _GTK_THREAD
    with _GTK_LOCK:
        if _GTK_THREAD is None:
            main_loop = GLib.MainLoop()
            thread = threading.Thread(target=main_loop.run, name="gtk", daemon=True)
            thread.start()

            def stop() -> None:
                # Before the interpreter finalizes: WebKit aborts when its thread is still
                # running then.
                GLib.idle_add(main_loop.quit)
                thread.join(10)

            atexit.register(stop)
            _GTK_THREAD = thread
        return _GTK_THREAD


class WebKitHost:
    """A BrowserHost over a GTK window of WebKit web views (one per tab)."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        *,
        title: str = "agent-core WebKit example",
        viewport: Optional[Tuple[int, int]] = None,
    ) -> None:
        """``viewport`` (width, height in CSS pixels) fixes the size of every tab's web view
        (the window shrinks around it); by default the views fill a 1100x800 window."""
        self.loop = loop
        self.on_chat: Optional[Callable[[str], None]] = None
        self._title = title
        self._viewport = viewport
        self._views: Dict[str, WebKit2.WebView] = {}
        # Closed views stay referenced here, so that no Python object (a closure, an error's
        # frame) releases the last reference on another thread than GTK's.
        self._closed: List[WebKit2.WebView] = []
        self._next_id = 1
        # GTK-thread state: the dialog open in each tab, and the evaluations waiting in each tab
        # (failed at once when a dialog pauses the page or a new document replaces it).
        self._dialogs: Dict[str, Any] = {}
        self._pending: Dict[str, Set[Callable[..., None]]] = {}
        # The files set_files is choosing in each tab, for the file chooser its click opens.
        self._choosing: Dict[str, List[str]] = {}
        # Set once the window is gone (closed by the person or by close()).
        self.closed = threading.Event()
        self._ready = threading.Event()
        self._thread = _gtk_thread()
        GLib.idle_add(self._build)
        if not self._ready.wait(30):
            raise RuntimeError("GTK did not start (is there a display? run under xvfb-run)")

    # ------------------------------------------------------------------ GTK thread

    def _build(self) -> bool:
        # A context of its own, released on this thread by close(): the default context is a
        # C++ static that the process's exit handlers would release on the main thread, which
        # WebKit answers with abort().
        self.context = WebKit2.WebContext.new()
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
        if self._viewport:
            self.window.resize(1, 1)
        self.window.connect("destroy", lambda _w: self.closed.set())
        self._ready.set()
        return False

    def _new_view(self, url: Optional[str]) -> str:
        view = WebKit2.WebView.new_with_context(self.context)
        tab_id = f"tab{self._next_id}"
        self._next_id += 1
        self._views[tab_id] = view
        self._pending[tab_id] = set()
        if self._viewport:
            view.set_size_request(*self._viewport)
        label = Gtk.Label(label=tab_id)
        view.connect("notify::title", lambda v, _p: label.set_text((v.get_title() or tab_id)[:24]))
        view.connect("script-dialog", self._on_script_dialog, tab_id)
        view.connect("run-file-chooser", self._on_file_chooser, tab_id)
        view.connect("load-changed", self._on_load_changed, tab_id)
        index = self.notebook.append_page(view, label)
        view.show()
        self.notebook.set_current_page(index)
        if url:
            view.load_uri(url)
        return tab_id

    def _tab_id(self, tab: Optional[str]) -> str:
        key = tab or self._active_id()
        if key is None or key not in self._views:
            raise ac.HostError(f"no tab {tab!r}", host_kind="no_such_tab")
        return key

    def _fail_pending(self, tab_id: str, why: str) -> None:
        """Fails the evaluations waiting in the tab: their page cannot answer now."""
        for done in list(self._pending.get(tab_id, ())):
            done(None, ac.HostError(why, host_kind="script"))
        self._pending.get(tab_id, set()).clear()

    def _on_script_dialog(self, _view: WebKit2.WebView, dialog: Any, tab_id: str) -> bool:
        """Keeps the dialog open (answered later by answer_dialog); the page is paused."""
        # ref() hands back a wrapper that owns a reference (freed with it): the dialog outlives
        # this handler, as WebKit allows when the handler returns True.
        self._dialogs[tab_id] = dialog.ref()
        kind = DIALOG_KINDS.get(dialog.get_dialog_type(), "alert")
        self._fail_pending(tab_id, f"the page opened a {kind} dialog and is paused until it is answered")
        return True

    def _on_file_chooser(self, _view: WebKit2.WebView, request: Any, tab_id: str) -> bool:
        """Answers the file chooser set_files opened with its files; any other one (the
        person's click) gets WebKit's own file picker."""
        paths = self._choosing.pop(tab_id, None)
        if paths is None:
            return False
        request.select_files(paths)
        return True

    def _on_load_changed(self, _view: WebKit2.WebView, event: Any, tab_id: str) -> None:
        if event == WebKit2.LoadEvent.COMMITTED:
            # The old document is gone: its scripts will never answer (Chromium's "execution
            # context was destroyed").
            self._fail_pending(tab_id, "the page navigated; the script's document went away")

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
                # Without its traceback: the frames hold GTK objects, which must never be
                # released on another thread (WebKit aborts when a view is finalized there).
                done(None, e.with_traceback(None))
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
            # The last references to the views go here, on the GTK thread.
            for d in self._dialogs.values():
                d.close()
            self._dialogs.clear()
            self._views.clear()
            self._closed.clear()
            self.context = None
            self.closed.set()
            return False

        GLib.idle_add(stop)
        self.closed.wait(10)

    # ------------------------------------------------------------------ BrowserHost

    async def evaluate(self, tab: Optional[str], expression: str) -> Any:
        """Evaluates ``expression`` in the isolated world; promises are awaited."""

        def start(done: Callable[..., None]) -> None:
            tab_id = self._tab_id(tab)
            view = self._views[tab_id]
            if tab_id in self._dialogs:
                raise ac.HostError("the page is paused by a dialog until it is answered", host_kind="script")
            pending = self._pending[tab_id]
            pending.add(done)

            def finished(v: WebKit2.WebView, result: Any) -> None:
                pending.discard(done)
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
            self._fail_pending(tab, "the tab was closed")
            self._pending.pop(tab, None)
            dialog = self._dialogs.pop(tab, None)
            if dialog is not None:
                dialog.close()
            view.destroy()
            self._closed.append(view)
            done()

        await self._call(start)

    async def activate_tab(self, tab: str) -> None:
        def start(done: Callable[..., None]) -> None:
            self.notebook.set_current_page(self.notebook.page_num(self._view(tab)))
            done()

        await self._call(start)

    # ------------------------------------------------------------------ real input

    def _event_base(self, kind: Any, view: WebKit2.WebView, device: Any) -> Any:
        event = Gdk.Event.new(kind)
        event.window = view.get_window()
        event.send_event = 1
        event.time = int(time.monotonic() * 1000) & 0xFFFFFFFF
        event.set_device(device)
        return event

    async def hover(self, tab: Optional[str], x: float, y: float) -> None:
        """Moves the mouse pointer to (x, y) of the tab's viewport as real input: a GDK motion
        event on the web view, so the page gets mouseover/mouseenter and :hover applies."""

        def start(done: Callable[..., None]) -> None:
            tab_id = self._tab_id(tab)
            view = self._views[tab_id]
            if tab_id in self._dialogs:
                raise ac.HostError("the page is paused by a dialog until it is answered", host_kind="script")
            if not view.get_mapped():
                # A background tab's view is unmapped: GTK delivers it no pointer events.
                raise ac.HostError(
                    "not supported by this host: WebKitGTK moves the mouse only in the tab in front "
                    "(a background tab's web view gets no pointer events), so page_hover cannot act "
                    "in this background tab; ask the person, or work in the tab in front"
                )
            seat = Gdk.Display.get_default().get_default_seat()
            event = self._event_base(Gdk.EventType.MOTION_NOTIFY, view, seat.get_pointer())
            zoom = view.get_zoom_level() or 1.0
            event.x, event.y = float(x) * zoom, float(y) * zoom
            origin = view.get_window().get_origin()
            event.x_root, event.y_root = origin[1] + event.x, origin[2] + event.y
            event.state = 0
            view.event(event)
            done()

        await self._arm_input(tab, "mousemove")
        await self._call(start)
        await self._input_handled(tab, "mousemove", 1)

    async def press_key(self, tab: Optional[str], key: str, modifiers: List[str]) -> None:
        """Presses one key, with ``modifiers`` held, as real keyboard input: GDK key events on
        the tab's web view (modifiers pressed first and released last)."""

        def keyval_of(name: str) -> int:
            if name in GDK_KEYS:
                return Gdk.keyval_from_name(GDK_KEYS[name])
            if len(name) == 1:
                return Gdk.unicode_to_keyval(ord(name))
            raise ac.HostError(f"the key {name!r} is not on this host's keyboard")

        def start(done: Callable[..., None]) -> None:
            tab_id = self._tab_id(tab)
            view = self._views[tab_id]
            if tab_id in self._dialogs:
                raise ac.HostError("the page is paused by a dialog until it is answered", host_kind="script")
            held = []
            for m in modifiers:
                if m not in GDK_MODIFIERS:
                    raise ac.HostError(f"{m!r} is not a modifier key")
                held.append(GDK_MODIFIERS[m])
            keyval = keyval_of(key)
            if key == "Tab" and "Shift" in modifiers:
                keyval = Gdk.keyval_from_name("ISO_Left_Tab")
            if not view.get_mapped():
                # A background tab's view has no keyboard focus: its input method swallows the
                # key press and only the release would reach the page. Say so instead.
                raise ac.HostError(
                    "not supported by this host: WebKitGTK takes key presses only in the tab in front "
                    "(a background tab's web view has no keyboard focus), so page_press_key cannot act "
                    "in this background tab; ask the person, or work in the tab in front"
                )
            # GTK hands a key the page did not handle back to the window's focus widget, and
            # WebKit then skips the next key unless that widget is this view.
            if not view.has_focus():
                view.grab_focus()
            display = Gdk.Display.get_default()
            keyboard = display.get_default_seat().get_keyboard()
            keymap = Gdk.Keymap.get_for_display(display)

            def send(kind: Any, kv: int, state: Any, is_modifier: bool) -> None:
                event = self._event_base(kind, view, keyboard)
                event.keyval = kv
                event.state = state
                found, keys = keymap.get_entries_for_keyval(kv)
                event.hardware_keycode = keys[0].keycode if found and keys else 0
                event.group = keys[0].group if found and keys else 0
                event.is_modifier = 1 if is_modifier else 0
                view.event(event)

            state = Gdk.ModifierType(0)
            for name, bit in held:
                send(Gdk.EventType.KEY_PRESS, Gdk.keyval_from_name(name), state, True)
                state |= bit
            send(Gdk.EventType.KEY_PRESS, keyval, state, False)
            send(Gdk.EventType.KEY_RELEASE, keyval, state, False)
            for name, bit in reversed(held):
                state &= ~bit
                send(Gdk.EventType.KEY_RELEASE, Gdk.keyval_from_name(name), state | bit, True)
            done()

        await self._arm_input(tab, "keyup")
        await self._call(start)
        await self._input_handled(tab, "keyup", 1 + len(modifiers))

    async def _arm_input(self, tab: Optional[str], kind: str) -> None:
        """Starts counting the page's ``kind`` events (in the isolated world; the DOM is shared)."""
        await self.evaluate(
            tab,
            f"((s) => {{ if (!s.{kind}) {{ s.{kind} = {{n: 0}}; addEventListener('{kind}', () => s.{kind}.n++, true); }} "
            f"s.{kind}.n = 0; return 0; }})(window.__agentCoreInput || (window.__agentCoreInput = {{}}))",
        )

    async def _input_handled(self, tab: Optional[str], kind: str, count: int) -> None:
        """Waits (at most half a second) until the page has seen ``count`` ``kind`` events.
        WebKit queues input events and sends each only once the page handled the one before,
        while scripts go at once: without this wait a read-back can overtake the input."""
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:
            try:
                seen = await self.evaluate(tab, f"(window.__agentCoreInput?.{kind}?.n ?? 0)")
            except ac.HostError:
                return  # a dialog opened or the page navigated: the input arrived
            if isinstance(seen, (int, float)) and seen >= count:
                return
            await asyncio.sleep(0.01)

    # ------------------------------------------------------------------ files

    async def set_files(self, tab: Optional[str], element: str, paths: List[str]) -> None:
        """Puts files into a file input as a person choosing them in the file picker:
        ``element`` is a JavaScript expression for the ``<input type=file>``. Its click (a
        script call, which WebKit runs as a user gesture) opens the file chooser, answered
        with ``paths`` by the run-file-chooser handler; the page gets input and change."""
        tab_id = await self._call(lambda done: done(self._tab_id(tab)))

        def choose(done: Callable[..., None]) -> None:
            self._choosing[tab_id] = list(paths)
            done()

        await self._call(choose)
        try:
            clicked = await self.evaluate(
                tab_id,
                "(async () => { const el = (" + element + "); "
                "if (!(el instanceof HTMLInputElement) || el.type !== 'file') return 'not a file input'; "
                "const changed = new Promise((r) => { el.addEventListener('change', () => r('changed'), {once: true}); "
                "setTimeout(() => r('no change'), 2000); }); el.click(); return await changed; })()",
            )
        finally:
            left = await self._call(lambda done: done(self._choosing.pop(tab_id, None)))
        if clicked != "changed":
            raise ac.HostError(
                f"the file input did not take the files ({clicked}; "
                f"{'its file chooser never opened' if left is not None else 'the chooser was answered'})"
            )

    # ------------------------------------------------------------------ dialogs

    async def dialog(self, tab: Optional[str]) -> Optional[Dict[str, str]]:
        """The JavaScript dialog open in the tab (kind, message, default_text), or None."""

        def start(done: Callable[..., None]) -> None:
            d = self._dialogs.get(self._tab_id(tab))
            if d is None:
                done(None)
                return
            kind = DIALOG_KINDS.get(d.get_dialog_type(), "alert")
            default = d.prompt_get_default_text() if kind == "prompt" else ""
            done({"kind": kind, "message": d.get_message() or "", "default_text": default or ""})

        return await self._call(start)

    async def answer_dialog(self, tab: Optional[str], accept: bool, text: Optional[str]) -> None:
        """Answers the tab's open dialog: OK (a prompt with ``text``, else its prefilled text)
        or Cancel."""

        def start(done: Callable[..., None]) -> None:
            tab_id = self._tab_id(tab)
            d = self._dialogs.pop(tab_id, None)
            if d is None:
                raise ac.HostError("no dialog is open in this tab")
            kind = d.get_dialog_type()
            if kind in (WebKit2.ScriptDialogType.CONFIRM, WebKit2.ScriptDialogType.BEFORE_UNLOAD_CONFIRM):
                d.confirm_set_confirmed(bool(accept))
            elif kind == WebKit2.ScriptDialogType.PROMPT and accept:
                d.prompt_set_text(text if text is not None else (d.prompt_get_default_text() or ""))
            d.close()
            done()

        await self._call(start)

    # ------------------------------------------------------------------ screenshots

    async def screenshot(self, tab: Optional[str], area: Dict[str, Any], max_width: int, max_height: int) -> bytes:
        """A PNG of the tab: ``area`` is ``{"kind": "viewport"}``, ``{"kind": "full_page"}`` or
        ``{"kind": "region", "x", "y", "width", "height"}`` (CSS pixels from the viewport's top
        left), scaled down (never up, keeping the aspect ratio) to fit max_width x max_height."""
        try:
            import cairo  # noqa: F401 (python3-gi-cairo: get_snapshot hands back a cairo surface)
        except ImportError as e:
            raise ac.HostError(
                "not supported by this host: screenshots need python3-gi-cairo (apt), which is missing"
            ) from e
        kind = area.get("kind", "viewport")
        if kind not in ("viewport", "full_page", "region"):
            raise ac.HostError(f"unknown screenshot area {kind!r}")
        whole = kind == "full_page"
        crop = dict(area) if kind == "region" else None
        if crop is not None:
            # A region reaching beyond the viewport (a tall element) is cut from the whole
            # document, in document coordinates; one inside it from what is on screen.
            sx, sy, vw, vh = await self.evaluate(tab, "[scrollX, scrollY, innerWidth, innerHeight]")
            x, y = float(crop.get("x", 0)), float(crop.get("y", 0))
            w, h = float(crop.get("width", 0)), float(crop.get("height", 0))
            if x < 0 or y < 0 or x + w > vw or y + h > vh:
                whole = True
                crop["x"], crop["y"] = x + sx, y + sy

        def start(done: Callable[..., None]) -> None:
            tab_id = self._tab_id(tab)
            view = self._views[tab_id]
            if tab_id in self._dialogs:
                raise ac.HostError("the page is paused by a dialog until it is answered", host_kind="script")
            region = WebKit2.SnapshotRegion.FULL_DOCUMENT if whole else WebKit2.SnapshotRegion.VISIBLE
            zoom = view.get_zoom_level() or 1.0

            def finished(v: WebKit2.WebView, result: Any) -> None:
                try:
                    surface = v.get_snapshot_finish(result)
                    done(_png(surface, crop, zoom, max_width, max_height))
                except GLib.Error as e:
                    done(None, ac.HostError(f"the snapshot failed: {e.message}"))
                except Exception as e:  # noqa: BLE001
                    done(None, e)

            view.get_snapshot(region, WebKit2.SnapshotOptions.NONE, None, finished)

        return await asyncio.wait_for(self._call(start), 60)


def _png(surface: Any, region: Optional[Dict[str, Any]], zoom: float, max_width: int, max_height: int) -> bytes:
    """Crops ``surface`` to ``region`` (CSS pixels; None: all of it), scales it down to fit
    max_width x max_height (never up) and encodes it as PNG."""
    import cairo

    sw, sh = surface.get_width(), surface.get_height()
    if region is not None:
        x = max(0.0, float(region.get("x", 0)) * zoom)
        y = max(0.0, float(region.get("y", 0)) * zoom)
        w = min(float(region.get("width", 0)) * zoom, sw - x)
        h = min(float(region.get("height", 0)) * zoom, sh - y)
        if w < 1 or h < 1:
            raise ac.HostError("the screenshot region lies outside the viewport")
    else:
        x, y, w, h = 0.0, 0.0, float(sw), float(sh)
    scale = min(1.0, max(1, int(max_width)) / w, max(1, int(max_height)) / h)
    out_w, out_h = max(1, min(int(max_width), round(w * scale))), max(1, min(int(max_height), round(h * scale)))
    out = cairo.ImageSurface(cairo.FORMAT_RGB24, out_w, out_h)
    ctx = cairo.Context(out)
    ctx.scale(out_w / w, out_h / h)
    ctx.set_source_surface(surface, -x, -y)
    ctx.get_source().set_filter(cairo.FILTER_GOOD)
    ctx.paint()
    buf = io.BytesIO()
    out.write_to_png(buf)
    return buf.getvalue()
