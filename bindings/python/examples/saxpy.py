"""saxpy: y = a*x + y on the default device (the cpu device when there is no GPU)."""

import numpy as np

import cubehip

SOURCE = r"""
#include <hip/hip_runtime.h>
extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"""

n = 1 << 20
with cubehip.Device() as dev:
    print(f"device: {dev.properties.name} ({dev.platform}, {dev.properties.arch})")
    x = dev.array(np.arange(n, dtype=np.float32))
    y = dev.array(np.ones(n, np.float32))
    saxpy = cubehip.Kernel(SOURCE, "saxpy", block=256)  # float a and unsigned n: read from the source
    saxpy((n + 255) // 256, x, y, 2.0, n)
    out = y.get()
    assert np.allclose(out, 2 * np.arange(n) + 1)
    print("saxpy ok:", out[:4])
