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


def test_readme_human_control_is_the_tested_file():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Human control", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    example = (ROOT / "bindings" / "python" / "examples" / "human_control.py").read_text()
    assert block == example


def test_the_human_control_example_runs():
    import subprocess
    import sys

    example = ROOT / "bindings" / "python" / "examples" / "human_control.py"
    done = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done Paid invoice 42."


def test_readme_typed_answer_is_the_tested_file_and_runs():
    import subprocess
    import sys

    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Typed final answers", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    example = ROOT / "bindings" / "python" / "examples" / "typed_answer.py"
    assert block == example.read_text()
    done = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Paris 21 ['sunny']"
