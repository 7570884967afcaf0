"""Device arrays handed to other libraries without a copy: DLPack everywhere (numpy takes the
cpu device's arrays, whose memory is host memory), CuPy and PyTorch on nvidia (through DLPack
and __cuda_array_interface__). Skips politely where a library or its GPU is absent.

The rule both sides follow: cubehip's queued writes are waited for before the memory is
handed over (the export does it), and the other library's writes are finished (its stream
synchronized) before cubehip uses the array again."""

import numpy as np

import cubehip

with cubehip.Device() as dev:
    d = dev.array(np.arange(8, dtype=np.float32))
    print(f"{dev.platform}: device array at {d.data_ptr():#x}, DLPack device {d.__dlpack_device__()}")
    if dev.platform == "cpu":
        view = np.from_dlpack(d)  # numpy reads the device memory in place
        assert view.__array_interface__["data"][0] == d.data_ptr()
        print("numpy:", view)
        del view
    try:
        import cupy as cp
    except ImportError:
        cp = None
        print("cupy not installed: skipped")
    if cp is not None and dev.platform == "nvidia":
        c = cp.from_dlpack(d)  # the same memory, no copy
        c *= 2
        cp.cuda.get_current_stream().synchronize()
        assert (d.get() == np.arange(8) * 2).all()
        print("cupy:", d.get())
        del c
    try:
        import torch
    except ImportError:
        torch = None
        print("torch not installed: skipped")
    if torch is not None and dev.platform == "nvidia" and torch.cuda.is_available():
        t = torch.from_dlpack(d)
        t += 1
        torch.cuda.synchronize()
        assert t.data_ptr() == d.data_ptr()
        print("torch:", d.get())
        del t
