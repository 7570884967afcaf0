"""A variable a script sets in os.environ before using cubehip is the one cubehip reads.

The Go runtime inside libcubehip keeps its own copy of the environment, taken from what the
process started with; the library re-reads the process's environment when it loads and at
every device open, so that ``os.environ["CUBEHIP_..."] = ...`` in a script's first lines
(or before it opens a device) takes effect as it does for every other library."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from conftest import PLATFORM

SCRIPT = textwrap.dedent(
    """
    import os, sys
    os.environ["CUBEHIP_CACHE_DIR"] = sys.argv[1]   # before the import
    import numpy as np
    import cubehip
    os.environ["CUBEHIP_TRACE"] = sys.argv[2]       # after it, before the device opens
    dev = cubehip.Device(os.environ.get("CUBEHIP_PLATFORM", "cpu"))
    k = cubehip.RawKernel('extern "C" __global__ void probe(float* x) { x[threadIdx.x] = 2.0f; }', "probe", device=dev)
    x = dev.zeros(4, np.float32)
    k((1,), (4,), (x,))
    assert list(x.get()) == [2.0] * 4
    dev.close()
    print("done")
    """
)


def test_os_environ_set_by_the_script_is_read(tmp_path):
    cache, trace = tmp_path / "cache", tmp_path / "trace.json"
    cache.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items() if k not in ("CUBEHIP_CACHE_DIR", "CUBEHIP_TRACE")}
    env.setdefault("CUBEHIP_PLATFORM", "cpu" if PLATFORM == "auto" else PLATFORM)
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    r = subprocess.run([sys.executable, str(script), str(cache), str(trace)], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "done" in r.stdout, r.stderr
    assert any(files for _, _, files in os.walk(cache)), "CUBEHIP_CACHE_DIR set in os.environ was ignored: nothing cached there"
    assert trace.exists(), "CUBEHIP_TRACE set in os.environ before the device opened was ignored"
