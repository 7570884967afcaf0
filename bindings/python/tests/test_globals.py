"""A kernel's module variables from Python: a __constant__ mask written from the host
steers the next launch, a __device__ counter the kernel kept reads back."""

import numpy as np
import pytest

import cubehip

MASKED = r"""
#include <hip/hip_runtime.h>
__constant__ unsigned keep_mask[2];
__device__ unsigned kept;
extern "C" __global__ void masked(const float* in, float* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned bit = i % 64u;
  bool keep = (keep_mask[bit / 32u] >> (bit % 32u)) & 1u;
  out[i] = keep ? in[i] : 0.0f;
  if (keep) atomicAdd(&kept, 1u);
}
"""


@pytest.fixture(scope="module")
def masked(dev):
    return cubehip.Kernel(MASKED, "masked", block=64, device=dev)


@pytest.mark.parametrize("mask", [(0xFFFFFFFF, 0), (0x0F0F0F0F, 0x80000001)])
def test_mask_written_from_the_host(dev, masked, mask):
    n = 1000
    x = np.arange(n, dtype=np.float32) + 0.5
    src, out = dev.array(x), dev.array(np.zeros(n, np.float32))
    masked.write_global("keep_mask", np.array(mask, dtype=np.uint32))
    masked.write_global("kept", np.uint32(0).tobytes())
    masked((n + 63) // 64, src, out, n)
    bits = np.array([(mask[(i % 64) // 32] >> (i % 32)) & 1 for i in range(n)], dtype=bool)
    np.testing.assert_array_equal(out.get(), np.where(bits, x, 0))
    assert masked.read_global("kept", np.uint32).tolist() == [int(bits.sum())]
    assert masked.read_global("keep_mask", np.uint32).tolist() == list(mask)
    assert masked.global_size("keep_mask") == 8


def test_errors_name_the_variable(masked):
    with pytest.raises(cubehip.CubehipError, match="keep_masks"):
        masked.write_global("keep_masks", np.zeros(2, np.uint32))
    with pytest.raises(cubehip.CubehipError, match="keep_mask"):
        masked.write_global("keep_mask", np.zeros(3, np.uint32))
    with pytest.raises(ValueError):
        masked.read_global("kept", np.float64)
    with pytest.raises(ValueError):
        masked.global_size("")
