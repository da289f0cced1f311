"""WebKitHost methods tested directly (not through the page tools): screenshot and set_files
(run under xvfb-run, like the other tests here)."""

import asyncio
import io
import struct
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

from webkit_host import WebKitHost  # noqa: E402

# A page taller than the viewport, with a solid red box at (50, 60), 100x40 CSS pixels.
PAGE = (
    "data:text/html,<title>Shot</title><body style='margin:0;background:%23fff;height:2000px'>"
    "<div id=box style='position:absolute;left:50px;top:60px;width:100px;height:40px;background:%23f00'></div>"
)


def png_size(data: bytes) -> "tuple[int, int]":
    """The width and height in a PNG's IHDR chunk."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:16]
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def pixel(data: bytes, x: int, y: int) -> "tuple[int, int, int]":
    """The RGB colour of one pixel of a PNG (decoded with cairo)."""
    cairo = pytest.importorskip("cairo")
    surface = cairo.ImageSurface.create_from_png(io.BytesIO(data))
    stride = surface.get_stride()
    b, g, r, _a = surface.get_data()[y * stride + x * 4 : y * stride + x * 4 + 4]
    return r, g, b


@pytest.fixture(scope="module")
def shots():
    pytest.importorskip("cairo", reason="screenshots need python3-gi-cairo (apt)")
    loop = asyncio.new_event_loop()
    host = WebKitHost(loop, title="agent-core screenshot test", viewport=(800, 600))

    async def scrolled(tab, area):
        await host.evaluate(tab, "(scrollTo(0, 30), 1)")
        try:
            return await host.screenshot(tab, area, 1000, 1000)
        finally:
            await host.evaluate(tab, "(scrollTo(0, 0), 1)")

    async def take():
        tab = (await host.open_tab(PAGE))["id"]
        await host.evaluate(tab, "new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
        return {
            "viewport": await host.screenshot(tab, {"kind": "viewport"}, 400, 400),
            "unscaled": await host.screenshot(tab, {"kind": "viewport"}, 4000, 4000),
            "full": await host.screenshot(tab, {"kind": "full_page"}, 4000, 4000),
            "full_small": await host.screenshot(tab, {"kind": "full_page"}, 500, 500),
            "region": await host.screenshot(
                tab, {"kind": "region", "x": 50, "y": 60, "width": 100, "height": 40}, 1000, 1000
            ),
            # Scrolled by 30 px: the lower 30 px of the box, and 140 px below the viewport.
            "beyond": await scrolled(tab, {"kind": "region", "x": 50, "y": 40, "width": 100, "height": 700}),
            "region_small": await host.screenshot(
                tab, {"kind": "region", "x": 40, "y": 50, "width": 120, "height": 60}, 60, 60
            ),
        }

    try:
        yield loop.run_until_complete(asyncio.wait_for(take(), 60))
    finally:
        host.close()
        loop.close()


def test_a_viewport_shot_is_scaled_down_to_the_bound_keeping_its_shape(shots):
    assert png_size(shots["unscaled"]) == (800, 600), "never scaled up"
    assert png_size(shots["viewport"]) == (400, 300)


def test_a_full_page_shot_covers_the_document(shots):
    assert png_size(shots["full"]) == (800, 2000)
    width, height = png_size(shots["full_small"])
    assert (width, height) == (200, 500)


def test_a_region_shot_crops_to_css_pixels(shots):
    assert png_size(shots["region"]) == (100, 40)
    assert pixel(shots["region"], 50, 20) == (255, 0, 0), "the red box"
    assert pixel(shots["region"], 0, 0) == (255, 0, 0)
    # 120x60 around the box, scaled to fit 60x60: 60x30, red in the middle, white at the edge.
    assert png_size(shots["region_small"]) == (60, 30)
    assert pixel(shots["region_small"], 30, 15) == (255, 0, 0)
    assert pixel(shots["region_small"], 1, 1) == (255, 255, 255)


def test_set_files_attaches_files_to_a_file_input_hidden_or_not(tmp_path):
    """set_files answers the file chooser its input's click opens (page_upload's host call;
    the conformance table checks it through the tool too)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_conformance import FixtureServer

    (tmp_path / "a.txt").write_text("alpha")
    (tmp_path / "b.txt").write_text("bravo!")
    loop = asyncio.new_event_loop()
    server = FixtureServer()
    host = WebKitHost(loop, title="agent-core set_files test", viewport=(800, 600))

    async def go():
        tab = (await host.open_tab(server.url("upload.html")))["id"]
        out = "document.getElementById('out').textContent"
        # The single-file input is hidden behind its label.
        await host.set_files(tab, "document.getElementById('one')", [str(tmp_path / "a.txt")])
        one = await host.evaluate(tab, out)
        await host.set_files(
            tab, "document.getElementById('many')", [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
        )
        many = await host.evaluate(tab, out)
        with pytest.raises(Exception, match="not a file input"):
            await host.set_files(tab, "document.getElementById('note')", [str(tmp_path / "a.txt")])
        return one, many

    try:
        one, many = loop.run_until_complete(asyncio.wait_for(go(), 60))
    finally:
        host.close()
        server.close()
        loop.close()
    assert one == "a.txt:5"
    assert many == "a.txt:5, b.txt:6"


def test_a_region_beyond_the_viewport_is_cut_from_the_whole_document(shots):
    assert png_size(shots["beyond"]) == (100, 700)
    assert pixel(shots["beyond"], 50, 5) == (255, 0, 0), "the box, scrolled up by 30 px"
    assert pixel(shots["beyond"], 50, 650) == (255, 255, 255), "below the viewport's bottom edge"
