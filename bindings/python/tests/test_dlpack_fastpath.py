"""DeviceArray.__dlpack__ is the extension's method (dlpack_method): it makes the common call
itself, in C, and hands every other one to the package's method (DeviceArray._dlpack_py).
Whichever way a call goes, the capsule and the errors must be the same: each case here is
asked of both, on devices that say they are cpu, nvidia and amd ones. Then the export counts
the extension keeps (each array's lease, the set of live exports) and the import's own
short cuts (a legacy producer asked once, an import released without KeptBuffers)."""

from __future__ import annotations

import ctypes
import gc
import random

import numpy as np
import pytest

import cubehip
from cubehip import DeviceArray, _dlpack, _ffi

from test_interop import _api

pytestmark = pytest.mark.skipif(_ffi.native is None, reason="the extension's method")


def like(platform):
    d = cubehip.Device("cpu")
    d.platform = platform
    return d


def contents(c):
    """Everything a consumer reads of a "dltensor" or "dltensor_versioned" capsule (not the
    struct's own address)."""
    if _api.PyCapsule_IsValid(c, b"dltensor_versioned"):
        v = ctypes.cast(_api.PyCapsule_GetPointer(c, b"dltensor_versioned"), ctypes.POINTER(_dlpack.DLManagedTensorVersioned)).contents
        head, t, deleter = ("versioned", v.major, v.minor, v.flags), v.dl_tensor, v.deleter
    else:
        assert _api.PyCapsule_IsValid(c, b"dltensor")
        m = ctypes.cast(_api.PyCapsule_GetPointer(c, b"dltensor"), ctypes.POINTER(_dlpack.DLManagedTensor)).contents
        head, t, deleter = ("legacy",), m.dl_tensor, m.deleter
    return (
        t.data, t.device.device_type, t.device.device_id, t.ndim, (t.dtype.code, t.dtype.bits, t.dtype.lanes),
        tuple(t.shape[i] for i in range(t.ndim)), bool(t.strides), t.byte_offset,
        ctypes.cast(deleter, ctypes.c_void_p).value,
    ) + head


def both(a, *args, **kwargs):
    """(what the extension's method gave, what the package's gave): ("capsule", contents) or
    (the exception's type, its message)."""
    out = []
    for f in (DeviceArray.__dlpack__, DeviceArray._dlpack_py):
        try:
            c = f(a, *args, **kwargs)
        except Exception as e:  # noqa: BLE001 (the point is to compare them)
            out.append((type(e), str(e)))
        else:
            out.append(("capsule", contents(c)))
            del c
    return out


def test_it_is_the_extensions_method():
    assert type(DeviceArray.__dlpack__).__name__ == "method_descriptor"
    assert DeviceArray._dlpack_py.__doc__ and "stream" in DeviceArray._dlpack_py.__doc__


def arrays(d):
    z = d.array(np.array(5, dtype=np.int32))  # 0-d
    e = d.empty(0, np.float32)
    return [
        d.array(np.arange(7, dtype=np.float32)),
        d.array(np.arange(24, dtype=np.int8).reshape(2, 3, 4)),
        d.array(np.ones((3, 2), dtype=np.bool_)),
        d.array(np.array(1 + 2j, dtype=np.complex128)),
        d.array(np.arange(5, dtype=np.float16)),
        d.array(np.arange(6, dtype=np.uint64)),
        d.array(np.arange(12, dtype=np.float64)).reshape(3, 4),  # views: the base owns the memory
        d.array(np.arange(4, dtype=np.int32)).view(np.float32),
        z, z.reshape(1), e, e.reshape(0, 5),
    ]


STREAMS = [None, -1, 0, 1, 2, 3, 0xABC0, 2**63, 2**64 - 1, 2**64, -2, True, 1.0, "1", np.int64(3)]


@pytest.mark.parametrize("platform", ["cpu", "nvidia", "amd"])
def test_same_capsule_and_same_errors_either_way(platform):
    d = like(platform)
    try:
        before = _dlpack.live_exports()
        for a in arrays(d):
            for s in STREAMS:
                for extra in ({}, {"max_version": (1, 0)}, {"max_version": (0, 8)}, {"max_version": (2, 3)},
                              {"max_version": None}, {"max_version": [1, 0]}, {"max_version": (1,)},
                              {"copy": False}, {"copy": None, "dl_device": None},
                              {"dl_device": (_dlpack.DEVICE_TYPES[platform], 0), "max_version": (1, 0), "copy": None}):
                    fast, slow = both(a, stream=s, **extra)
                    assert fast == slow, (a, s, extra)
            fast, slow = both(a)  # no keyword at all
            assert fast == slow
            # The cpu platform takes the null stream only: like-nvidia's default (1) is
            # refused by the library, through the package's refused(), either way.
            assert fast[0] == ("capsule" if platform != "nvidia" else cubehip.InvalidArgument)
        assert _dlpack.live_exports() == before
    finally:
        d.close()


def test_every_other_call_is_the_packages(dev):
    """The calls the extension hands on: their answers are the package's own."""
    a = dev.array(np.arange(4, dtype=np.float32))
    dl = a.__dlpack_device__()
    cases = [
        ((), {"copy": True}), ((), {"dl_device": (99, 3)}), ((), {"dl_device": dl}), ((), {"copy": 0}),
        ((), {"dl_device": list(dl)}), ((), {"dl_device": (dl[0], dl[1], 0)}), ((), {"dl_device": (True, 0)}),
        ((None,), {}), ((), {"strem": None}), ((), {"stream": None, "copy": "yes"}),
    ]
    for args, kwargs in cases:
        fast, slow = both(a, *args, **kwargs)
        assert fast == slow, (args, kwargs)
    assert both(a, copy=True)[0][0] is BufferError
    assert both(a, None)[0][0] is TypeError
    assert both(a, strem=None)[0][0] is TypeError


def test_released_closed_and_undescribable(dev):
    a = dev.array(np.arange(4, dtype=np.float32))
    v = a.reshape(2, 2)
    a.release()
    for x in (a, v):
        fast, slow = both(x)
        assert fast == slow and fast[0] is ValueError, fast
    for dt in (">f4", "V8", "M8[s]"):
        b = dev.empty(3, dt)
        fast, slow = both(b)
        assert fast == slow and fast[0] is BufferError and "no DLPack data type" in fast[1], (dt, fast)
        b.release()
    d = cubehip.Device("cpu")
    c = d.zeros(4, np.float32)
    d.close()
    fast, slow = both(c)
    assert fast == slow and fast[0] is cubehip.DeviceClosed


def test_a_subclass_is_the_packages_call():
    class Mine(DeviceArray):
        __slots__ = ()

    d = cubehip.Device("cpu")  # numpy reads only kDLCPU memory
    try:
        a = d.array(np.arange(3, dtype=np.float32))
        m = Mine.__new__(Mine)
        m._h, m._base, m._exports, m._import = a.handle, a, 0, False
        m.device, m.shape, m.dtype, m.nbytes, m.stream = a.device, a.shape, a.dtype, a.nbytes, a.stream
        fast, slow = both(m)
        assert fast == slow and fast[0] == "capsule"
        np.testing.assert_array_equal(np.from_dlpack(m), np.arange(3))
    finally:
        d.close()


def test_a_view_of_a_0d_array_lends_its_base(dev):
    """A view's export counts on its base, whatever the base's len(): a 0-d base (whose len()
    raises) and an empty one (whose len() is 0) own their memory as any other does."""
    if dev.platform != "cpu":
        pytest.skip("numpy reads only kDLCPU memory")
    gc.collect()
    dev.sync()  # earlier releases done: the count below is this array's alone
    used = dev.memory_usage().bytes_in_use
    z = dev.array(np.array(5, dtype=np.int32))
    host = np.from_dlpack(z.reshape(1))
    assert _dlpack.export_count(z._exports) == 1
    z.release()
    assert dev.memory_usage().bytes_in_use > used, "the view's export keeps its base's memory"
    assert host[0] == 5
    del host
    gc.collect()
    dev.sync()
    assert dev.memory_usage().bytes_in_use == used
    e = dev.empty(0, np.float32)
    c = e.reshape(0, 3).__dlpack__()
    assert _dlpack.export_count(e._exports) == 1
    del c
    assert _dlpack.export_count(e._exports) == 0
    e.release()


def test_many_exports_let_go_in_any_order(dev):
    """The set of live exports, in C: hundreds in, out in a shuffled order, each array's count
    right all along, and a release left to the last export of its array."""
    gc.collect()
    before = _dlpack.live_exports()
    arrs = [dev.array(np.full(8, i, dtype=np.float32)) for i in range(40)]
    caps = [[a, a.__dlpack__()] for _ in range(12) for a in arrs]
    assert _dlpack.live_exports() == before + len(caps)
    for a in arrs[::2]:
        a.release()  # left to their exports
    random.Random(7).shuffle(caps)
    left = {id(a): 12 for a in arrs}
    for n, pair in enumerate(caps):
        owner = pair[0]
        pair[1] = None  # the capsule's end: its deleter
        left[id(owner)] -= 1
        assert _dlpack.export_count(owner._exports) == left[id(owner)]
        assert _dlpack.live_exports() == before + len(caps) - n - 1
    for i, a in enumerate(arrs[1::2]):
        np.testing.assert_array_equal(a.get(), 2 * i + 1)
        a.release()


def test_import_asks_a_legacy_producer_once(dev):
    """A producer whose __dlpack__ knows no max_version (DLPack < 1.0) is asked with it once;
    its type's next imports ask without it, one call each."""
    if dev.platform != "cpu":
        pytest.skip("a numpy producer: kDLCPU memory")

    class Legacy:
        calls: list = []

        def __init__(self, a):
            self.a = a

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

        def __dlpack__(self, stream=None, **kw):
            Legacy.calls.append(sorted(kw))
            if kw:
                raise TypeError(f"__dlpack__() got an unexpected keyword argument {next(iter(kw))!r}")
            return self.a.__dlpack__(stream=stream)

    src = np.arange(6, dtype=np.float32)
    for _ in range(3):
        x = cubehip.from_dlpack(Legacy(src), device=dev)
        np.testing.assert_array_equal(x.get(), src)
        x.release()
    assert Legacy.calls == [["max_version"], [], [], []]


def test_an_import_is_released_at_once_and_never_kept(dev):
    if dev.platform != "cpu":
        pytest.skip("a numpy producer: kDLCPU memory")
    src = np.arange(16, dtype=np.float32)
    import sys

    refs = sys.getrefcount(src)
    kept = {k: len(v) for k, v in dev._kept.lists.items()}
    a = cubehip.from_dlpack(src, device=dev)
    assert sys.getrefcount(src) > refs, "the import holds the producer's array"
    a.release()
    assert sys.getrefcount(src) == refs, "release() ran the producer's deleter"
    b = cubehip.from_dlpack(src, device=dev)
    del b
    assert sys.getrefcount(src) == refs, "so did the array's end"
    assert {k: len(v) for k, v in dev._kept.lists.items()} == kept, "an import's buffer is never kept"


def test_the_common_call_makes_no_python_call(dev):
    """The calls the extension makes itself do not reach the package's method; the others do."""
    native = _ffi.native
    calls = []

    def slow(self, **kw):
        calls.append(kw)
        return DeviceArray._dlpack_py(self, **kw)

    method = native.dlpack_method(DeviceArray, slow, _dlpack._refused, _dlpack.code_bits)
    try:
        d = like("amd")
        a = d.array(np.arange(4, dtype=np.float32))
        own = (10, 0)  # amd's kDLROCM, device 0
        for kw in ({}, {"stream": None}, {"stream": 0, "max_version": (1, 0)}, {"stream": -1, "copy": False}, {"dl_device": None},
                   {"dl_device": own, "copy": None, "max_version": (1, 0), "stream": 0}):
            del calls[:]
            c = method.__get__(a)(**kw)
            assert contents(c)[0] == a.data_ptr() and calls == [], kw
            del c
        for kw in ({"stream": 1}, {"copy": True}, {"dl_device": (10, 1)}, {"dl_device": [10, 0]}, {"dl_device": (2, 0)}):
            del calls[:]
            try:
                method.__get__(a)(**kw)
            except BufferError:
                pass
            assert calls == [kw]
        assert method.__get__(a)(dl_device=[10, 0]) is not None, "the package's compares any sequence"
        d.close()
    finally:
        native.dlpack_method(DeviceArray, DeviceArray._dlpack_py, _dlpack._refused, _dlpack.code_bits)


@pytest.mark.parametrize("dtype", ["f4", "f8", "i1", "u2", "i8", "c8", "c16", "?", "e"])
def test_the_extensions_import_makes_the_packages_array(dev, dtype):
    """An import whose dtype the package has not met yet is finished in Python (_wrap);
    later ones are the extension's whole call (dlpack_take): the same array either way."""
    if dev.platform != "cpu":
        pytest.skip("a numpy producer: kDLCPU memory")
    from cubehip import _import

    src = np.arange(24).astype(dtype).reshape(2, 3, 4)
    # numpy 1.x exports no bool: another cpu device's array is the producer then.
    other = cubehip.Device("cpu") if dtype == "?" else None
    producer = other.array(src) if other is not None else src
    ptr = producer.data_ptr() if other is not None else src.__array_interface__["data"][0]
    _import._dtypes.pop(np.dtype(dtype).str[1:] if dtype != "?" else "?", None)
    first = cubehip.from_dlpack(producer, device=dev, stream=3)
    second = cubehip.from_dlpack(producer, device=dev, stream=3)
    for a in (first, second):
        assert type(a) is DeviceArray
        assert (a.shape, a.dtype, a.nbytes, a.stream, a._base, a._exports, a._import) == (
            (2, 3, 4), np.dtype(dtype), src.nbytes, 3, None, 0, True)
        assert a.data_ptr() == ptr
        np.testing.assert_array_equal(a.get(stream=3), src)
    first.release()
    del second, a
    gc.collect()
    if other is not None:
        producer.release()
        other.close()


def test_exports_and_deleters_on_many_threads(dev):
    """Exports made on several threads at once, their deleters called by threads without the
    GIL (a consumer's own threads): the lease's count and the set of live exports, both kept
    under the GIL the deleter takes, end where they began, and a release left to the exports
    happens once."""
    import threading

    gc.collect()
    before = _dlpack.live_exports()
    a = dev.array(np.arange(64, dtype=np.float32))
    proto = ctypes.CFUNCTYPE(None, ctypes.POINTER(_dlpack.DLManagedTensor))  # calls without the GIL
    errors = []

    def work():
        try:
            held = []
            for _ in range(300):
                c = a.__dlpack__()
                m = ctypes.cast(_api.PyCapsule_GetPointer(c, b"dltensor"), ctypes.POINTER(_dlpack.DLManagedTensor))
                assert _api.PyCapsule_SetName(c, b"used_dltensor") == 0  # consumed: the deleter is ours to call
                held.append(m)
                del c
            for m in held:
                proto(ctypes.cast(m.contents.deleter, ctypes.c_void_p).value)(m)
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert _dlpack.live_exports() == before
    assert _dlpack.export_count(a._exports) == 0
    keep = a.__dlpack__()  # one left when the array is released: the release waits for it
    a.release()
    assert _dlpack.export_count(a._exports) == 1
    del keep
    assert _dlpack.export_count(a._exports) == 0 and _dlpack.live_exports() == before


# --- __dlpack_device__ and the export's address ----------------------------------------------


def test_dlpack_device_is_the_extensions_method_and_answers_as_the_packages():
    assert type(DeviceArray.__dlpack_device__).__name__ == "method_descriptor"
    for platform in ("cpu", "nvidia", "amd"):
        d = like(platform)
        try:
            for a in arrays(d):
                assert DeviceArray.__dlpack_device__(a) == DeviceArray._dlpack_device_py(a), (platform, a)
            a = d.zeros(3, np.float32)
            a.release()
            errors = []
            for f in (DeviceArray.__dlpack_device__, DeviceArray._dlpack_device_py):
                with pytest.raises(ValueError) as e:
                    f(a)
                errors.append(str(e.value))
            assert errors[0] == errors[1]
        finally:
            d.close()


def test_export_address_is_the_buffers_each_time(dev):
    """The extension keeps an exported handle's address for the next export of the same memory:
    each export, of the base and of its views, of arrays made after others were released, still
    names the buffer's own address."""
    for round_ in range(3):
        arrs = [dev.array(np.full(16, round_ * 10 + i, dtype=np.float32)) for i in range(6)]
        for a in arrs:
            for x in (a, a.reshape(4, 4), a.view(np.int32), a):
                assert contents(x.__dlpack__(stream=None if dev.platform != "nvidia" else 1))[0] == a.data_ptr()
        for a in arrs[::2]:
            a.release()


def test_export_after_a_failure_refuses_though_the_address_is_known(dev):
    """The address an earlier export kept does not stand in for the check: a buffer that now
    carries a failure is not exported, and a released one is not either."""
    from test_interop import BROKEN

    k = cubehip.Kernel(BROKEN, "broken", block=1, device=dev, compile=False)
    inp, out = dev.array(np.arange(4, dtype=np.int32)), dev.zeros(4, np.int32)
    assert contents(out.__dlpack__())[0] == out.data_ptr()  # the address is kept now
    try:
        k(1, inp, out)
    except cubehip.CompileError:
        pass
    for _ in range(2):
        with pytest.raises(cubehip.CarriedFailure):
            out.__dlpack__()
    inp.__dlpack__()
    v = inp.reshape(2, 2)
    inp.release()
    with pytest.raises(ValueError):
        v.__dlpack__()
    out.release()


@pytest.mark.parametrize("native", [True, False])
def test_a_versioned_export_for_a_dlpack_1_consumer(dev, native, monkeypatch):
    """max_version (1, 0) or later gets DLPack 1.0's "dltensor_versioned" capsule (mpi4py 4
    asks for it and refuses the legacy one); it reads the same memory, a consumer that
    takes it calls its deleter once, and cubehip imports it back. Both the extension's
    export and the ctypes one, without it."""
    if not native:
        monkeypatch.setattr(_dlpack, "_native", None)
    a = dev.array(np.arange(6, dtype=np.float32))
    before = _dlpack.live_exports() if native else len(_dlpack._live)
    c = a._dlpack_py(max_version=(1, 0))
    got = contents(c)
    assert got[-4:] == ("versioned", 1, 0, 0)
    assert got[0] == a.data_ptr()
    assert contents(a._dlpack_py())[-1] == "legacy"
    v = ctypes.cast(_api.PyCapsule_GetPointer(c, b"dltensor_versioned"), ctypes.POINTER(_dlpack.DLManagedTensorVersioned))
    assert _api.PyCapsule_SetName(c, b"used_dltensor_versioned") == 0  # taken: the deleter is the consumer's to call
    del c
    gc.collect()
    assert (_dlpack.live_exports() if native else len(_dlpack._live)) == before + 1
    v.contents.deleter(v)
    assert (_dlpack.live_exports() if native else len(_dlpack._live)) == before

    class Producer:
        def __dlpack__(self, **kw):
            return a._dlpack_py(**kw)

        def __dlpack_device__(self):
            return a.__dlpack_device__()

    b = cubehip.from_dlpack(Producer(), device=dev)
    np.testing.assert_array_equal(b.get(), np.arange(6, dtype=np.float32))
