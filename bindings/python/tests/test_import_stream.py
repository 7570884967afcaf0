"""from_dlpack hands the producer the stream it will use the memory on.

The producer orders its pending writes of the tensor before that stream (CuPy and PyTorch
make it wait on an event of their own stream), so the stream argument of ``__dlpack__``
must be the native handle of the array's cubehip stream. On the cpu platform it is None
(kDLCPU has no streams), so these tests open a cpu device and call it nvidia: the import
then asks libcubehip for the stream's native handle, as it does on a GPU, and the cpu
platform answers with a number of its own for each stream.
"""

from __future__ import annotations

import ctypes

import pytest

import cubehip
from cubehip import _dlpack, _ffi, _import


class RecordingProducer:
    """A DLPack producer that records the stream it is given and returns no capsule, so
    that from_dlpack stops there (its memory is no GPU's)."""

    def __init__(self) -> None:
        self.streams: list[object] = []

    def __dlpack_device__(self) -> tuple[int, int]:
        return (_dlpack.DEVICE_TYPES["nvidia"], 0)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.streams.append(stream)
        return "not a capsule"


class OldProducer(RecordingProducer):
    """A producer older than DLPack 1.0: it knows no max_version."""

    def __dlpack__(self, *, stream=None):
        self.streams.append(stream)
        return "not a capsule"


@pytest.fixture
def gpu_like():
    """A cpu device that says it is an nvidia one."""
    d = cubehip.Device("cpu")
    d.platform = "nvidia"
    yield d
    d.close()


def native_handle(dev: cubehip.Device, sid: int) -> int:
    out = ctypes.c_uint64()
    assert _ffi.lib.cubehip_stream_native_handle(dev._live(), sid, ctypes.byref(out)) == 0
    return out.value


@pytest.mark.parametrize("producer", [RecordingProducer, OldProducer])
def test_from_dlpack_gives_the_producer_the_arrays_stream(gpu_like, producer):
    for sid in (0, 3, 5):
        p = producer()
        with pytest.raises(BufferError, match="did not return an unconsumed DLPack capsule"):
            cubehip.from_dlpack(p, device=gpu_like, stream=sid)
        assert p.streams == [native_handle(gpu_like, sid)], f"stream {sid}"
    # The handles tell the streams apart, so the assertions above check which stream it was.
    assert len({native_handle(gpu_like, sid) for sid in (0, 3, 5)}) == 3


def test_from_dlpack_stream_object(gpu_like):
    p = RecordingProducer()
    with pytest.raises(BufferError):
        cubehip.from_dlpack(p, device=gpu_like, stream=gpu_like.stream(7))
    assert p.streams == [native_handle(gpu_like, 7)]


def test_capsule_passes_the_native_handle(gpu_like):
    p = RecordingProducer()
    assert _import._capsule(p, gpu_like, 4) == "not a capsule"
    assert p.streams == [native_handle(gpu_like, 4)]


def test_cpu_gives_no_stream():
    """kDLCPU has no streams: the DLPack standard's stream for it is None."""
    d = cubehip.Device("cpu")
    try:
        p = RecordingProducer()
        _import._capsule(p, d, 0)
        assert p.streams == [None]
    finally:
        d.close()
