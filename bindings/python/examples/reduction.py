"""A sum with dynamic shared memory: each block reduces its slice, the host adds the blocks."""

import numpy as np

import cubehip

SOURCE = r"""
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

block, n = 256, 1_000_000
blocks = (n + block - 1) // block
host = np.random.default_rng(0).random(n, dtype=np.float32)
with cubehip.Device() as dev:
    k = cubehip.Kernel(SOURCE, "block_sum", block=block, shared_mem=block * 4)
    partial = dev.empty(blocks, np.float32)
    k(blocks, dev.array(host), partial, n)
    total = partial.get().sum(dtype=np.float64)
    print(f"sum {total:.3f} (numpy {host.sum(dtype=np.float64):.3f})")
    assert abs(total - host.sum(dtype=np.float64)) < 1e-3 * n
