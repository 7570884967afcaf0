"""Raw-kernel scripts written the CuPy way run on cubehip by changing their import; and a
kernel made without device= goes to the device of its arrays."""

from __future__ import annotations

import numpy as np
import pytest

import cubehip
from cubehip import RawKernel, RawModule

from conftest import PLATFORM, SAXPY

CUPY_SAXPY = r"""
extern "C" __global__
void saxpy(float a, const float* x, const float* y, float* out, unsigned int n) {
  unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
  if (tid < n) out[tid] = a * x[tid] + y[tid];
}
"""

TWO = r"""
extern "C" __global__ void add(const float* x, const float* y, float* out, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) out[i] = x[i] + y[i];
}
extern "C" __global__ void scale(float* x, double s, long long n) {
  long long i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) x[i] = (float)(x[i] * s);
}
"""

BLOCK_SUM = r"""
extern "C" __global__ void block_sum(const float* in, float* out, unsigned n) {
  extern __shared__ float s[];
  unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
    if (t < w) s[t] += s[t + w];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}
"""


def test_saxpy_raw_kernel_the_cupy_way(dev):
    saxpy = RawKernel(CUPY_SAXPY, "saxpy", options=("-DUNUSED=1",), backend="nvrtc", jitify=False)
    n = 1000
    x = dev.array(np.arange(n, dtype=np.float32))
    y = dev.array(np.ones(n, dtype=np.float32))
    out = dev.zeros(n, np.float32)
    saxpy(((n + 127) // 128,), (128,), (np.float32(2.0), x, y, out, np.uint32(n)))
    np.testing.assert_array_equal(out.get(), 2 * np.arange(n, dtype=np.float32) + 1)
    # Keywords as CuPy names them, Python numbers, a list of args, stream=None.
    k = RawKernel(code=CUPY_SAXPY, name="saxpy")
    k(grid=(8,), block=(128, 1, 1), args=[3.0, x, y, out, n], shared_mem=0, stream=None)
    np.testing.assert_array_equal(out.get(), 3 * np.arange(n, dtype=np.float32) + 1)
    assert k.kernel((128, 1, 1)).device is dev


def test_raw_module_two_kernels_and_get_function(dev):
    mod = RawModule(code=TWO, options=("-O2",), backend="nvcc", jitify=True, name_expressions=["add", "scale"])
    add, scale = mod.get_function("add"), mod.get_function("scale")
    assert mod.get_function("add") is add
    x = dev.array(np.arange(256, dtype=np.float32))
    out = dev.zeros(256, np.float32)
    add((2,), (128,), (x, x, out, np.int32(256)))
    scale((1,), (256,), (out, np.float64(0.5), np.int64(256)), stream=None)
    np.testing.assert_array_equal(out.get(), np.arange(256, dtype=np.float32))
    with pytest.raises(cubehip.CompileError, match='no kernel named "missing"'):
        mod.get_function("missing")  # at get_function, as CuPy raises
    with pytest.raises(cubehip.CompileError):
        RawModule(code=TWO, name_expressions=["add<float>"]).get_function("add")  # add is no template
    with pytest.raises(FileNotFoundError):
        RawModule(path="kernels.cubin")


def test_shared_mem_per_call(dev):
    k = RawKernel(BLOCK_SUM, "block_sum")
    n = 1000
    data = np.arange(n, dtype=np.float32)
    x = dev.array(data)
    for block in (64, 128):
        grid = (n + block - 1) // block
        out = dev.zeros(grid, np.float32)
        k((grid,), (block,), (x, out, np.uint32(n)), shared_mem=block * 4)
        np.testing.assert_allclose(out.get().sum(), data.sum())
    assert len({id(v) for v in k._kernels.values()}) == 2


def test_stream_and_errors(dev):
    k = RawKernel(CUPY_SAXPY, "saxpy")
    x = dev.array(np.ones(64, np.float32))
    out = dev.zeros(64, np.float32)
    s = dev.stream(3)
    k((1,), (64,), (np.float32(1), x, x, out, np.uint32(64)), stream=s)
    s.sync()
    np.testing.assert_array_equal(out.get(), 2)
    with pytest.raises(TypeError, match="args must be a tuple"):
        k((1,), (64,), x)
    with pytest.raises(TypeError, match=r"argument 0 \(a\): str given"):
        k((1,), (64,), ("a", x, x, out, 64))
    with pytest.raises(cubehip.CompileError):  # compiled on the first call, as CuPy does
        RawKernel('extern "C" __global__ void bad(int* o) { o[0] = nope; }', "bad")((1,), (1,), (out,))


def test_cubehip_own_kernel_call_stays():
    assert cubehip.Kernel is not RawKernel and cubehip.Module is not RawModule


def test_a_kernel_made_without_a_device_follows_its_arrays(dev):
    # A device opened outside a with block, as a script does, beside the session's device.
    mine = cubehip.Device(PLATFORM)
    try:
        x = mine.array(np.ones(64, np.float32))
        y = mine.zeros(64, np.float32)
        k = cubehip.Kernel(SAXPY, "saxpy", block=64)
        k(1, x, y, 2.0, 64)
        assert k.device is mine
        np.testing.assert_array_equal(y.get(), 2)
        k(1, x, y, np.float32(1), np.uint32(64))  # the Python call, after the move
        np.testing.assert_array_equal(y.get(), 3)
        with cubehip.Device(PLATFORM) as other:
            a = other.array(np.ones(64, np.float32))
            b = other.zeros(64, np.float32)
            k(1, a, b, 4.0, 64)
            assert k.device is other
            np.testing.assert_array_equal(b.get(), 4)
            raw = RawKernel(SAXPY, "saxpy")
            raw((1,), (64,), (a, b, np.float32(1), np.uint32(64)))
            np.testing.assert_array_equal(b.get(), 5)
        # A kernel given its device keeps it: arrays of another are refused.
        fixed = cubehip.Kernel(SAXPY, "saxpy", block=64, device=dev)
        with pytest.raises(cubehip.InvalidArgument, match="another device"):
            fixed(1, x, y, 1.0, 64)
    finally:
        mine.close()


def test_a_kernel_made_without_a_device_follows_its_stream(dev):
    mine = cubehip.Device(PLATFORM)
    try:
        for _ in range(2):
            k = cubehip.Kernel(SAXPY, "saxpy", block=64)
            target = dev if k.device is not dev else mine  # a device the kernel is not on
            x = target.array(np.ones(64, np.float32))
            y = target.zeros(64, np.float32)
            s = target.stream(3)
            k(1, x, y, np.float32(2), np.uint32(64), stream=s)
            assert k.device is target
            s.sync()
            np.testing.assert_array_equal(y.get(stream=s), 2)
    finally:
        mine.close()
