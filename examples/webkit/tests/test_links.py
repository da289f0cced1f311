"""The links task in a real WebKitGTK web view (run under xvfb-run): the Rust page tools run
through the Python WebKitHost, the fs tools write the file."""

import asyncio
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

from app import run_links_task  # noqa: E402

EXPECTED = [
    "/",
    "/about.html",
    "https://www.rust-lang.org/learn",
    "https://tokio.rs/tokio/tutorial",
    "https://chromedevtools.github.io/devtools-protocol/",
    "https://webkitgtk.org/reference/webkit2gtk/stable/",
    "https://modelcontextprotocol.io/specification",
    "https://pyo3.rs/",
    "https://napi.rs/docs/introduction/getting-started",
]


def test_links_task_in_webkit(tmp_path):
    outcome = asyncio.run(run_links_task(tmp_path))
    assert outcome.status == "done", outcome
    lines = (tmp_path / "links.txt").read_text().splitlines()
    urls = [l.split("\t")[0] for l in lines]
    assert len(urls) == len(EXPECTED), lines
    for want, got in zip(EXPECTED, urls):
        assert got.endswith(want) if want.startswith("/") else got == want
    names = dict(l.split("\t", 1) for l in lines)
    assert names["https://pyo3.rs/"] == "PyO3 user guide"
    assert "data:" not in "\n".join(lines)  # withheld by the page tools
    assert "Saved 9 links" in outcome.final_text


def test_a_ref_inside_a_nonce_is_not_taken_for_a_click_already_made():
    from links_task import mentions_ref

    refused = '<untrusted-content nonce="768c18e869374cf8">\ne1 (button "Confirm") reads like a commit'
    assert mentions_ref(refused, "e1")
    assert not mentions_ref(refused, "e8")  # only inside the nonce
    assert not mentions_ref("clicked e12 (button)", "e1")
