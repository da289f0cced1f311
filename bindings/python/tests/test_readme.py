"""The README's Python quickstart is exactly bindings/python/examples/quickstart.py (which
scripts/test-python runs), so the README's code runs as written."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_readme_quickstart_is_the_tested_file():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    quickstart = (ROOT / "bindings" / "python" / "examples" / "quickstart.py").read_text()
    assert block == quickstart
