"""cubehip arrays as mpi4py buffers, on the cpu device, under ``mpirun -np 2``.

A cpu-device array's memory is host memory, and mpi4py (3.1 and later) takes an object that
speaks DLPack as a buffer: for kDLCPU it calls ``__dlpack__()`` with no stream, which waits on
the host for the array's queued writes, and hands MPI the address in place. So
``comm.Send(a, dest)`` and ``comm.Recv(a, source)`` take the array itself, with no copy.

The script runs as two MPI processes over loopback only (Open MPI's shared-memory and self
transports, its runtime on lo), each opening its own cpu device: rank 0 sends arrays a kernel
wrote, without a sync of its own; rank 1 receives into arrays that still have a kernel's
write queued on them (which the receive must wait for, or that write would land on the data
received) and checks them with a kernel and a read.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import cubehip

SCRIPT = r'''
import sys
import numpy as np
import cubehip
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
assert comm.Get_size() == 2, comm.Get_size()

KERNELS = r"""
extern "C" __global__ void fill(float* y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 3.0f * i + 1.0f;
}
extern "C" __global__ void fill_int(int* y, int v, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = v + (int)i;
}
extern "C" __global__ void spin_then_set(float* y, float v, unsigned n) {
  // One thread, slow on purpose: a receive that did not wait for this write would finish
  // first and then be overwritten by it.
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  volatile float s = 0;
  for (int k = 0; k < 20000000; k++) s = s + 1.0f;
  for (unsigned i = 0; i < n; i++) y[i] = v;
}
extern "C" __global__ void count_wrong(const float* y, unsigned* bad, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && y[i] != 3.0f * i + 1.0f) atomicAdd(bad, 1u);
}
"""

n = 1000
grid = (n + 63) // 64
want = (3 * np.arange(n) + 1).astype(np.float32)
with cubehip.Device("cpu") as dev:
    fill = cubehip.Kernel(KERNELS, "fill", block=64)
    fill_int = cubehip.Kernel(KERNELS, "fill_int", block=64)
    spin_then_set = cubehip.Kernel(KERNELS, "spin_then_set", block=64)
    count_wrong = cubehip.Kernel(KERNELS, "count_wrong", block=64)

    if rank == 0:
        # Blocking send of a kernel's output: no sync here, the export waits for the kernel.
        a = dev.empty(n, np.float32)
        fill(grid, a, n)
        comm.Send(a, dest=1, tag=7)
        # A non-blocking send of a 2-D int32 array; the array stays alive and unused until Wait.
        m = dev.empty((10, 20), np.int32)
        fill_int(4, m, 100, 200)
        req = comm.Isend(m, dest=1, tag=8)
        req.Wait()
    else:
        # A slow kernel's write is still queued on b when the receive starts: the receive's
        # export waits for it, so the received data is what stays.
        b = dev.empty(n, np.float32)
        spin_then_set(1, b, -1.0, n)
        comm.Recv(b, source=0, tag=7)
        bad = dev.zeros(1, np.uint32)
        count_wrong(grid, b, bad, n)   # a kernel reads what MPI wrote into host memory
        assert int(bad.get()[0]) == 0, f"the kernel saw {int(bad.get()[0])} wrong elements"
        got = b.get()
        assert np.array_equal(got, want), got[:8]
        c = dev.zeros((10, 20), np.int32)
        c.sync()                       # nothing queued on it while MPI may write it
        req = comm.Irecv(c, source=0, tag=8)
        req.Wait()
        assert np.array_equal(c.get(), (100 + np.arange(200, dtype=np.int32)).reshape(10, 20)), c.get()

    # A collective, each array both sent and received into: the sum of the ranks' values.
    x = dev.empty(4, np.float64)
    x.set(np.full(4, rank + 1, np.float64))
    total = dev.zeros(4, np.float64)
    comm.Allreduce(x, total, op=MPI.SUM)
    assert np.array_equal(total.get(), np.full(4, 3.0)), total.get()
    comm.Barrier()
    print(f"rank {rank} ok", flush=True)
'''


def _mpirun() -> list[str]:
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("mpirun is not installed (scripts/deps.sh installs openmpi-bin and python3-mpi4py)")
    version = subprocess.run([mpirun, "--version"], capture_output=True, text=True, timeout=60)
    cmd = [mpirun, "-np", "2"]
    if "Open MPI" in version.stdout + version.stderr:
        cmd += [
            "--oversubscribe",
            # Loopback only: shared memory between the two processes (with no single-copy
            # mechanism, which containers often forbid: it needs ptrace rights), and the
            # launcher's own connections on lo.
            "--mca", "pml", "ob1",
            "--mca", "btl", "self,vader",
            "--mca", "btl_vader_single_copy_mechanism", "none",
            "--mca", "oob_tcp_if_include", "lo",
        ]
    return cmd


@pytest.mark.parametrize("native", ["1", "0"], ids=["extension", "ctypes"])
def test_mpi4py_sends_and_receives_cpu_arrays(tmp_path, native):
    cmd = _mpirun()
    # python3-mpi4py is what deps.sh installs beside mpirun; without it the run below would
    # fail with an ImportError from each rank, so say which package is missing instead.
    probe = subprocess.run([sys.executable, "-c", "import mpi4py"], capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0, f"mpirun is installed but mpi4py is not importable (install python3-mpi4py): {probe.stderr}"
    script = tmp_path / "mpi_cpu.py"
    script.write_text(SCRIPT)
    env = dict(os.environ)
    # The ranks import the package the suite tests, and load the library $CUBEHIP_LIBRARY names.
    env["PYTHONPATH"] = os.pathsep.join([str(Path(cubehip.__file__).parents[1]), env.get("PYTHONPATH", "")])
    env["CUBEHIP_PYTHON_NATIVE"] = native
    # Open MPI refuses to run as root without both of these (CI containers run as root).
    env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    p = subprocess.Popen([*cmd, sys.executable, str(script)], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        # A hang (a receive that never matches, a rank stuck in a wait) fails the test; the
        # whole process group goes, ranks included, not just mpirun.
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        pytest.fail(f"mpirun did not finish in 180 s:\n{out}")
    assert p.returncode == 0, f"mpirun exited {p.returncode}:\n{out}"
    assert "rank 0 ok" in out and "rank 1 ok" in out, out
