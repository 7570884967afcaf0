"""Every example runs to the end (each checks its own result)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import cubehip

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example(example):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(cubehip.__file__).parents[1]), env.get("PYTHONPATH", "")])
    run = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
