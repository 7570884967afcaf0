"""Device arrays handed to other libraries without a copy, and their arrays taken in without
one: DLPack everywhere (numpy takes the cpu device's arrays, whose memory is host memory, and
cubehip.asarray takes numpy's there), CuPy and PyTorch on nvidia (through DLPack and
__cuda_array_interface__). Skips politely where a library or its GPU is absent.

The rule both sides follow: cubehip's queued writes are waited for before the memory is
handed over (the export does it), and the other library's writes are finished (its stream
synchronized) before cubehip uses the array again."""

import numpy as np

import cubehip

INC = r"""
extern "C" __global__ void inc(float* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}"""

with cubehip.Device() as dev:
    inc = cubehip.Kernel(INC, "inc", block=64)
    d = dev.array(np.arange(8, dtype=np.float32))
    print(f"{dev.platform}: device array at {d.data_ptr():#x}, DLPack device {d.__dlpack_device__()}")
    if dev.platform == "cpu":
        view = np.from_dlpack(d)  # numpy reads the device memory in place
        assert view.__array_interface__["data"][0] == d.data_ptr()
        print("numpy:", view)
        del view
        h = np.zeros(8, np.float32)
        a = cubehip.asarray(h)  # the other way: a kernel runs on numpy's memory in place
        inc(1, a, 8)
        a.sync()
        assert (h == 1).all()
        print("cubehip.asarray(numpy) after a launch:", h)
        del a
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
        x = cp.zeros(8, cp.float32)
        a = cubehip.from_dlpack(x)  # CuPy's memory as a cubehip array, kept alive by it
        inc(1, a, 8)
        a.sync()
        assert (x == 1).all()
        print("cubehip.from_dlpack(cupy) after a launch:", x)
        del a
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
        x = torch.zeros(8, device=f"cuda:{dev.index}")
        a = cubehip.asarray(x)
        inc(1, a, 8)
        a.sync()
        assert bool((x == 1).all())
        print("cubehip.asarray(torch) after a launch:", x)
        del a
