"""Traces from Python: start_trace/stop_trace and ``with dev.trace(path)``, and
$CUBEHIP_TRACE written at interpreter exit for a device the script never closed."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cubehip

from conftest import PLATFORM

INC = r"""
extern "C" __global__ void trace_inc(float* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
"""


def slices(path) -> list[tuple[str, str]]:
    """The trace's slices as (category, name), in the order written."""
    with open(path) as f:
        data = json.load(f)
    return [(e["cat"], e["name"]) for e in data["traceEvents"] if e["ph"] == "X"]


@pytest.fixture
def fresh():
    """A device of its own, with a kernel cache of its own: a test's compiles are its own."""
    d = cubehip.Device(PLATFORM, cache_dir="-")
    yield d
    d.close()


def test_start_stop_writes_launches_copies_and_compiles(fresh, tmp_path):
    fresh.start_trace()
    k = cubehip.Kernel(INC, "trace_inc", block=64, device=fresh)
    x = fresh.array(np.zeros(10, np.float32))
    k(1, x, 10)
    assert x.get()[3] == 1.0
    out = tmp_path / "t.json"
    fresh.stop_trace(out)
    got = slices(out)
    assert ("launch", "trace_inc") in got
    assert ("compile", "trace_inc") in got
    assert ("copy", "write 40 B") in got and ("copy", "read 40 B") in got
    with open(out) as f:
        rows = {e["args"]["name"] for e in json.load(f)["traceEvents"] if e["name"] == "thread_name"}
    assert rows == {"stream 0", "compiles (host clock)"}


def test_context_manager_writes_even_when_the_block_raises(fresh, tmp_path):
    k = cubehip.Kernel(INC, "trace_inc", block=64, device=fresh)
    x = fresh.array(np.zeros(4, np.float32))
    out = tmp_path / "cm.json"
    with pytest.raises(ZeroDivisionError):
        with fresh.trace(str(out)):
            k(1, x, 4)
            1 / 0
    assert ("launch", "trace_inc") in slices(out)
    fresh.start_trace()  # the block's trace ended: another may start
    fresh.stop_trace(tmp_path / "again.json")


def test_errors(fresh, tmp_path):
    with pytest.raises(cubehip.InvalidArgument, match="no trace is open"):
        fresh.stop_trace(tmp_path / "none.json")
    assert not (tmp_path / "none.json").exists()
    fresh.flush_trace()  # no $CUBEHIP_TRACE trace: nothing to do
    fresh.start_trace()
    with pytest.raises(cubehip.InvalidArgument, match="already open"):
        fresh.start_trace()
    missing = tmp_path / "no-such-dir" / "t.json"
    with pytest.raises(cubehip.InvalidArgument, match="no-such-dir"):
        fresh.stop_trace(missing)
    with pytest.raises(TypeError, match="path"):
        fresh.stop_trace(3)
    with pytest.raises(ValueError, match="empty"):
        fresh.stop_trace("")
    with pytest.raises(TypeError, match="path"):
        fresh.trace(None)
    fresh.stop_trace(pathlib.Path(tmp_path) / "t.json")  # still open after the refusals
    assert os.listdir(tmp_path) == ["t.json"]
    fresh.close()
    with pytest.raises(cubehip.DeviceClosed):
        fresh.start_trace()
    with pytest.raises(cubehip.DeviceClosed):
        fresh.flush_trace()


SCRIPT = textwrap.dedent(
    """
    import numpy as np
    from cubehip import RawKernel, get_device

    k = RawKernel(r'''
    extern "C" __global__ void never_closed(float* x, unsigned n) {
      unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) x[i] = 2.0f * x[i];
    }''', "never_closed")
    x = get_device().array(np.ones(32, np.float32))   # the default device, never closed
    k((1,), (32,), (x, np.uint32(32)))
    k((1,), (32,), (x, np.uint32(32)))
    assert x.get()[0] == 4.0
    print("done")
    """
)


def run_script(tmp_path, env_extra: dict[str, str]) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.update(env_extra)
    env.setdefault("CUBEHIP_PLATFORM", "cpu" if PLATFORM == "auto" else PLATFORM)
    env["CUBEHIP_CACHE_DIR"] = str(tmp_path / "cache")
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    return subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)


def test_cubehip_trace_is_written_at_exit_for_a_device_never_closed(tmp_path):
    path = tmp_path / "exit.json"
    r = run_script(tmp_path, {"CUBEHIP_TRACE": str(path)})
    assert r.returncode == 0, r.stderr
    assert "done" in r.stdout
    assert path.exists(), "no trace written at exit"
    got = slices(path)
    assert got.count(("launch", "never_closed")) == 2
    assert got.count(("compile", "never_closed")) == 1
    assert ("copy", "write 128 B") in got and ("copy", "read 128 B") in got
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".exit.json")] == [], "a temporary file was left"


def test_a_trace_that_cannot_be_written_at_exit_says_so(tmp_path):
    r = run_script(tmp_path, {"CUBEHIP_TRACE": str(tmp_path / "no-such-dir" / "t.json")})
    assert r.returncode == 0, r.stderr
    assert "CUBEHIP_TRACE" in r.stderr and "no-such-dir" in r.stderr
