"""Every example runs to the end (each checks its own result), and so does every Python
snippet of the guide (the repository README's Python section) and of docs/cupy.md."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import cubehip

PACKAGE = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((PACKAGE / "examples").glob("*.py"))
README = PACKAGE.parents[1] / "README.md"
GUIDE = "## Using cubehip from Python"


def _run(args):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(cubehip.__file__).parents[1]), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=300)


def _snippets():
    """(name, code) of each ```python block of the guide and of docs/cupy.md. The tests
    copied out of the repository (a GPU machine's build/gpu/python) have no README."""
    found = []
    if README.is_file() and GUIDE in README.read_text():
        text = README.read_text()
        section = text[text.index(GUIDE):]
        section = section[: section.find("\n## ", len(GUIDE))]
        found += [(f"README-{i}", code) for i, code in enumerate(re.findall(r"```python\n(.*?)```", section, re.S))]
    cupy = PACKAGE / "docs" / "cupy.md"
    if cupy.is_file():
        found += [(f"cupy.md-{i}", code) for i, code in enumerate(re.findall(r"```python\n(.*?)```", cupy.read_text(), re.S))]
    return found


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example(example):
    run = _run([str(example)])
    assert run.returncode == 0, run.stdout + run.stderr


SNIPPETS = _snippets()


@pytest.mark.skipif(not SNIPPETS, reason="no README beside the package (tests copied out of the repository)")
@pytest.mark.parametrize("name,code", SNIPPETS, ids=[n for n, _ in SNIPPETS])
def test_snippet_runs_as_written(name, code):
    run = _run(["-c", code])
    assert run.returncode == 0, f"{name}:\n{code}\n{run.stdout}{run.stderr}"


def test_the_guide_has_its_snippet():
    if not README.is_file():
        pytest.skip("no README beside the package (tests copied out of the repository)")
    assert any(n.startswith("README-") for n, _ in SNIPPETS)
