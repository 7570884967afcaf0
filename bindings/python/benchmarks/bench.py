#!/usr/bin/env python3
"""bench.py: what a Python caller pays through the cubehip package, against the raw C loop
through the same library in the same process (cloop.c), and against CuPy where it is
installed, and PyTorch where it is installed (the nvidia platform).

    CUBEHIP_PLATFORM=nvidia python3 bench.py [--rounds 7] [--n 20000] [--json out.json]

Every figure is the median over rounds that interleave the contenders, so a slow moment of
the machine hits each of them alike. Per-operation times are in microseconds; "py/C" is the
Python loop's time over the C loop's, "py/cupy" over CuPy's, "py/torch" over PyTorch's.
PyTorch has no raw kernels: its launch is the smallest op there is (an in-place add on one
element, a multiply-add for "launch 4 args"), what a PyTorch user pays per kernel.

  launch        a loop of launches of an empty kernel, then one sync
  launch 4 args the same, of a kernel taking two arrays, a float and an unsigned
  launch+sync   a launch and a sync of its stream, in a loop
  read 4 B      a 4-byte read of a device array into numpy
  alloc+free    allocating and releasing 1 MiB
  replay 10     replaying a graph of 10 empty-kernel launches
  dlpack export handing a 1 KiB device array to another library without a copy and letting
                it go: cubehip's array to PyTorch (else CuPy, else numpy on the cpu device) by
                its from_dlpack, ordered on its current stream; beside CuPy's array and
                PyTorch's tensor handed to that same library
  dlpack import the other way: that library's 1 KiB array taken by cubehip.from_dlpack and
                let go; beside cupy.from_dlpack of the same array, and PyTorch taking a tensor
  up/down 256M  a 256 MiB numpy array to the device and back (GB/s, pageable host memory),
                into a reused array and into a new one (d.get()), beside the host's memcpy
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))  # the in-tree package, when not installed

import cubehip  # noqa: E402
from cubehip import _ffi  # noqa: E402

SRC = r"""
extern "C" __global__ void empty() {}
extern "C" __global__ void args4(const float* x, float* y, float a, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"""


def load_cloop() -> ctypes.CDLL:
    """The C loops: $CUBEHIP_CLOOP, libcloop.so beside this script, or compiled now with cc."""
    path = os.environ.get("CUBEHIP_CLOOP") or str(HERE / "libcloop.so")
    if not Path(path).exists():
        include = next(p for p in (HERE.parents[2] / "include", HERE / "include") if (p / "cubehip.h").exists())
        path = str(Path(tempfile.mkdtemp()) / "libcloop.so")
        subprocess.run([os.environ.get("CC", "cc"), "-O2", "-shared", "-fPIC", "-pthread", f"-I{include}",
                        str(HERE / "cloop.c"), "-o", path], check=True)
    c = ctypes.CDLL(path)
    i64, u64, vp = ctypes.c_int64, ctypes.c_uint64, ctypes.c_void_p
    c.cloop_launch.argtypes = [u64, u64, u64, vp, vp, ctypes.c_size_t, i64, ctypes.c_int]
    c.cloop_replay.argtypes = [u64, u64, u64, i64]
    c.cloop_read.argtypes = [u64, vp, u64, i64]
    c.cloop_alloc.argtypes = [u64, u64, i64]
    c.cloop_driver_launch.argtypes = [ctypes.c_int, i64]
    c.cloop_memcpy.argtypes = [vp, vp, u64, ctypes.c_int]
    for f in (c.cloop_launch, c.cloop_replay, c.cloop_read, c.cloop_alloc, c.cloop_driver_launch, c.cloop_memcpy):
        f.restype = i64
    return c


def driver_launch(cloop: ctypes.CDLL, index: int):
    """The launch loop on the raw CUDA driver (cloop_driver_launch), or None without one."""
    if cloop.cloop_driver_launch(index, 1) < 0:
        return None

    def run(m: int) -> float:
        ns = cloop.cloop_driver_launch(index, m)
        if ns < 0:
            raise RuntimeError(f"cloop_driver_launch: {ns}")
        return ns / 1e9 / m
    return run


def c_time(ns: int, n: int) -> float:
    if ns < 0:
        raise cubehip.CubehipError(-ns, cubehip.last_error(), "cloop")
    return ns / 1e9 / n


def timed(fn, n: int) -> float:
    t0 = time.perf_counter()
    fn(n)
    return (time.perf_counter() - t0) / n


def c_args(k: cubehip.Kernel, *values: object) -> ctypes.Array:
    """values as the C loop's cubehip_arg array (three words each: kind, value, offset),
    packed here from the kernel's parameter kinds, as a C host would."""
    from cubehip._kernel import _KIND_CODE

    words = (ctypes.c_uint64 * max(3 * len(values), 3))()
    for i, (p, v) in enumerate(zip(k.params or (), values)):
        if p.kind == "buffer":
            words[3 * i], words[3 * i + 1] = _ffi.ARG_BUFFER, v.handle
            continue
        words[3 * i] = _KIND_CODE[p.kind]
        if p.kind == "f32":
            words[3 * i + 1] = struct.unpack("<I", struct.pack("<f", v))[0]
        elif p.kind == "f64":
            words[3 * i + 1] = struct.unpack("<Q", struct.pack("<d", v))[0]
        else:
            words[3 * i + 1] = int(v) & (2**64 - 1)
    return words


def cubehip_cases(dev: cubehip.Device, n: int, cloop: ctypes.CDLL) -> dict[str, dict[str, object]]:
    empty = cubehip.Kernel(SRC, "empty", block=1, device=dev)
    args4 = cubehip.Kernel(SRC, "args4", block=32, device=dev)
    x = dev.zeros(32, np.float32)
    y = dev.zeros(32, np.float32)
    small = dev.zeros(1, np.float32)
    out = np.empty(1, np.float32)
    s = dev.stream(0)
    with s.capture() as g:
        for _ in range(10):
            empty(1)
    # Plans made, caches warm: the first calls compile and build the argument arrays.
    empty(1)
    args4(1, x, y, 2.0, 32)
    dev.sync()

    def py_launch(k):
        def run(m):
            for _ in range(m):
                k(1)
            dev.sync()
        return run

    def py_args4(m):
        for _ in range(m):
            args4(1, x, y, 2.0, 32)
        dev.sync()

    def py_launch_sync(m):
        for _ in range(m):
            empty(1)
            dev.sync()

    def py_read(m):
        for _ in range(m):
            small.get()

    def py_alloc(m):
        for _ in range(m):
            dev.alloc(1 << 20).release()

    def py_replay(m):
        for _ in range(m):
            g.replay()
        dev.sync()

    shared = dev.zeros(256, np.float32)
    other, other_name = dlpack_other(dev)

    def py_export(m):
        for _ in range(m):
            t = other.from_dlpack(shared)
            del t

    if other is not None:
        theirs = other_array(other_name, other)
        # A device of its own, so the other cases keep dev's streams and pools as a program
        # that imports nothing has them.
        importer = cubehip.Device(dev.platform, dev.index)

    def py_import(m):
        for _ in range(m):
            a = cubehip.from_dlpack(theirs, device=importer)
            del a

    d, k0, k4 = dev.handle, empty._h, args4._h
    grid = (ctypes.c_uint32 * 3)(1, 1, 1)
    no_args, four = c_args(empty), c_args(args4, x, y, 2.0, 32)
    cases = {
        "launch": (py_launch(empty), lambda m: c_time(cloop.cloop_launch(d, k0, 0, ctypes.addressof(grid), ctypes.addressof(no_args), 0, m, 0), m), n),
        "launch 4 args": (py_args4, lambda m: c_time(cloop.cloop_launch(d, k4, 0, ctypes.addressof(grid), ctypes.addressof(four), 4, m, 0), m), n),
        "launch+sync": (py_launch_sync, lambda m: c_time(cloop.cloop_launch(d, k0, 0, ctypes.addressof(grid), ctypes.addressof(no_args), 0, m, 1), m), n // 4),
        "read 4 B": (py_read, lambda m: c_time(cloop.cloop_read(small.handle, out.ctypes.data, 4, m), m), n // 4),
        "alloc+free 1 MiB": (py_alloc, lambda m: c_time(cloop.cloop_alloc(d, 1 << 20, m), m), n // 4),
        "replay 10": (py_replay, lambda m: c_time(cloop.cloop_replay(d, g._h, 0, m), m), n // 10),
    }
    if other is not None:
        cases[f"dlpack export ({other_name})"] = (py_export, None, n // 4)
        cases[f"dlpack import ({other_name})"] = (py_import, None, n // 4)
    return cases


def dlpack_other(dev: cubehip.Device):
    """The library cubehip exchanges arrays with over DLPack: PyTorch, else CuPy on nvidia;
    numpy on the cpu device (whose memory is host memory)."""
    if dev.platform == "cpu":
        return np, "numpy"
    if dev.platform != "nvidia":
        return None, None
    for name in ("torch", "cupy"):
        try:
            mod = __import__(name)
            if name == "torch" and not mod.cuda.is_available():
                continue
            return mod, name
        except Exception:
            continue
    return None, None


def other_array(name: str, mod) -> object:
    """A 1 KiB array of the other library, on the GPU (host memory for numpy)."""
    if name == "torch":
        return mod.zeros(256, device="cuda")
    if name == "cupy":
        return mod.zeros(256, mod.float32)
    return np.zeros(256, np.float32)


def cupy_cases(n: int):
    try:
        import cupy as cp
    except Exception:
        return None, "cupy not installed"
    try:
        mod = cp.RawModule(code=SRC)
        empty, args4 = mod.get_function("empty"), mod.get_function("args4")
        x = cp.zeros(32, cp.float32)
        y = cp.zeros(32, cp.float32)
        small = cp.zeros(1, cp.float32)
        stream = cp.cuda.Stream(non_blocking=True)
        with stream:
            empty((1,), (1,), ())
            stream.synchronize()
            stream.begin_capture()
            for _ in range(10):
                empty((1,), (1,), ())
            graph = stream.end_capture()
        a = np.float32(2.0)
        nn = np.uint32(32)
    except Exception as e:  # a CuPy without a working GPU
        return None, f"cupy unusable: {e}"

    def launch(m):
        with stream:
            for _ in range(m):
                empty((1,), (1,), ())
            stream.synchronize()

    def launch4(m):
        with stream:
            for _ in range(m):
                args4((1,), (32,), (x, y, a, nn))
            stream.synchronize()

    def launch_sync(m):
        with stream:
            for _ in range(m):
                empty((1,), (1,), ())
                stream.synchronize()

    def read(m):
        for _ in range(m):
            small.get()

    def alloc(m):
        for _ in range(m):
            b = cp.empty(1 << 20, cp.uint8)
            del b

    def replay(m):
        for _ in range(m):
            graph.launch(stream)
        stream.synchronize()

    own = cp.zeros(256, cp.float32)
    other, other_name = dlpack_other_gpu()
    theirs = other_array(other_name, other) if other is not None else None

    def export(m):
        # CuPy's own export, to the library cubehip's export goes to.
        for _ in range(m):
            t = other.from_dlpack(own)
            del t

    def import_(m):
        # CuPy's own import, of the array cubehip's import takes.
        for _ in range(m):
            t = cp.from_dlpack(theirs)
            del t

    cases = {"launch": (launch, n), "launch 4 args": (launch4, n), "launch+sync": (launch_sync, n // 4),
             "read 4 B": (read, n // 4), "alloc+free 1 MiB": (alloc, n // 4), "replay 10": (replay, n // 10)}
    if other is not None:
        cases["dlpack export"] = (export, n // 4)
        cases["dlpack import"] = (import_, n // 4)
    return cases, cp


def dlpack_other_gpu():
    """dlpack_other's choice on nvidia, for CuPy's and PyTorch's own exchanges."""
    for name in ("torch", "cupy"):
        try:
            mod = __import__(name)
            if name == "torch" and not mod.cuda.is_available():
                continue
            return mod, name
        except Exception:
            continue
    return None, None


def torch_cases(n: int):
    try:
        import torch
    except Exception:
        return None, "torch not installed"
    if not torch.cuda.is_available():
        return None, "torch has no CUDA device"
    try:
        one = torch.zeros(1, device="cuda")
        x = torch.zeros(32, device="cuda")
        y = torch.zeros(32, device="cuda")
        small = torch.zeros(1, device="cuda")
        own = torch.zeros(256, device="cuda")
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            one.add_(1)
            stream.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, stream=stream):
                for _ in range(10):
                    one.add_(1)
        stream.synchronize()
    except Exception as e:
        return None, f"torch unusable: {e}"

    def launch(m):
        with torch.cuda.stream(stream):
            for _ in range(m):
                one.add_(1)
            stream.synchronize()

    def launch4(m):
        with torch.cuda.stream(stream):
            for _ in range(m):
                y.add_(x, alpha=2.0)
            stream.synchronize()

    def launch_sync(m):
        with torch.cuda.stream(stream):
            for _ in range(m):
                one.add_(1)
                stream.synchronize()

    def read(m):
        for _ in range(m):
            small.cpu().numpy()

    def alloc(m):
        for _ in range(m):
            b = torch.empty(1 << 20, dtype=torch.uint8, device="cuda")
            del b

    def replay(m):
        for _ in range(m):
            graph.replay()
        torch.cuda.synchronize()

    other, other_name = dlpack_other_gpu()

    def export(m):
        # PyTorch's own export, to the library cubehip's export goes to.
        for _ in range(m):
            t = other.from_dlpack(own)
            del t

    def import_(m):
        # PyTorch's own import of a tensor (from PyTorch, the array cubehip's import takes).
        for _ in range(m):
            t = torch.from_dlpack(own)
            del t

    return {"launch": (launch, n), "launch 4 args": (launch4, n), "launch+sync": (launch_sync, n // 4),
            "read 4 B": (read, n // 4), "alloc+free 1 MiB": (alloc, n // 4), "replay 10": (replay, n // 10),
            "dlpack export": (export, n // 4), "dlpack import": (import_, n // 4)}, torch


def transfer(dev: cubehip.Device, cp, rounds: int, cloop: ctypes.CDLL) -> dict[str, dict[str, float]]:
    """GB/s of 256 MiB copies between pageable host memory and the device, medians of rounds,
    beside the host's own memcpy over all its CPUs in the same rounds (the anchor): "down,
    new array" is d.get() as users write it, a new numpy array each time."""
    host = np.ones(256 << 20, np.uint8)
    rows = ("memcpy, all CPUs", "up 256 MiB", "down 256 MiB", "down, new array")
    res: dict[str, dict[str, list[float]]] = {r: {"py": [], "cupy": []} for r in rows}
    d = dev.array(host)
    back = np.empty_like(host)
    back[:] = 0  # reused memory: its pages in place, as the anchor's
    c = cp.asarray(host) if cp is not None else None
    threads = len(os.sched_getaffinity(0))

    def rate(name: str, side: str, seconds: float) -> None:
        res[name][side].append(host.nbytes / seconds / 1e9)

    for _ in range(rounds):
        ns = cloop.cloop_memcpy(back.ctypes.data, host.ctypes.data, host.nbytes, threads)
        if ns > 0:
            rate("memcpy, all CPUs", "py", ns / 1e9)
        t = time.perf_counter(); d.set(host); d.sync(); rate("up 256 MiB", "py", time.perf_counter() - t)
        t = time.perf_counter(); d.get(out=back); rate("down 256 MiB", "py", time.perf_counter() - t)
        t = time.perf_counter(); fresh = d.get(); rate("down, new array", "py", time.perf_counter() - t)
        del fresh
        if c is not None:
            t = time.perf_counter(); c.set(host); cp.cuda.Device().synchronize(); rate("up 256 MiB", "cupy", time.perf_counter() - t)
            t = time.perf_counter(); c.get(out=back); rate("down 256 MiB", "cupy", time.perf_counter() - t)
            t = time.perf_counter(); fresh = c.get(); rate("down, new array", "cupy", time.perf_counter() - t)
            del fresh
    d.release()
    return {k: {w: statistics.median(v) for w, v in ws.items() if v} for k, ws in res.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--n", type=int, default=20000, help="launches per round (other cases scale it down)")
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument("--no-transfer", action="store_true")
    opt = ap.parse_args()

    cloop = load_cloop()
    dev = cubehip.Device()
    cases = cubehip_cases(dev, opt.n, cloop)
    cupy, cp = cupy_cases(opt.n) if dev.platform == "nvidia" else (None, "not the nvidia platform")
    tcases, torch = torch_cases(opt.n) if dev.platform == "nvidia" else (None, "not the nvidia platform")
    times: dict[str, dict[str, list[float]]] = {k: {"py": [], "c": [], "cupy": [], "torch": []} for k in cases}
    # The floor under every launch: the same loop on the raw driver, in the same rounds.
    driver = driver_launch(cloop, dev.index) if dev.platform == "nvidia" else None
    floor: list[float] = []
    for _ in range(opt.rounds):
        if driver is not None:
            floor.append(driver(opt.n))
        for name, (py, c, n) in cases.items():
            base = name.split(" (")[0]  # "dlpack export (torch)" is CuPy's and PyTorch's "dlpack export"
            times[name]["py"].append(timed(py, n))
            if c is not None:
                times[name]["c"].append(c(n))
            for other, table in (("cupy", cupy), ("torch", tcases)):
                if table and base in table:
                    fn, m = table[base]
                    times[name][other].append(timed(fn, m))

    print(f"cubehip {cubehip.__version__} on {dev.platform}: {dev.properties.name}; Python {sys.version.split()[0]}; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {opt.rounds} rounds, medians")
    print(f"library: {cubehip.library_path}; cupy: {cp.__version__ if cupy else cp}; "
          f"torch: {torch.__version__ if tcases else torch}")
    print(f"{'case':<22}{'python µs':>11}{'C µs':>10}{'py/C':>8}{'py-C µs':>9}{'cupy µs':>10}{'py/cupy':>9}"
          f"{'torch µs':>10}{'py/torch':>9}")
    report: dict[str, object] = {"platform": dev.platform, "device": dev.properties.name, "python": sys.version.split()[0],
                                 "cupy": cp.__version__ if cupy else None, "torch": torch.__version__ if tcases else None,
                                 "date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), "cases": {}}
    for name, t in times.items():
        med = {k: statistics.median(v) * 1e6 for k, v in t.items() if v}
        row = f"{name:<22}{med['py']:>11.3f}"
        row += f"{med['c']:>10.3f}{med['py'] / med['c']:>8.3f}{med['py'] - med['c']:>9.3f}" if "c" in med else f"{'-':>10}{'-':>8}{'-':>9}"
        for other in ("cupy", "torch"):
            row += f"{med[other]:>10.3f}{med['py'] / med[other]:>9.3f}" if other in med else f"{'-':>10}{'-':>9}"
        print(row)
        report["cases"][name] = med  # type: ignore[index]
    if floor:
        f = statistics.median(floor) * 1e6
        med = report["cases"]["launch"]  # type: ignore[index]
        line = f"raw driver launch (cuLaunchKernel loop, same rounds): {f:.3f} µs; python ÷ driver {med['py'] / f:.3f}"
        if "cupy" in med:
            line += f"; cupy ÷ driver {med['cupy'] / f:.3f}; the best python ÷ cupy any library can reach: {f / med['cupy']:.3f}"
        print(line)
        report["driver_launch_us"] = f
    if not opt.no_transfer:
        tr = transfer(dev, cp if cupy else None, max(3, opt.rounds // 2), cloop)
        anchor = tr.get("memcpy, all CPUs", {}).get("py")
        for name, r in tr.items():
            line = f"{name:<18}{r['py']:>9.2f} GB/s"
            if anchor and name != "memcpy, all CPUs":
                line += f" ({r['py'] / anchor:.2f} of memcpy)"
            print(line + (f"   cupy {r['cupy']:.2f} GB/s" if "cupy" in r else ""))
        report["transfer_gbps"] = tr
    if opt.json:
        Path(opt.json).write_text(json.dumps(report, indent=1))
    dev.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
