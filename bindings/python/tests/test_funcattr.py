"""Function attributes, as CuPy's RawKernel has them (attributes, max_threads_per_block, ...,
max_dynamic_shared_size_bytes and preferred_shared_memory_carveout with their setters), on
Kernel and RawKernel; and the dynamic shared-memory limit a launch is held to once set."""

from __future__ import annotations

import numpy as np
import pytest

import cubehip
from cubehip import RawKernel

WINDOW = r"""
extern "C" __global__ void window(const float* in, float* out, unsigned words) {
  extern __shared__ float w[];
  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) w[i] = in[i];
  __syncthreads();
  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) out[i] = w[words - 1 - i];
}
"""

KEYS = {
    "max_threads_per_block", "shared_size_bytes", "const_size_bytes", "local_size_bytes", "num_regs",
    "ptx_version", "binary_version", "cache_mode_ca", "max_dynamic_shared_size_bytes",
    "preferred_shared_memory_carveout",
}  # fmt: skip

# More than the 48 KiB a CUDA kernel has before it raises its limit.
SHARED = 64 << 10


def _limit(dev) -> int:
    p = dev.properties
    return max(getattr(p, "shared_mem_per_block_optin", 0), p.shared_mem_per_block)


def test_attributes_dict_and_properties(dev):
    k = RawKernel(WINDOW, "window", device=dev)
    a = k.attributes
    assert set(a) == KEYS
    assert all(isinstance(v, int) for v in a.values())
    assert a["max_threads_per_block"] > 0
    assert k.max_threads_per_block == a["max_threads_per_block"]
    for name in KEYS - {"cache_mode_ca"}:
        assert getattr(k, name) == a[name], name
    assert k.kernel.attributes == a
    if dev.properties.platform == "cpu":
        assert a["max_dynamic_shared_size_bytes"] == _limit(dev)
        assert a["preferred_shared_memory_carveout"] == -1
        assert a["num_regs"] == a["shared_size_bytes"] == a["ptx_version"] == a["binary_version"] == 0


def test_raise_dynamic_shared_limit_and_launch(dev):
    if _limit(dev) < SHARED:
        pytest.skip(f"{dev.properties.name} gives a block at most {_limit(dev)} bytes of shared memory")
    words = SHARED // 4
    data = np.arange(words, dtype=np.float32)
    x, out = dev.array(data), dev.zeros(words, np.float32)
    k = RawKernel(WINDOW, "window", device=dev)

    # Lowered below the launch's need: the call is refused, naming both limits.
    k.max_dynamic_shared_size_bytes = 1024
    assert k.max_dynamic_shared_size_bytes == 1024
    with pytest.raises(cubehip.InvalidArgument, match="over the kernel's limit of 1024") as e:
        k((1,), (64,), (x, out, np.uint32(words)), shared_mem=SHARED)
    assert "SharedMemPerBlockOptin" in str(e.value)

    # Raised: the call gets all of it.
    k.max_dynamic_shared_size_bytes = SHARED
    assert k.max_dynamic_shared_size_bytes == SHARED
    assert k.attributes["max_dynamic_shared_size_bytes"] == SHARED
    k((1,), (64,), (x, out, np.uint32(words)), shared_mem=SHARED)
    np.testing.assert_array_equal(out.get(), data[::-1])

    # Over what the device can give: refused by the setter.
    with pytest.raises(cubehip.CubehipError, match="MAX_DYNAMIC_SHARED_SIZE_BYTES"):
        k.max_dynamic_shared_size_bytes = _limit(dev) + 1
    with pytest.raises(ValueError):
        k.max_dynamic_shared_size_bytes = 1.5


def test_kernel_attributes_and_carveout(dev):
    k = cubehip.Kernel(WINDOW, "window", block=64, shared_mem=SHARED if _limit(dev) >= SHARED else 0, device=dev)
    assert set(k.attributes) == KEYS
    k.preferred_shared_memory_carveout = 50
    assert k.preferred_shared_memory_carveout == 50
    assert k.get_attribute(9) == 50
    with pytest.raises(cubehip.CubehipError):
        k.preferred_shared_memory_carveout = 101
    with pytest.raises(cubehip.CubehipError):
        k.set_attribute("num_regs", 1)
    with pytest.raises(ValueError, match="unknown function attribute"):
        k.get_attribute("registers")
