"""Data between cubehip and CuPy or PyTorch, through the host (numpy). Skips politely where
they are absent; zero-copy exchange (DLPack, __cuda_array_interface__) is not in this release."""

import numpy as np

import cubehip

with cubehip.Device() as dev:
    d = dev.array(np.arange(8, dtype=np.float32))
    try:
        import cupy as cp
    except ImportError:
        print("cupy not installed: skipped")
    else:
        c = cp.asarray(d.get())  # cubehip -> CuPy
        d.set(cp.asnumpy(c * 2))  # CuPy -> cubehip
        print("cupy:", d.get())
    try:
        import torch
    except ImportError:
        print("torch not installed: skipped")
    else:
        t = torch.from_numpy(d.get())
        d.set((t + 1).numpy())
        print("torch:", d.get())
