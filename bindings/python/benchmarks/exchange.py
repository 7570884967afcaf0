"""exchange.py: where a DLPack exchange's time goes, cubehip beside CuPy, with PyTorch as the
other library, in one process on the nvidia platform.

Each line is a median over --rounds rounds of --n exchanges of a 1 KiB array, the steps of
one exchange timed apart: the other library's `__dlpack__` alone, the import alone (the
capsule already made), the release alone, and the whole, for cubehip's and CuPy's side."""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

import cubehip


def per_call(fn, n: int) -> float:
    t0 = time.perf_counter()
    fn(n)
    return (time.perf_counter() - t0) / n * 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--n", type=int, default=5000)
    opt = ap.parse_args()
    import cupy as cp
    import torch

    dev = cubehip.Device()
    if dev.platform != "nvidia":
        print("exchange.py: the nvidia platform only")
        return 0
    t = torch.zeros(256, dtype=torch.float32, device="cuda")
    mine = dev.zeros(256, np.float32)
    theirs_cp = cp.zeros(256, dtype=cp.float32)
    torch.cuda.synchronize()
    dev.sync()
    native = cubehip._ffi.native
    h = dev._live()

    def torch_capsule(n):
        for _ in range(n):
            t.__dlpack__(stream=1)

    def ch_import_whole(n):
        for _ in range(n):
            a = cubehip.from_dlpack(t, device=dev)
            del a

    def ch_import_native(n):
        # The extension's one call and the release, no Python around them.
        for _ in range(n):
            cap = t.__dlpack__(stream=1)
            r = native.dlpack_import(cap, 2, dev.index, h, 0, 1)
            native.buffer_release(r[0])

    def cp_import_whole(n):
        for _ in range(n):
            a = cp.from_dlpack(t)
            del a

    def ch_export_whole(n):
        for _ in range(n):
            x = torch.from_dlpack(mine)
            del x

    def ch_export_capsule(n):
        for _ in range(n):
            mine.__dlpack__(stream=1)

    def ch_dlpack_device(n):
        for _ in range(n):
            mine.__dlpack_device__()

    def cp_export_whole(n):
        for _ in range(n):
            x = torch.from_dlpack(theirs_cp)
            del x

    def cp_export_capsule(n):
        for _ in range(n):
            theirs_cp.__dlpack__(stream=1)

    cases = {
        "torch __dlpack__(stream=1)": torch_capsule,
        "import, whole: cubehip.from_dlpack(t)": ch_import_whole,
        "import, the extension's call + release": ch_import_native,
        "import, whole: cupy.from_dlpack(t)": cp_import_whole,
        "export, whole: torch.from_dlpack(cubehip array)": ch_export_whole,
        "export, cubehip __dlpack__(stream=1)": ch_export_capsule,
        "export, cubehip __dlpack_device__()": ch_dlpack_device,
        "export, whole: torch.from_dlpack(cupy array)": cp_export_whole,
        "export, cupy __dlpack__(stream=1)": cp_export_capsule,
    }
    times: dict[str, list[float]] = {k: [] for k in cases}
    for fn in cases.values():
        fn(200)  # warm
    for _ in range(opt.rounds):
        for k, fn in cases.items():
            times[k].append(per_call(fn, opt.n))
    torch.cuda.synchronize()
    dev.sync()
    print(f"exchange.py, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; cubehip {cubehip.__version__}, "
          f"cupy {cp.__version__}, torch {torch.__version__}; {opt.rounds} rounds of {opt.n}, medians (µs)")
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in med.items():
        print(f"  {k:<50}{v:8.3f}  (range {min(times[k]):.3f}-{max(times[k]):.3f})")
    print(f"  import cubehip ÷ cupy {med['import, whole: cubehip.from_dlpack(t)'] / med['import, whole: cupy.from_dlpack(t)']:.3f}; "
          f"export cubehip ÷ cupy {med['export, whole: torch.from_dlpack(cubehip array)'] / med['export, whole: torch.from_dlpack(cupy array)']:.3f}")
    dev.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
