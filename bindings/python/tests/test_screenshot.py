"""Seeing the page from Python, in real headless Chromium on a loopback page: CdpHost.screenshot
returns PNG bytes within the bounds; page_screenshot reaches a model sent images (``vision``)
as an image part, while an agent whose model takes none is not offered it and never sends an
image; a Python host's ``screenshot`` serves page_screenshot and one without it is answered
"not supported by this host"; the new page-tool options are taken."""

import base64
import struct
import zlib

import pytest
import pytest_asyncio

import agent_core as ac
from conftest import run_and_collect, serve_pages
from test_browser_host import StubHost

pytestmark = pytest.mark.asyncio(loop_scope="module")

PAGE = (
    "<!doctype html><html><head><title>Shot</title><style>html,body{margin:0;background:#fff}"
    "#red{position:absolute;left:40px;top:40px;width:200px;height:100px;background:#f00;border:0}"
    "</style></head><body><button id='red' aria-label='Red block'></button></body></html>"
)


@pytest.fixture(scope="module")
def site():
    with serve_pages({"/shot.html": PAGE}) as url:
        yield url


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def host():
    async with await ac.CdpHost.launch(call_timeout_ms=20_000) as browser:
        yield browser


def png(data: bytes):
    """Width, height and a pixel reader of an 8-bit RGB(A) PNG, decoded with zlib."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
    pos, chunks, idat = 8, {}, b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IDAT":
            idat += body
        chunks.setdefault(kind, body)
        pos += 12 + length
    width, height, depth, color = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert depth == 8 and color in (2, 6), (depth, color)
    channels = 3 if color == 2 else 4
    raw, stride = zlib.decompress(idat), width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, ul = prev[i], prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - ul
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - ul)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else ul)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, lambda x, y: tuple(rows[y][x * channels : x * channels + 3])


async def test_cdp_host_screenshot_is_png_within_the_bounds(host, site):
    tab = await host.open_tab(f"{site}/shot.html")
    await host.wait_settled(tab["id"], 5.0)
    width, height, pixel = png(await host.screenshot(tab["id"]))
    assert width > 240 and height > 140
    assert pixel(140, 90) == (255, 0, 0)
    width, height, _ = png(await host.screenshot(tab["id"], {"kind": "full_page"}, max_width=160, max_height=120))
    assert width <= 160 and height <= 120 and (width >= 158 or height >= 118), (width, height)
    width, height, pixel = png(
        await host.screenshot(tab["id"], {"kind": "region", "x": 40, "y": 40, "width": 200, "height": 100})
    )
    assert (width, height) == (200, 100) and pixel(100, 50) == (255, 0, 0)
    with pytest.raises(ac.ConfigError, match="full_page"):
        await host.screenshot(tab["id"], {"kind": "everything"})
    await host.close_tab(tab["id"])


def look(request):
    """Takes a screenshot when offered the tool, then answers with what the tools said."""
    tools = [t["name"] for t in request["tools"]]
    results = [m for m in request["messages"] if m["role"] == "tool"]
    if not results and "page_screenshot" in tools:
        return ac.ToolCallStep("page_screenshot")
    if not results:
        return ac.ToolCallStep("page_read", {"screenshot": True})
    return ac.Reply("seen: " + ",".join(tools))


def images(request):
    return [
        p
        for m in request["messages"]
        for p in m.get("content", [])
        if isinstance(p, dict) and p.get("type") == "image"
    ]


async def test_page_screenshot_reaches_only_a_model_sent_images(host, site):
    tab = await host.open_tab(f"{site}/shot.html")
    await host.wait_settled(tab["id"], 5.0)
    for vision, sees in (("on", True), ("off", False), ("auto", False)):
        provider = ac.ScriptedProvider.from_fn(look, record_requests=True)
        agent = ac.Agent(
            provider, tools=[host.page_tools(tab=tab["id"], screenshot_max_width=300)], vision=vision
        )
        assert agent.takes_images is sees
        assert agent.config["vision"] == vision
        outcome, _ = await run_and_collect((await agent.create_session()).send("look"))
        assert outcome.status == "done", outcome
        last = provider.requests()[-1]
        offered = "page_screenshot" in outcome.final_text
        assert offered is sees, outcome.final_text
        sent = images(last)
        if sees:
            assert len(sent) == 1 and sent[0]["media_type"] == "image/png"
            width, _, pixel = png(base64.b64decode(sent[0]["source"]["data"]))
            assert width <= 300
        else:
            assert sent == [], "a model without vision is never sent an image"
            texts = "".join(p.get("text", "") for m in last["messages"] for p in m.get("content", []))
            assert "no screenshot: this model is not sent images" in texts
    await host.close_tab(tab["id"])


class ShotHost(StubHost):
    """The stub host with a screenshot: a 1x1 PNG, and the arguments it was asked with."""

    def __init__(self):
        super().__init__()
        self.asked = []

    async def screenshot(self, tab, area, max_width, max_height):
        self.asked.append((tab, area, max_width, max_height))
        raw = b"\x00\x00\x00\xff"  # one row: filter 0, then R G B
        body = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
        chunk = lambda k, d: struct.pack(">I", len(d)) + k + d + struct.pack(">I", zlib.crc32(k + d))
        return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", body) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


async def test_a_python_host_serves_page_screenshot_or_says_it_cannot():
    def shoot(request):
        results = [m for m in request["messages"] if m["role"] == "tool"]
        return ac.Reply("done") if results else ac.ToolCallStep("page_screenshot", {"full_page": True})

    shot_host = ShotHost()
    provider = ac.ScriptedProvider.from_fn(shoot, record_requests=True)
    agent = ac.Agent(provider, tools=[ac.page_tools(shot_host, screenshot_max_height=600)], vision="on")
    outcome, events = await run_and_collect((await agent.create_session()).send("shoot"))
    assert outcome.status == "done", outcome
    assert shot_host.asked == [(None, {"kind": "full_page"}, 1280, 600)]
    (image,) = images(provider.requests()[-1])
    assert png(base64.b64decode(image["source"]["data"]))[2](0, 0) == (0, 0, 255)

    agent = ac.Agent(
        ac.ScriptedProvider.from_fn(shoot, record_requests=True), tools=[ac.page_tools(StubHost())], vision="on"
    )
    outcome, events = await run_and_collect((await agent.create_session()).send("shoot"))
    failed = [e for e in events if e.type == "tool_call_failed"]
    assert failed and "not supported by this host" in failed[0].error, failed


async def test_the_prompt_names_page_screenshot_for_a_model_that_sees():
    assert "page_screenshot" in ac.browser_prompt(vision=True)
    assert "page_screenshot" not in ac.browser_prompt()
    with pytest.raises(TypeError):
        ac.browser_prompt(vision="yes")
