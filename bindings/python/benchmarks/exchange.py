"""exchange.py: where a DLPack exchange's time goes, cubehip beside CuPy, with PyTorch as the
other library, in one process on the nvidia platform; on the cpu platform
(CUBEHIP_PLATFORM=cpu) numpy is the other library and its own exchange the reference.

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
    dev = cubehip.Device()
    if dev.platform == "cpu":
        return cpu(dev, opt)
    if dev.platform != "nvidia":
        print("exchange.py: the nvidia and cpu platforms only")
        return 0
    import cupy as cp
    import torch

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

    def ch_export_torch_call(n):
        # What torch.from_dlpack asks: the stream and DLPack 1.0.
        for _ in range(n):
            mine.__dlpack__(stream=1, max_version=(1, 0))

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
        "export, cubehip __dlpack__(stream=1, max_version)": ch_export_torch_call,
        "export, cubehip __dlpack_device__()": ch_dlpack_device,
        "export, whole: torch.from_dlpack(cupy array)": cp_export_whole,
        "export, cupy __dlpack__(stream=1)": cp_export_capsule,
    }
    med = measure(cases, opt, f"cupy {cp.__version__}, torch {torch.__version__}", sync=torch.cuda.synchronize)
    dev.sync()
    print(f"  import cubehip ÷ cupy {med['import, whole: cubehip.from_dlpack(t)'] / med['import, whole: cupy.from_dlpack(t)']:.3f}; "
          f"export cubehip ÷ cupy {med['export, whole: torch.from_dlpack(cubehip array)'] / med['export, whole: torch.from_dlpack(cupy array)']:.3f}")
    for what, mine_fn, theirs_fn in (("import", ch_import_whole, cp_import_whole), ("export", ch_export_whole, cp_export_whole)):
        r = paired(mine_fn, theirs_fn, opt)
        q = statistics.quantiles(r, n=4)
        print(f"  {what} cubehip ÷ cupy, paired blocks: median {statistics.median(r):.3f} (quartiles {q[0]:.3f}-{q[2]:.3f}, {len(r)} blocks)")
    dev.close()
    return 0


def paired(mine, theirs, opt, blocks: int = 40) -> list[float]:
    """Ratios of mine's time to theirs over blocks of --n/10 calls each, in the order mine,
    theirs, theirs, mine, so that each ratio compares the two within a fraction of a second
    (the machine's own speed drifts more than that between rounds)."""
    k = max(opt.n // 10, 50)
    out = []
    for _ in range(blocks):
        a1 = per_call(mine, k)
        b1 = per_call(theirs, k)
        b2 = per_call(theirs, k)
        a2 = per_call(mine, k)
        out.append((a1 + a2) / (b1 + b2))
    return out


def measure(cases, opt, versions: str, sync=None) -> dict[str, float]:
    """Times every case, round after round, and prints each one's median."""
    times: dict[str, list[float]] = {k: [] for k in cases}
    for fn in cases.values():
        fn(200)  # warm
    for _ in range(opt.rounds):
        for k, fn in cases.items():
            times[k].append(per_call(fn, opt.n))
    if sync is not None:
        sync()
    print(f"exchange.py, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; cubehip {cubehip.__version__}, "
          f"{versions}; {opt.rounds} rounds of {opt.n}, medians (µs)")
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in med.items():
        print(f"  {k:<50}{v:8.3f}  (range {min(times[k]):.3f}-{max(times[k]):.3f})")
    return med


def cpu(dev: "cubehip.Device", opt) -> int:
    """The cpu device's exchange, numpy the other library: kDLCPU has no streams, so every
    __dlpack__ is asked with stream=None (the export waits for the array's writes)."""
    n = np.zeros(256, dtype=np.float32)
    mine = dev.zeros(256, np.float32)
    other = np.zeros(256, dtype=np.float32)
    dev.sync()
    native = cubehip._ffi.native
    h = dev._live()

    def np_capsule(k):
        for _ in range(k):
            n.__dlpack__(stream=None)

    def ch_import_whole(k):
        for _ in range(k):
            a = cubehip.from_dlpack(n, device=dev)
            del a

    def ch_import_native(k):
        for _ in range(k):
            cap = n.__dlpack__(stream=None)
            r = native.dlpack_import(cap, 1, -1, h, 0, -1)
            native.buffer_release(r[0])

    def np_import_whole(k):
        for _ in range(k):
            a = np.from_dlpack(other)
            del a

    def ch_export_whole(k):
        for _ in range(k):
            x = np.from_dlpack(mine)
            del x

    def ch_export_capsule(k):
        for _ in range(k):
            mine.__dlpack__(stream=None)

    def ch_export_bare(k):
        for _ in range(k):
            mine.__dlpack__()

    def ch_export_full(k):
        # Every keyword of the array API's call, as numpy 2 and torch may ask it.
        for _ in range(k):
            mine.__dlpack__(stream=None, max_version=(1, 0), dl_device=(1, 0), copy=None)

    def ch_dlpack_device(k):
        for _ in range(k):
            mine.__dlpack_device__()

    cases = {
        "numpy __dlpack__(stream=None)": np_capsule,
        "import, whole: cubehip.from_dlpack(n)": ch_import_whole,
        "import, the extension's call + release": ch_import_native,
        "numpy alone, whole: numpy.from_dlpack(n)": np_import_whole,
        "export, whole: numpy.from_dlpack(cubehip array)": ch_export_whole,
        "export, cubehip __dlpack__(stream=None)": ch_export_capsule,
        "export, cubehip __dlpack__()": ch_export_bare,
        "export, cubehip __dlpack__(all four keywords)": ch_export_full,
        "export, cubehip __dlpack_device__()": ch_dlpack_device,
    }
    med = measure(cases, opt, f"numpy {np.__version__}")
    dev.sync()
    alone = med["numpy alone, whole: numpy.from_dlpack(n)"]
    print(f"  import cubehip ÷ numpy alone {med['import, whole: cubehip.from_dlpack(n)'] / alone:.3f}; "
          f"export cubehip ÷ numpy alone {med['export, whole: numpy.from_dlpack(cubehip array)'] / alone:.3f}")
    dev.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
