"""Device time per kernel, the same source through cubehip and through CuPy, in one process.

Each kernel (a Jacobi stencil, saxpy, a shared-memory reduction, a tiled matmul) is
compiled by both (NVRTC under each) and timed with device events around LAUNCHES
launches, in alternating rounds, as four variants that tell apart where a difference
comes from:

  cubehip         cubehip's code, cubehip's memory, cubehip's stream (Profile's events)
  cupy            CuPy's code, CuPy's memory, a non-blocking CuPy stream
  cupy@cubehip    CuPy's code and stream on cubehip's memory (placement)
  cubehip-code    cubehip's code object loaded by CuPy, on CuPy's memory (code)
  cubehip@events  cubehip's launches on its stream 1 of arrays made on stream 1, timed by
                  CuPy's events on that stream (the timing: Profile's window against
                  CUDA events)
  cross-stream    the same with the arrays of the "cubehip" column, made on stream 0:
                  each launch lends them to stream 1 (what that costs the device)

A replayed graph of GRAPH_KERNELS stencil steps + a sync is timed on the host for both.
It prints one line per kernel with the medians (µs per kernel) and cubehip ÷ CuPy, then
CuPy's stencil on several fresh allocations of each library (where the bytes land), then
the graph. nvidia only.

Usage: python3 kernels.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings

import numpy as np

# cubehip's code objects are taken from its disk cache: a cache of this run's own.
_cache = tempfile.mkdtemp(prefix="cubehip-kernels-")

import cubehip  # noqa: E402

LAUNCHES = 200
GRAPH_KERNELS = 20
ENTRY_HEADER = len("CUBEHIPCO1\n") + 32  # a cache entry: magic, SHA-256, code object

N_STENCIL = 2048
N_SAXPY = 1 << 24
N_REDUCE = 1 << 24
N_MATMUL = 1024

SOURCES = {
    "jacobi": r"""
extern "C" __global__ void jacobi(const float* __restrict__ in, float* __restrict__ out, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x > 0 && y > 0 && x < n - 1 && y < n - 1)
        out[y * n + x] = 0.25f * (in[y * n + x - 1] + in[y * n + x + 1] + in[(y - 1) * n + x] + in[(y + 1) * n + x]);
}
""",
    "saxpy": r"""
extern "C" __global__ void saxpy(float a, const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
""",
    "reduce": r"""
extern "C" __global__ void reduce(const float* __restrict__ in, float* __restrict__ partial, int n) {
    __shared__ float s[256];
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) acc += in[i];
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}
""",
    "matmul": r"""
#define T 16
extern "C" __global__ void matmul(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
    __shared__ float ta[T][T], tb[T][T];
    int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < n; k += T) {
        ta[threadIdx.y][threadIdx.x] = a[row * n + k + threadIdx.x];
        tb[threadIdx.y][threadIdx.x] = b[(k + threadIdx.y) * n + col];
        __syncthreads();
        for (int j = 0; j < T; j++) acc += ta[threadIdx.y][j] * tb[j][threadIdx.x];
        __syncthreads();
    }
    c[row * n + col] = acc;
}
""",
}


def shapes():
    """name -> (grid, block, host arrays for the arguments in order, scalars by position)."""
    rng = np.random.default_rng(1)
    return {
        "jacobi": ((N_STENCIL // 32, N_STENCIL // 8), (32, 8),
                   [rng.random(N_STENCIL * N_STENCIL, np.float32), np.zeros(N_STENCIL * N_STENCIL, np.float32), np.int32(N_STENCIL)]),
        "saxpy": ((N_SAXPY // 256,), (256,),
                  [np.float32(2.0), rng.random(N_SAXPY, np.float32), rng.random(N_SAXPY, np.float32), np.int32(N_SAXPY)]),
        "reduce": ((1056,), (256,),
                   [rng.random(N_REDUCE, np.float32), np.zeros(1056, np.float32), np.int32(N_REDUCE)]),
        "matmul": ((N_MATMUL // 16, N_MATMUL // 16), (16, 16),
                   [rng.random(N_MATMUL * N_MATMUL, np.float32), rng.random(N_MATMUL * N_MATMUL, np.float32),
                    np.zeros(N_MATMUL * N_MATMUL, np.float32), np.int32(N_MATMUL)]),
    }


def new_entries(seen: set[str], top: str = _cache) -> list[str]:
    out = []
    for root, _, files in os.walk(top):
        for f in files:
            p = os.path.join(root, f)
            if p not in seen:
                seen.add(p)
                out.append(p)
    return out


def cupy_side_for(cp, stream, ev0, ev1, kernel, grid, block, args):
    """A CuPy-side timing of LAUNCHES launches of kernel on stream: µs per kernel."""
    def run():
        with stream:
            ev0.record(stream)
            for _ in range(LAUNCHES):
                kernel(grid, block, args)
            ev1.record(stream)
            ev1.synchronize()
        return cp.cuda.get_elapsed_time(ev0, ev1) * 1e3 / LAUNCHES
    return run


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    rounds = ap.parse_args().rounds
    import cupy as cp

    dev = cubehip.Device("nvidia", cache_dir=_cache)
    seen: set[str] = set(new_entries(set()))
    stream = cp.cuda.Stream(non_blocking=True)
    ev0, ev1 = cp.cuda.Event(), cp.cuda.Event()
    work = tempfile.mkdtemp(prefix="cubehip-cubins-")
    print(f"kernels: device time per kernel (µs), median of {rounds} rounds of {LAUNCHES} launches")
    for name, (grid, block, host) in shapes().items():
        src = SOURCES[name]
        hk = cubehip.RawKernel(src, name, device=dev)
        hargs = [dev.array(a) if isinstance(a, np.ndarray) else a for a in host]
        hk(grid, block, hargs)
        dev.sync()
        entries = [p for p in new_entries(seen)]
        if len(entries) != 1:
            print(f"{name}: expected one new cache entry, found {len(entries)}")
            return 1
        cubin = os.path.join(work, name + ".cubin")
        with open(entries[0], "rb") as f, open(cubin, "wb") as g:
            g.write(f.read()[ENTRY_HEADER:])
        with stream:
            ck = cp.RawKernel(src, name)
            theirs = cp.RawModule(path=cubin).get_function(name)
            cargs = [cp.asarray(a) if isinstance(a, np.ndarray) else a for a in host]
            on_ours = [cp.asarray(a) if isinstance(a, cubehip.DeviceArray) else a for a in hargs]
            ck(grid, block, cargs)  # compiled here, into CuPy's cache
            stream.synchronize()

        def cubehip_side():
            s = dev.stream(0)
            with s.profile() as p:
                for _ in range(LAUNCHES):
                    hk(grid, block, hargs)
            return p.elapsed * 1e6 / LAUNCHES

        # Stream 1's handle out: that stream is shared from now on (its waits the
        # driver's own), which is why the "cubehip" column keeps stream 0.
        with warnings.catch_warnings():  # ExternalStream: deprecated in CuPy 14, still the way for a raw handle
            warnings.simplefilter("ignore", DeprecationWarning)
            xs = cp.cuda.ExternalStream(cubehip._ffi.fast_stream_native_handle(dev._live(), 1))

        hargs1 = [dev.array(a, stream=1) if isinstance(a, np.ndarray) else a for a in host]

        def cubehip_events(args):
            def run():
                ev0.record(xs)
                for _ in range(LAUNCHES):
                    hk(grid, block, args, stream=1)
                ev1.record(xs)
                ev1.synchronize()
                return cp.cuda.get_elapsed_time(ev0, ev1) * 1e3 / LAUNCHES
            return run

        def cupy_side(kernel, args):
            return cupy_side_for(cp, stream, ev0, ev1, kernel, grid, block, args)

        variants = {"cubehip": cubehip_side, "cupy": cupy_side(ck, cargs),
                    "cupy@cubehip": cupy_side(ck, on_ours), "cubehip-code": cupy_side(theirs, cargs),
                    "cubehip@events": cubehip_events(hargs1), "cross-stream": cubehip_events(hargs)}
        times: dict[str, list[float]] = {v: [] for v in variants}
        for v in variants.values():  # warm-up: clocks up, caches filled
            v()
        for r in range(rounds):
            order = list(variants) if r % 2 == 0 else list(reversed(variants))
            for v in order:
                times[v].append(variants[v]())
        med = {v: statistics.median(t) for v, t in times.items()}
        ratios = [a / b for a, b in zip(times["cubehip"], times["cupy"])]
        same = ""
        print(f"{name:7s} " + "  ".join(f"{v} {med[v]:8.3f}" for v in variants)
              + f"  cubehip/cupy {statistics.median(ratios):.4f} [{min(ratios):.4f}, {max(ratios):.4f}]" + same)

    # Placement: CuPy's stencil on several fresh allocations of each library. The stencil's
    # 32 MiB stay in the H200's L2, where where the bytes land decides the time; this tells
    # a difference of the libraries' allocators from the luck of one allocation.
    grid, block, host = shapes()["jacobi"]
    ck = cp.RawKernel(SOURCES["jacobi"], "jacobi")
    for who in ("cupy", "cubehip"):
        per = []
        keep = []
        for _ in range(6):
            if who == "cupy":
                with stream:
                    a, b = cp.asarray(host[0]), cp.asarray(host[1])
            else:
                ha, hb = dev.array(host[0]), dev.array(host[1])
                keep.append((ha, hb))
                dev.sync()
                a, b = cp.asarray(ha), cp.asarray(hb)
            keep.append((a, b))
            run = cupy_side_for(cp, stream, ev0, ev1, ck, grid, block, [a, b, host[2]])
            run()
            per.append(statistics.median(run() for _ in range(5)))
        print(f"placement {who:8s} CuPy's stencil on 6 fresh allocations: " + " ".join(f"{t:.3f}" for t in per)
              + f"  (median {statistics.median(per):.3f})")
        del keep

    # A replayed graph of stencil steps + a sync, on the host clock, both sides.
    grid, block, host = shapes()["jacobi"]
    hk = cubehip.RawKernel(SOURCES["jacobi"], "jacobi", device=dev)
    a, b = dev.array(host[0]), dev.array(host[1])
    s0 = dev.stream(0)
    hk(grid, block, (a, b, host[2]))
    dev.sync()
    with s0.capture() as g:
        for i in range(GRAPH_KERNELS):
            hk(grid, block, (a, b, host[2]) if i % 2 == 0 else (b, a, host[2]))
    ck = cp.RawKernel(SOURCES["jacobi"], "jacobi")
    ca, cb = cp.asarray(host[0]), cp.asarray(host[1])
    with stream:
        ck(grid, block, (ca, cb, host[2]))
        stream.synchronize()
        stream.begin_capture()
        for i in range(GRAPH_KERNELS):
            ck(grid, block, (ca, cb, host[2]) if i % 2 == 0 else (cb, ca, host[2]))
        cg = stream.end_capture()
    reps = 50

    def h_graph():
        t = time.perf_counter()
        for _ in range(reps):
            g.replay()
            dev.sync()
        return (time.perf_counter() - t) * 1e6 / reps

    def c_graph():
        t = time.perf_counter()
        for _ in range(reps):
            cg.launch(stream)
            stream.synchronize()
        return (time.perf_counter() - t) * 1e6 / reps

    h_graph(), c_graph()
    hs, cs = [], []
    for r in range(rounds):
        if r % 2:
            cs.append(c_graph())
            hs.append(h_graph())
        else:
            hs.append(h_graph())
            cs.append(c_graph())
    ratios = [x / y for x, y in zip(hs, cs)]
    print(f"graph   cubehip {statistics.median(hs):8.2f}  cupy {statistics.median(cs):8.2f}  (µs per replay of {GRAPH_KERNELS} + sync)"
          f"  cubehip/cupy {statistics.median(ratios):.4f} [{min(ratios):.4f}, {max(ratios):.4f}]")
    g.destroy()
    dev.close()
    print(f"code objects and SASS diffs: {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
