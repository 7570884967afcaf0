"""The stream argument of __dlpack__ and the "stream" of __cuda_array_interface__, both ways.

Export: the consumer names the stream it will use the memory on, and the array's queued
writes are ordered before it on the device (cubehip_buffer_order_before), per the array
API standard's table for each device type. Import: a __cuda_array_interface__ "stream" is
waited for on the device (cubehip_stream_wait_native), and from_dlpack hands the producer
the array's stream (test_import_stream.py).

On the cpu platform the rules are checked with a cpu device that says it is an nvidia or an
amd one: every refusal of the table is the package's own, and the library's answer for a
stream (the cpu platform takes only 0, and names the stream it was given) shows which
stream the package passed. The GPU tests run with writes in flight on both sides: a long
kernel, then the exchange, then the other library's read, with no host wait between.
"""

from __future__ import annotations

import numpy as np
import pytest

import cubehip
from cubehip import _dlpack

from test_interop import CAIOnly, on


@pytest.mark.parametrize(
    "platform, stream, want",
    [
        ("cpu", None, (_dlpack.ORDER_HOST, 0)),
        ("nvidia", None, (_dlpack.ORDER_STREAM, 1)),  # the legacy default stream
        ("nvidia", 1, (_dlpack.ORDER_STREAM, 1)),
        ("nvidia", 2, (_dlpack.ORDER_STREAM, 2)),  # the per-thread default stream
        ("nvidia", 0x7F00_0000_1234, (_dlpack.ORDER_STREAM, 0x7F00_0000_1234)),
        ("nvidia", -1, (_dlpack.ORDER_NONE, 0)),
        ("amd", None, (_dlpack.ORDER_STREAM, 0)),  # the null stream
        ("amd", 0, (_dlpack.ORDER_STREAM, 0)),
        ("amd", 3, (_dlpack.ORDER_STREAM, 3)),
        ("amd", 2**64 - 1, (_dlpack.ORDER_STREAM, 2**64 - 1)),
        ("amd", -1, (_dlpack.ORDER_NONE, 0)),
    ],
)
def test_the_standards_table(platform, stream, want):
    assert _dlpack.order_for(platform, stream) == want


@pytest.mark.parametrize(
    "platform, stream, match",
    [
        ("cpu", 0, "kDLCPU"), ("cpu", 1, "kDLCPU"), ("cpu", -1, "kDLCPU"), ("cpu", 12345, "kDLCPU"),
        ("nvidia", 0, "ambiguous"), ("nvidia", -2, "not a stream"), ("nvidia", 2**64, "not a stream"),
        ("nvidia", 1.0, "not a stream"), ("nvidia", True, "not a stream"), ("nvidia", "1", "not a stream"),
        ("amd", 1, "no ROCm stream"), ("amd", 2, "no ROCm stream"), ("amd", -5, "not a stream"),
    ],
)  # fmt: skip
def test_streams_with_no_meaning_are_refused(platform, stream, match):
    with pytest.raises(BufferError, match=match):
        _dlpack.order_for(platform, stream)


def like(platform):
    """A cpu device that says it is a device of platform."""
    d = cubehip.Device("cpu")
    d.platform = platform
    return d


def test_cpu_export_takes_none_only_and_waits(dev):
    on(dev, "cpu")
    a = dev.array(np.arange(8, dtype=np.float32))
    for s in (0, 1, 2, -1, 99):
        with pytest.raises(BufferError, match="kDLCPU"):
            a.__dlpack__(stream=s)
    before = _dlpack.live_exports()
    c = a.__dlpack__(stream=None)
    assert _dlpack.live_exports() == before + 1
    del c
    assert _dlpack.live_exports() == before
    a.release()


@pytest.mark.parametrize(
    "stream, passed",
    [(None, "0x1"), (1, "0x1"), (2, "0x2"), (0xABC0, "0xabc0")],
)
def test_an_nvidia_export_orders_before_the_consumers_stream(stream, passed):
    d = like("nvidia")
    try:
        a = d.array(np.arange(4, dtype=np.float32))
        before = _dlpack.live_exports()
        # The cpu platform takes only 0, and names the stream it was given.
        with pytest.raises(cubehip.InvalidArgument, match=f"cubehip_buffer_order_before.*stream {passed}"):
            a.__dlpack__(stream=stream)
        assert _dlpack.live_exports() == before, "a refused order exports nothing"
        with pytest.raises(BufferError, match="ambiguous"):
            a.__dlpack__(stream=0)
        c = a.__dlpack__(stream=-1)  # no ordering asked for: no call, a capsule
        assert _dlpack.live_exports() == before + 1
        del c
        assert _dlpack.live_exports() == before
    finally:
        d.close()


def test_an_amd_export_orders_before_the_null_stream():
    d = like("amd")
    try:
        k = cubehip.Kernel('extern "C" __global__ void one(float* x) { x[threadIdx.x] = 1.0f; }', "one", block=4, device=d)
        a = d.zeros(4, np.float32)
        k(1, a)
        for s in (None, 0):  # the null stream: 0, which the cpu platform takes (and waits)
            c = a.__dlpack__(stream=s)
            assert c is not None
            del c
        for s in (1, 2):
            with pytest.raises(BufferError, match="no ROCm stream"):
                a.__dlpack__(stream=s)
        with pytest.raises(cubehip.InvalidArgument, match="stream 0x5"):
            a.__dlpack__(stream=5)
        np.testing.assert_array_equal(a.get(), 1)
    finally:
        d.close()


def test_a_carried_failure_is_not_ordered_but_raised():
    from test_interop import BROKEN

    d = like("amd")
    try:
        k = cubehip.Kernel(BROKEN, "broken", block=1, device=d, compile=False)
        inp, out = d.array(np.arange(4, dtype=np.int32)), d.zeros(4, np.int32)
        try:
            k(1, inp, out)
        except cubehip.CompileError:
            pass
        before = _dlpack.live_exports()
        for s in (None, 0):
            with pytest.raises(cubehip.CarriedFailure):
                out.__dlpack__(stream=s)
        assert _dlpack.live_exports() == before
    finally:
        d.close()


def test_cuda_array_interface_stream_is_waited_on_the_device():
    d = like("nvidia")
    try:
        owner = cubehip.Device("cpu")
        mem = owner.zeros(16, np.float32)
        iface = {"shape": (16,), "typestr": "<f4", "data": (mem.data_ptr(), False), "version": 3, "strides": None}
        # No stream: nothing to wait for, the memory imported as it is.
        a = cubehip.asarray(CAIOnly(dict(iface, stream=None)), device=d)
        assert a.data_ptr() == mem.data_ptr()
        a.release()
        # A stream: the array's stream (3) waits for it, which the cpu platform refuses.
        for s in (1, 2, 0xBEEF00):
            with pytest.raises(cubehip.InvalidArgument, match="cubehip_stream_wait_native: stream 3"):
                cubehip.asarray(CAIOnly(dict(iface, stream=s)), device=d, stream=3)
        for s in (0, -1, 1.5, "1"):
            with pytest.raises(BufferError, match="is no stream"):
                cubehip.asarray(CAIOnly(dict(iface, stream=s)), device=d)
        mem.release()
        owner.close()
    finally:
        d.close()


# --- on the GPU: writes in flight on both sides ---------------------------------------------

# Each thread spins through a long dependent chain before it writes, so the kernel is still
# running when the exchange happens: a consumer that is not ordered after it reads zeros.
SLOW_FILL = r"""
extern "C" __global__ void slow_fill(float* out, unsigned n, unsigned spins) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = 0.0f;
  for (unsigned k = 0; k < spins; k++) v = v * 0.999999f + 1e-7f;
  if (i < n) out[i] = (float)i + 1.0f + (v > 1e30f ? 1.0f : 0.0f);
}
"""
COPY = r"""
extern "C" __global__ void copy(const float* in, float* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}
"""
N = 1 << 20
SPINS = 200_000


def _torch(dev):
    on(dev, "nvidia")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")
    return torch


@pytest.mark.parametrize("consumer_stream", ["default", "side"])
def test_torch_reads_every_byte_of_a_kernel_in_flight(dev, consumer_stream):
    torch = _torch(dev)
    fill = cubehip.Kernel(SLOW_FILL, "slow_fill", block=256, device=dev)
    want = torch.arange(1, N + 1, dtype=torch.float32, device=f"cuda:{dev.index}")
    side = torch.cuda.Stream(device=dev.index) if consumer_stream == "side" else torch.cuda.current_stream(dev.index)
    for _ in range(3):
        a = dev.zeros(N, np.float32)
        dev.sync()
        fill(N // 256, a, N, SPINS)  # still running when torch takes the array
        with torch.cuda.stream(side):
            t = torch.from_dlpack(a)  # torch passes its current stream: ordered there
            got = t.clone()
        side.synchronize()
        assert torch.equal(got, want), "torch read the array before cubehip's kernel finished"
        del t
        a.release()


def test_cupy_reads_every_byte_of_a_kernel_in_flight(dev):
    on(dev, "nvidia")
    cp = pytest.importorskip("cupy")
    fill = cubehip.Kernel(SLOW_FILL, "slow_fill", block=256, device=dev)
    want = cp.arange(1, N + 1, dtype=cp.float32)
    for through in ("dlpack", "cuda_array_interface"):
        a = dev.zeros(N, np.float32)
        dev.sync()
        fill(N // 256, a, N, SPINS)
        x = cp.from_dlpack(a) if through == "dlpack" else cp.asarray(a)
        got = x.copy()
        cp.cuda.get_current_stream().synchronize()
        assert bool((got == want).all()), f"CuPy read the array before cubehip's kernel finished ({through})"
        del x
        a.release()


def test_cubehip_reads_every_byte_of_a_torch_write_in_flight(dev):
    torch = _torch(dev)
    copy = cubehip.Kernel(COPY, "copy", block=256, device=dev)
    for sid in (0, 3):
        x = torch.zeros(N, dtype=torch.float32, device=f"cuda:{dev.index}")
        torch.cuda.synchronize()
        torch.cuda._sleep(50_000_000)  # torch's stream is busy...
        x.add_(7)  # ...and writes x after it
        a = cubehip.from_dlpack(x, device=dev, stream=sid)  # torch orders its stream before ours
        out = dev.zeros(N, np.float32, stream=sid)
        copy(N // 256, a, out, N, stream=sid)
        got = out.get(stream=sid)
        assert (got == 7).all(), f"cubehip read the tensor before torch's write finished (stream {sid})"
        a.release()
        out.release()


def test_cubehip_waits_for_a_cuda_array_interface_stream(dev):
    on(dev, "nvidia")
    cp = pytest.importorskip("cupy")
    spin = cp.RawKernel(SLOW_FILL, "slow_fill")
    copy = cubehip.Kernel(COPY, "copy", block=256, device=dev)
    s = cp.cuda.Stream(non_blocking=True)
    x = cp.zeros(N, cp.float32)  # on CuPy's default stream, which s does not wait for
    cp.cuda.Device().synchronize()
    with s:
        spin((N // 256,), (256,), (x, np.uint32(N), np.uint32(SPINS)))
    iface = dict(x.__cuda_array_interface__, stream=s.ptr)  # the producer's stream, as the interface says
    a = cubehip.asarray(CAIOnly(iface), device=dev)
    out = dev.zeros(N, np.float32)
    copy(N // 256, a, out, N)
    np.testing.assert_array_equal(out.get(), np.arange(1, N + 1, dtype=np.float32))
    a.release()
