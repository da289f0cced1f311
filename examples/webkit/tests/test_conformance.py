"""The page-tool conformance table (agent-tools/tests/conformance/cases.json) on the WebKitGTK
host, through the Python binding: the same cases agent-tools/tests/conformance.rs runs on the
Rust CDP host in Chromium, so a behaviour that differs between the engines fails here.

Each case is its own test (one WebKit window for all, a new tab per case). The binding has no
way to call a native tool directly, so each case is one agent turn: a scripted model
(``ScriptedProvider.from_fn``) issues the case's steps as tool calls in order, resolving refs
from the page_read results it has seen, and a small Python tool (``conformance_host``) runs
the host-side steps (evaluate, load a page, which tab is in front) in the same turn. The tool
results are then checked against the table.

Run under Xvfb: ``xvfb-run -a ~/.cache/agent-core/py-venv/bin/python -m pytest -q -p
no:cacheprovider examples/webkit/tests/test_conformance.py``. ``CONFORMANCE_ENGINE=chromium``
runs the table through the binding's CdpHost instead (a check of this runner itself).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import sys
import tempfile
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
REPO = HERE.parent.parent
TABLE = REPO / "agent-tools" / "tests" / "conformance" / "cases.json"
FIXTURES = REPO / "agent-tools" / "tests" / "fixtures"

import agent_core as ac  # noqa: E402

ENGINE = os.environ.get("CONFORMANCE_ENGINE", "webkit")
CASES: List[Dict[str, Any]] = json.loads(TABLE.read_text())["cases"]
UNSUPPORTED = "not supported by this host"

# Waits for readyState complete, then for 120 ms without DOM changes (at most 5 s in all).
SETTLE = """(async () => {
  const start = performance.now();
  while (document.readyState !== 'complete' && performance.now() - start < 5000) await new Promise(r => setTimeout(r, 25));
  await new Promise((resolve) => {
    let timer;
    const done = () => { obs.disconnect(); clearTimeout(timer); clearTimeout(cap); resolve(); };
    const obs = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(done, 120); });
    obs.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    timer = setTimeout(done, 120);
    const cap = setTimeout(done, 5000);
  });
  return document.readyState;
})()"""


class FixtureServer:
    """Serves agent-tools/tests/fixtures on 127.0.0.1, plus ``/redirect?to=<path>`` (302), as
    the Rust suites' server does."""

    def __init__(self) -> None:
        handler = partial(_Handler, directory=str(FIXTURES))
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        host, port = self.server.server_address[:2]
        self.base = f"http://{host}:{port}"

    def url(self, page: str) -> str:
        return page if ":" in page else f"{self.base}/{page.lstrip('/')}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Handler(SimpleHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if self.path.startswith("/redirect?to="):
            self.send_response(302)
            self.send_header("Location", self.path.split("=", 1)[1])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, *args: Any) -> None:
        pass


class Browser:
    """The engine under test: one host (one window or browser) for every case."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.server = FixtureServer()
        self.host: Any = None
        if ENGINE == "webkit":
            from webkit_host import WebKitHost

            self.host = WebKitHost(self.loop, title="agent-core conformance", viewport=(1280, 713))
        else:
            self.host = self.loop.run_until_complete(ac.CdpHost.launch())

    async def settle(self, tab: str) -> None:
        if hasattr(self.host, "wait_settled"):
            await self.host.wait_settled(tab, 5.0)
        else:
            await self.host.evaluate(tab, SETTLE)

    def close(self) -> None:
        if ENGINE == "webkit":
            self.host.close()
        else:
            self.loop.run_until_complete(self.host.close())
        self.server.close()
        self.loop.close()


@pytest.fixture(scope="module")
def browser():
    b = Browser()
    yield b
    b.close()


def is_element_line(line: str) -> bool:
    return len(line) > 1 and line[0] == "e" and line[1].isdigit()


def expectations(step: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The step's expectations on this engine (None: skipped here)."""
    # The engine's own entry, else a limit of the Python binding (whatever the engine).
    override = step.get(ENGINE, step.get("python"))
    if override is None:
        return step
    if override == "unsupported":
        return {"error": True, "contains": [UNSUPPORTED]}
    if isinstance(override, dict) and "skip" in override:
        return None
    if isinstance(override, dict):
        return override
    raise ValueError(f"bad {ENGINE} override {override!r}")


class CaseRun:
    """One case: its tabs, the substitutions, and the scripted model that plays its steps."""

    def __init__(self, browser: Browser, case: Dict[str, Any], case_tab: str, front_tab: Optional[str]) -> None:
        self.b = browser
        self.case = case
        self.steps: List[Dict[str, Any]] = case["steps"]
        self.case_tab = case_tab
        self.front_tab = front_tab
        self.vars: Dict[str, str] = {}
        # (step index, tool name, args, is_error, text) of every step run so far.
        self.results: List[Tuple[int, str, Dict[str, Any], bool, str]] = []
        self.aborted: Optional[str] = None
        self.planned: List[Tuple[int, str, Dict[str, Any]]] = []

    def fill(self, value: Any) -> Any:
        if isinstance(value, str):
            out = value.replace("{base}", self.b.server.base).replace("{host}", self.b.server.base[len("http://"):])
            out = out.replace("{case_tab}", self.case_tab)
            if self.front_tab:
                out = out.replace("{front_tab}", self.front_tab)
            for k, v in self.vars.items():
                out = out.replace("{" + k + "}", v)
            return out
        if isinstance(value, list):
            return [self.fill(v) for v in value]
        if isinstance(value, dict):
            return {k: self.fill(v) for k, v in value.items()}
        return value

    def ref_of(self, needle: str) -> str:
        for _, name, _, is_error, text in reversed(self.results):
            if name != "page_read" or is_error:
                continue
            for line in text.splitlines():
                if is_element_line(line) and needle in line:
                    return line.split()[0]
        raise LookupError(f"no page_read so far lists an element line with {needle!r}")

    def tab_of(self, step: Dict[str, Any]) -> str:
        return self.front_tab if step.get("tab") == "front" and self.front_tab else self.case_tab

    # ------------------------------------------------------------------ the scripted model

    def choose(self, request: Dict[str, Any]) -> Any:
        tool_messages = [m for m in request["messages"] if m["role"] == "tool"]
        # The results of the calls made so far, in order.
        for (index, name, args), m in zip(self.planned[len(self.results):], tool_messages[len(self.results):]):
            text = "".join(p.get("text", "") for p in m.get("content", []) if p.get("type") == "text")
            self.results.append((index, name, args, bool(m.get("is_error")), text))
            save = self.steps[index].get("save")
            if save and save["after"] in text:
                word = text.split(save["after"], 1)[1].split()[0].rstrip(";,")
                self.vars[save["name"]] = word
        index = self.planned[-1][0] + 1 if self.planned else 0
        while index < len(self.steps) and expectations(self.steps[index]) is None:
            index += 1
        if index >= len(self.steps) or self.aborted:
            return ac.Reply("done")
        step = self.steps[index]
        try:
            name, args = self.call_of(step)
        except LookupError as e:
            self.aborted = f"step {index + 1}: {e}"
            return ac.Reply("done")
        self.planned.append((index, name, args))
        return ac.Reply(f"step {index + 1}", tool_calls=[(name, args)])

    def call_of(self, step: Dict[str, Any]) -> Tuple[str, Dict[str, Any]]:
        if "open" in step:
            return "conformance_host", {"op": "open", "arg": self.b.server.url(step["open"]), "tab": self.tab_of(step)}
        if "eval" in step:
            return "conformance_host", {"op": "eval", "arg": step["eval"], "tab": self.tab_of(step)}
        if "active" in step:
            return "conformance_host", {"op": "active", "arg": "", "tab": self.case_tab}
        args = self.fill(step.get("args") or {})
        if "ref_of" in step:
            args["ref"] = self.ref_of(step["ref_of"])
        return step["tool"], args

    # ------------------------------------------------------------------ the host-side steps

    async def host_step(self, op: str, arg: str, tab: str) -> str:
        """Runs one host-side step: evaluate, open a page, or which tab is in front."""
        if op == "eval":
            return json.dumps({"value": await self.b.host.evaluate(tab, arg)})
        if op == "open":
            await self.b.host.navigate(tab, arg)
            await self.b.settle(tab)
            return json.dumps({"value": None})
        if op == "active":
            tabs = await self.b.host.tabs()
            return json.dumps({"value": next((t["id"] for t in tabs if t["active"]), None)})
        raise ValueError(f"unknown op {op}")

    # ------------------------------------------------------------------ checking

    async def after_turn(self) -> List[str]:
        """Runs the case's ``after_turn`` host steps (eval, open, active) once the turn has
        ended, checking each as its own step."""
        for i, step in enumerate(self.case.get("after_turn", [])):
            expect = expectations(step)
            if expect is None:
                continue
            _, call = self.call_of(step)
            try:
                text = await self.host_step(call["op"], call["arg"], call["tab"])
            except Exception as e:  # noqa: BLE001 - reported as the step's failure
                return [f"after the turn, step {i + 1}: the host failed: {e}"]
            value = json.loads(text)["value"]
            if "active" in step:
                want = self.front_tab if step["active"] == "front" else self.case_tab
                if value != want:
                    return [f"after the turn, step {i + 1}: expected the {step['active']} tab in front, found {value}"]
            elif "equals" in expect and value != self.fill(expect["equals"]):
                return [f"after the turn, step {i + 1}: {call['arg']}: expected "
                        f"{json.dumps(self.fill(expect['equals']))}, got {json.dumps(value)}"]
        return []

    def failures(self) -> List[str]:
        problems: List[str] = []
        for index, name, args, is_error, text in self.results:
            step = self.steps[index]
            expect = expectations(step) or {}
            found: List[str] = []
            if name == "conformance_host":
                if is_error:
                    found.append(f"the host failed: {text}")
                else:
                    value = json.loads(text)["value"]
                    if "active" in step:
                        want = self.front_tab if step["active"] == "front" else self.case_tab
                        if value != want:
                            found.append(f"expected the {step['active']} tab ({want}) in front, found {value}")
                    elif "equals" in expect and value != self.fill(expect["equals"]):
                        found.append(f"expected {json.dumps(self.fill(expect['equals']))}, got {json.dumps(value)}")
                    text = json.dumps(value)
            else:
                want_error = bool(expect.get("error", False))
                if want_error != is_error:
                    found.append("expected an error (a refusal), got a success" if want_error
                                 else "expected a success, got an error")
            for want in expect.get("contains", []):
                if self.fill(want) not in text:
                    found.append(f"does not contain {self.fill(want)!r}")
            for no in expect.get("not_contains", []):
                if self.fill(no) in text:
                    found.append(f"contains {self.fill(no)!r}")
            if found:
                what = step.get("eval") or step.get("open") or name
                problems.append(f"step {index + 1}: {what} {json.dumps(args)}: {'; '.join(found)}\n--- answer ---\n{text}\n---")
                break
        if not problems and self.aborted:
            problems.append(self.aborted)
        if not problems:
            ran = {i for i, *_ in self.results}
            missing = [i + 1 for i, s in enumerate(self.steps) if expectations(s) is not None and i not in ran]
            if missing:
                problems.append(f"steps {missing} never ran")
        return problems


async def run_case(b: Browser, case: Dict[str, Any]) -> List[str]:
    opened = await b.host.open_tab(b.server.url(case["page"]))
    case_tab = opened["id"]
    await b.settle(case_tab)
    front_tab = None
    if case.get("front"):
        front = await b.host.open_tab(b.server.url(case["front"]))
        front_tab = front["id"]
        await b.settle(front_tab)
    run = CaseRun(b, case, case_tab, front_tab)

    async def conformance_host(op: str, arg: str, tab: str) -> str:
        """The test runner's own step (evaluate, open a page, which tab is in front)."""
        return await run.host_step(op, arg, tab)

    folder = tempfile.TemporaryDirectory() if case.get("upload_folder") else None
    if folder:
        # As the Rust runner's: a.txt, sub/b.txt, a directory, and a symlink out.
        root = Path(folder.name)
        (root / "a.txt").write_text("alpha")
        (root / "sub").mkdir()
        (root / "sub" / "b.txt").write_text("bravo!")
        (root / "link.txt").symlink_to("/etc/hostname")
    tools = ac.page_tools(
        b.host,
        tab=case_tab if case.get("bound") else None,
        settle_timeout_ms=5000,
        scrape_loopback_http=True,
        upload_root=folder.name if folder else None,
    )
    agent = ac.Agent(
        ac.ScriptedProvider.from_fn(run.choose),
        tools=[tools, ac.tool(conformance_host)],
        gate=lambda req: True,
        max_iterations=200,
        max_tool_calls=None,
        tool_timeout_ms=60_000,
        vision="on",  # page_screenshot is offered only to a model that is sent images
    )
    try:
        session = await agent.create_session()
        outcome = await session.send(f"conformance case {case['name']}")
        problems = run.failures()
        if not problems:
            problems = await run.after_turn()
        if os.environ.get("CONFORMANCE_DUMP"):
            for index, name, args, is_error, text in run.results:
                print(f"--- step {index + 1} {name} {json.dumps(args)} error={is_error}\n{text}")
        if outcome.status != "done":
            problems.append(f"the turn ended {outcome.status}: {outcome}")
        return problems
    finally:
        if folder:
            folder.cleanup()
        for tab in [front_tab, *run.vars.values(), case_tab]:
            if tab:
                try:
                    await b.host.close_tab(tab)
                except Exception:  # noqa: BLE001 - a tab the case already closed
                    pass


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_conformance(browser: Browser, case: Dict[str, Any]) -> None:
    skip = (case.get(ENGINE) or {}).get("skip")
    if skip:
        pytest.skip(f"not on {ENGINE}: {skip}")
    shoots = any(step.get("tool") == "page_screenshot" for step in case["steps"])
    if ENGINE == "webkit" and shoots and importlib.util.find_spec("cairo") is None:
        pytest.skip("WebKitHost.screenshot needs Debian's python3-gi-cairo, which is not installed")
    problems = browser.loop.run_until_complete(asyncio.wait_for(run_case(browser, case), 120))
    assert not problems, f"case {case['name']} on {ENGINE}:\n" + "\n".join(problems)
