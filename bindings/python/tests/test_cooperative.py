"""Cooperative launch: CuPy's enable_cooperative_groups and Kernel(cooperative=True) launch
every block of the grid at once, so that a kernel's blocks wait for each other at
this_grid().sync(); the occupancy query sizes the grid, and one block more is refused."""

from __future__ import annotations

import numpy as np
import pytest

import cubehip
from cubehip import RawKernel, RawModule

GRID_SUM = r"""
#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void grid_sum(const int* in, int* partial, int* out, int n) {
  cg::grid_group grid = cg::this_grid();
  __shared__ int s[128];
  int v = 0;
  for (unsigned i = grid.thread_rank(); i < (unsigned)n; i += grid.size()) v += in[i];
  s[threadIdx.x] = v;
  __syncthreads();
  for (unsigned k = 64; k > 0; k /= 2) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
  grid.sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    int t = 0;
    for (unsigned b = 0; b < gridDim.x; b++) t += partial[b];
    out[0] = t;
  }
}
"""

N = 30011


def _inputs(dev, blocks):
    data = (np.arange(N, dtype=np.int32) % 113) - 50
    return data, dev.array(data), dev.zeros(blocks + 1, np.int32), dev.array(np.array([-1], np.int32))


def _skip_unsupported(e: cubehip.CubehipError) -> None:
    if e.name == "hipErrorNotSupported":
        pytest.skip(f"no cooperative launch here: {e}")


def test_raw_kernel_cooperative_reduction(dev):
    k = RawKernel(GRID_SUM, "grid_sum", enable_cooperative_groups=True, device=dev)
    assert k.enable_cooperative_groups
    per = k.kernel((128,)).max_active_blocks_per_multiprocessor()
    assert per == k.kernel((128,)).max_active_blocks_per_multiprocessor(128, 0) > 0
    blocks = per * dev.properties.multiprocessor_count
    data, x, partial, out = _inputs(dev, blocks)
    try:
        k((blocks,), (128,), (x, partial, out, np.int32(N)))
    except cubehip.CubehipError as e:
        _skip_unsupported(e)
        raise
    assert out.get()[0] == data.sum()

    # One block more than the device holds at once: refused, naming the limit; nothing queued.
    out.set(np.array([-1], np.int32))
    with pytest.raises(cubehip.CubehipError, match=f"over the {blocks} the device holds at once") as e:
        k((blocks + 1,), (128,), (x, partial, out, np.int32(N)))
    assert e.value.status == 720 and e.value.name == "hipErrorCooperativeLaunchTooLarge"
    assert out.get()[0] == -1


def test_kernel_cooperative_on_both_call_paths(dev):
    k = cubehip.Kernel(GRID_SUM, "grid_sum", block=128, device=dev, cooperative=True)
    assert k.cooperative and "cooperative" in repr(k)
    blocks = 3
    data, x, partial, out = _inputs(dev, blocks)
    try:
        k(blocks, x, partial, out, N)  # the extension's built-in call
    except cubehip.CubehipError as e:
        _skip_unsupported(e)
        raise
    assert out.get()[0] == data.sum()
    out.set(np.array([-1], np.int32))
    cubehip.Kernel.__call__(k, blocks, x, partial, out, N)  # the ctypes path
    assert out.get()[0] == data.sum()
    with pytest.raises(ValueError, match="block_size"):
        k.max_active_blocks_per_multiprocessor(0)


def test_raw_module_and_per_call_flag(dev):
    mod = RawModule(code=GRID_SUM, enable_cooperative_groups=True, device=dev)
    f = mod.get_function("grid_sum")
    assert f.enable_cooperative_groups and f.kernel((128,)).cooperative
    plain = RawKernel(GRID_SUM, "grid_sum", device=dev)
    assert not plain.kernel((128,)).cooperative
    data, x, partial, out = _inputs(dev, 2)
    try:
        plain((2,), (128,), (x, partial, out, np.int32(N)), enable_cooperative_groups=True)
    except cubehip.CubehipError as e:
        _skip_unsupported(e)
        raise
    assert out.get()[0] == data.sum()
    assert plain.kernel((128,), cooperative=True).cooperative


def test_grid_sync_without_cooperative_launch_fails_on_cpu(dev):
    if dev.platform != "cpu":
        pytest.skip(f"a grid barrier in a launch that is not cooperative is undefined on {dev.platform}")
    k = RawKernel(GRID_SUM, "grid_sum", device=dev)
    data, x, partial, out = _inputs(dev, 4)
    k((4,), (128,), (x, partial, out, np.int32(N)))
    with pytest.raises(cubehip.CarriedFailure, match=r"this_grid\(\)\.sync\(\)"):
        out.get()
    with pytest.raises(cubehip.CubehipError):
        dev.sync()
