"""Record ten launches into a graph once, replay it, and time the replays on the device."""

import numpy as np

import cubehip

SOURCE = r"""
extern "C" __global__ void inc(float* v, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] += 1.0f;
}
"""

n = 1 << 16
with cubehip.Device() as dev:
    s = dev.stream(1)
    v = dev.zeros(n, np.float32, stream=s)
    inc = cubehip.Kernel(SOURCE, "inc", block=256)
    with s.capture() as graph:  # recorded, not run
        for _ in range(10):
            inc(n // 256, v, n, stream=s)
    with s.profile() as p:
        for _ in range(100):
            graph.replay()
    print(f"100 replays of 10 launches: {p.elapsed * 1e3:.3f} ms of device time")
    assert (v.get(stream=s) == 1000).all()
    print("memory:", dev.memory_usage())
