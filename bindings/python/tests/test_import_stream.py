"""from_dlpack hands the producer the stream the memory is used after.

The producer orders its pending writes of the tensor before the stream named in
``__dlpack__`` (CuPy and PyTorch make it wait on an event of their own stream, or do
nothing when it is the stream they are on). cubehip names the legacy default stream (the
DLPack handle 1 on CUDA, 0 on ROCm) and then makes the array's own stream wait for it on
the device: the array's stream's native handle never leaves the library (a stream whose
handle is out is shared for good). On the cpu platform the stream is None (kDLCPU has no
streams), so these tests open a cpu device and call it nvidia or amd; the ordering on the
device is tested on the H200 (test_dlpack_streams.py).
"""

from __future__ import annotations

import pytest

import cubehip
from cubehip import _dlpack


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


@pytest.mark.parametrize("producer", [RecordingProducer, OldProducer])
def test_from_dlpack_gives_the_producer_the_legacy_stream(gpu_like, producer):
    for sid in (0, 3, 5):
        p = producer()
        with pytest.raises(BufferError, match="did not return an unconsumed DLPack capsule"):
            cubehip.from_dlpack(p, device=gpu_like, stream=sid)
        assert p.streams == [1], f"stream {sid}: CUDA's legacy default stream is DLPack's 1"


def test_from_dlpack_stream_object(gpu_like):
    p = RecordingProducer()
    with pytest.raises(BufferError):
        cubehip.from_dlpack(p, device=gpu_like, stream=gpu_like.stream(7))
    assert p.streams == [1]


def producer_on(device_type):
    class On(RecordingProducer):
        def __dlpack_device__(self):
            return (device_type, 0)

    return On()


def test_capsule_names_rocms_default_stream():
    d = cubehip.Device("cpu")
    d.platform = "amd"
    try:
        p = producer_on(_dlpack.KDL_ROCM)
        with pytest.raises(BufferError, match="did not return an unconsumed DLPack capsule"):
            cubehip.from_dlpack(p, device=d, stream=4)
        assert p.streams == [0], "ROCm's default stream is DLPack's 0"
    finally:
        d.close()


def test_cpu_gives_no_stream():
    """kDLCPU has no streams: the DLPack standard's stream for it is None."""
    d = cubehip.Device("cpu")
    try:
        p = producer_on(_dlpack.KDL_CPU)
        with pytest.raises(BufferError, match="did not return an unconsumed DLPack capsule"):
            cubehip.from_dlpack(p, device=d)
        assert p.streams == [None]
    finally:
        d.close()
