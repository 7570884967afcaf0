"""The wheel, installed into a fresh virtual environment without network, imports and runs
with the library it carries: no $CUBEHIP_LIBRARY, no source tree on the path."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cubehip

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = r"""
import numpy as np, cubehip, sys
from cubehip import _ffi
assert cubehip.library_path.startswith(sys.prefix), cubehip.library_path
assert _ffi.native is not None and _ffi.native.__file__.startswith(sys.prefix), _ffi.native_missing
src = 'extern "C" __global__ void sq(float* v, unsigned n) { unsigned i = threadIdx.x; if (i < n) v[i] *= v[i]; }'
with cubehip.Device() as dev:
    v = dev.array(np.arange(8, dtype=np.float32))
    cubehip.Kernel(src, "sq", block=8)(1, v, 8)
    assert (v.get() == np.arange(8) ** 2).all()
print("wheel ok", cubehip.__version__, cubehip.library_path)
"""


def _wheel(tmp: Path) -> Path:
    given = os.environ.get("CUBEHIP_WHEEL")
    if given:
        return Path(given)
    # Built here from the library this suite runs against, so the test needs no Go.
    out = subprocess.run(
        [str(ROOT / "scripts/build-wheel.sh"), "--lib", cubehip.library_path, "--outdir", str(tmp / "dist")],
        capture_output=True, text=True, env={**os.environ, "PYTHON": sys.executable},
    )
    assert out.returncode == 0, out.stderr
    return next((tmp / "dist").glob("cubehip-*.whl"))


def test_wheel_installs_into_a_fresh_venv(tmp_path):
    wheel = _wheel(tmp_path)
    # The extension is on the stable ABI: one wheel for CPython 3.10 and later.
    assert wheel.name.startswith("cubehip-0.1.0-cp310-abi3-linux_")
    venv = tmp_path / "venv"
    # The system's site packages give numpy, the one dependency, without an index.
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    py = venv / "bin/python"
    # pip too runs without this suite's PYTHONPATH: a cubehip importable from there (an
    # unpacked wheel, the source tree) is taken for installed, and pip installs nothing.
    env = {k: v for k, v in os.environ.items() if k not in ("CUBEHIP_LIBRARY", "PYTHONPATH")}
    pip = subprocess.run([str(py), "-m", "pip", "install", "--no-index", "--quiet", str(wheel)],
                         capture_output=True, text=True, env=env)
    if pip.returncode != 0 and "No matching distribution found for numpy" in pip.stdout + pip.stderr:
        # numpy reaches this interpreter from outside any installed distribution pip can see
        # (a GPU machine's image): install the wheel without resolving it, and give the
        # fresh venv the numpy this suite runs on.
        pip = subprocess.run([str(py), "-m", "pip", "install", "--no-index", "--no-deps", "--quiet", str(wheel)],
                             capture_output=True, text=True, env=env)
        env["PYTHONPATH"] = str(Path(np.__file__).resolve().parent.parent)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    run = subprocess.run([str(py), "-c", SCRIPT], capture_output=True, text=True, cwd=tmp_path, env=env)
    if run.returncode != 0:
        # What the fresh interpreter saw, for a machine whose environment differs from this one.
        seen = subprocess.run([str(py), "-c", "import sys, os; print(sys.prefix, sys.path, {k: v for k, v in os.environ.items() if k.startswith('PYTHON')})"],
                              capture_output=True, text=True, cwd=tmp_path, env=env)
        listed = subprocess.run([str(py), "-m", "pip", "show", "-f", "cubehip"], capture_output=True, text=True, env=env)
        pytest.fail(f"{run.stdout}{run.stderr}\nthe venv's python: {seen.stdout}{seen.stderr}\npip show: {listed.stdout[-1500:]}")
    assert "wheel ok 0.1.0" in run.stdout and str(venv) in run.stdout


def test_library_not_found_says_where_it_looked(tmp_path):
    # A copy of the package without the library a wheel puts inside it.
    shutil.copytree(Path(cubehip.__file__).parent, tmp_path / "pkg/cubehip", ignore=shutil.ignore_patterns("_lib", "__pycache__"))
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env["PYTHONPATH"] = str(tmp_path / "pkg")
    env["CUBEHIP_LIBRARY"] = str(tmp_path / "nowhere/libcubehip.so")
    run = subprocess.run([sys.executable, "-c", "import cubehip"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode != 0
    assert "cannot load libcubehip.so" in run.stderr
    assert "inside the package" in run.stderr and "nowhere/libcubehip.so ($CUBEHIP_LIBRARY)" in run.stderr
