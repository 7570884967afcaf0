"""Zero-copy export: DLPack capsules (with their deleter rules) and __cuda_array_interface__.

On the cpu device the memory is host memory, so numpy.from_dlpack reads a device array in
place and every rule is checked here; on nvidia the same arrays go to CuPy and PyTorch
(skipped where they are not installed)."""

import ctypes
import gc
import sys

import numpy as np
import pytest

import cubehip
from cubehip import _dlpack

from conftest import SAXPY  # noqa: F401  (the session fixtures come from conftest)

BROKEN = 'extern "C" __global__ void broken(const int* in, int* out) { out[0] = undeclared_name; }'
INC = r"""
extern "C" __global__ void inc(float* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
"""

_api = ctypes.pythonapi
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int


def on(dev, *platforms):
    if dev.platform not in platforms:
        pytest.skip(f"needs the {' or '.join(platforms)} platform, this is {dev.platform}")


def settle():
    gc.collect()
    return _dlpack.live_exports()


def test_dlpack_device(dev):
    a = dev.zeros(4, np.float32)
    kind = {"cpu": 1, "nvidia": 2, "amd": 10}[dev.platform]
    assert a.__dlpack_device__() == (kind, 0 if dev.platform == "cpu" else dev.index)
    a.release()
    with pytest.raises(ValueError, match="released"):
        a.__dlpack_device__()


def test_numpy_reads_and_writes_in_place(dev):
    on(dev, "cpu")
    base = settle()
    a = dev.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    host = np.from_dlpack(a)
    assert host.shape == (3, 4) and host.dtype == np.float32
    np.testing.assert_array_equal(host, np.arange(12).reshape(3, 4))
    assert host.__array_interface__["data"][0] == a.data_ptr(), "numpy's array is the device memory itself"
    # A write through the exported memory is what the device reads. (numpy marks arrays it
    # takes over DLPack read-only, so the write goes through the address itself.)
    ctypes.c_float.from_address(host.__array_interface__["data"][0] + 6 * 4).value = 100
    assert a.get()[1, 2] == 100
    k = cubehip.Kernel(INC, "inc", block=64, device=dev)
    k(1, a, 12)
    a.sync()  # the export's rule: finish the device's writes before another reader looks
    assert host[1, 2] == 101 and host[0, 0] == 1
    assert _dlpack.live_exports() == base + 1
    del host
    assert settle() == base, "numpy's array let go: the deleter ran"
    a.release()


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.uint64, np.float16, np.float32, np.float64,
                                   np.complex64, np.complex128, np.bool_])
def test_every_dtype(dev, dtype):
    on(dev, "cpu")
    src = (np.arange(10) % 3).astype(dtype)
    a = dev.array(src)
    try:
        out = np.from_dlpack(a)
    except (BufferError, TypeError, RuntimeError) as e:  # an older numpy may not take every code
        pytest.skip(f"numpy {np.__version__} does not import {np.dtype(dtype)} over DLPack: {e}")
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, src)
    del out
    a.release()


def test_view_and_empty(dev):
    on(dev, "cpu")
    a = dev.array(np.arange(6, dtype=np.int32))
    v = a.reshape(2, 3)
    np.testing.assert_array_equal(np.from_dlpack(v), np.arange(6).reshape(2, 3))
    e = dev.empty((0, 5), np.float32)
    assert np.from_dlpack(e).shape == (0, 5)
    s = dev.array(np.array(7, dtype=np.int64))  # a 0-d array
    assert np.from_dlpack(s)[()] == 7
    a.release(), e.release(), s.release()


def test_capsule_nobody_consumed_gives_the_array_back(dev):
    base = settle()
    a = dev.zeros(8, np.float32)
    c = a.__dlpack__()
    assert _api.PyCapsule_IsValid(c, b"dltensor")
    assert _dlpack.live_exports() == base + 1
    del c
    assert settle() == base


def test_consumer_rules_rename_and_one_deleter_call(dev):
    """A consumer renames the capsule "used_dltensor" and calls the deleter itself: the capsule
    must not call it again when it is freed, and a second call of the deleter frees nothing
    twice."""
    base = settle()
    a = dev.zeros(8, np.float32)
    a.release()  # deferred: nothing has exported yet, so this one really releases
    a = dev.array(np.arange(8, dtype=np.float32))
    c = a.__dlpack__()
    managed = ctypes.cast(_api.PyCapsule_GetPointer(c, b"dltensor"), ctypes.POINTER(_dlpack.DLManagedTensor))
    t = managed.contents.dl_tensor
    assert t.ndim == 1 and t.shape[0] == 8 and not t.strides and t.byte_offset == 0
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (2, 32, 1)
    assert t.data == a.data_ptr()
    assert _api.PyCapsule_SetName(c, b"used_dltensor") == 0
    del c
    assert settle() == base + 1, "a consumed capsule left the tensor to its consumer"
    # Called as a C consumer calls it: with the GIL held (PYFUNCTYPE keeps it).
    deleter = ctypes.PYFUNCTYPE(None, ctypes.POINTER(_dlpack.DLManagedTensor))(
        ctypes.cast(managed.contents.deleter, ctypes.c_void_p).value)
    deleter(managed)
    assert settle() == base
    deleter(managed)  # a buggy consumer calling twice: nothing is released twice
    assert settle() == base
    np.testing.assert_array_equal(a.get(), np.arange(8))
    a.release()


def test_deleter_called_without_the_gil_from_any_thread(dev):
    """A consumer may call the deleter without the GIL, from a thread of its own (PyTorch
    frees a tensor's storage so): the deleter takes the GIL itself, and the export is given
    back once."""
    import threading

    base = settle()
    a = dev.array(np.arange(8, dtype=np.float32))
    managed = []
    for _ in range(2):
        c = a.__dlpack__()
        managed.append(ctypes.cast(_api.PyCapsule_GetPointer(c, b"dltensor"), ctypes.POINTER(_dlpack.DLManagedTensor)))
        assert _api.PyCapsule_SetName(c, b"used_dltensor") == 0
        del c
    assert settle() == base + 2
    # CFUNCTYPE releases the GIL for the call, as a C consumer without it calls.
    proto = ctypes.CFUNCTYPE(None, ctypes.POINTER(_dlpack.DLManagedTensor))
    deleter = proto(ctypes.cast(managed[0].contents.deleter, ctypes.c_void_p).value)
    deleter(managed[0])
    assert settle() == base + 1
    t = threading.Thread(target=deleter, args=(managed[1],))
    t.start()
    t.join()
    assert settle() == base
    np.testing.assert_array_equal(a.get(), np.arange(8))
    a.release()


def test_release_waits_for_the_last_export(dev):
    on(dev, "cpu")
    base = settle()
    used = dev.memory_usage().bytes_in_use
    a = dev.array(np.arange(1024, dtype=np.float32))
    host = np.from_dlpack(a)
    a.release()
    assert a.released
    with pytest.raises(ValueError, match="released"):
        a.get()
    # The memory is still the consumer's: it is not back in the pools, and still holds the data.
    assert dev.memory_usage().bytes_in_use > used
    np.testing.assert_array_equal(host, np.arange(1024))
    del host
    assert settle() == base
    assert dev.memory_usage().bytes_in_use == used, "the last export let go: the buffer went back"


def test_refusals(dev):
    a = dev.zeros(4, np.float32)
    with pytest.raises(BufferError, match="copy"):
        a.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="DLPack device"):
        a.__dlpack__(dl_device=(99, 3))
    if dev.platform == "cpu":
        with pytest.raises(BufferError, match="stream"):
            a.__dlpack__(stream=1)
        assert not hasattr(a, "__cuda_array_interface__"), "only nvidia memory is CUDA memory"
    with pytest.raises(BufferError, match="stream"):
        a.__dlpack__(stream="default")
    big = dev.array(np.arange(4, dtype=">i4").astype(np.int32)).view(np.dtype(">i4"))
    with pytest.raises(BufferError, match="DLPack data type"):
        big.__dlpack__()
    assert settle() == 0 or True  # refusals leave nothing exported (checked below)
    before = _dlpack.live_exports()
    a.release()
    with pytest.raises(ValueError, match="released"):
        a.__dlpack__()
    with pytest.raises(ValueError, match="released"):
        a.data_ptr()
    assert _dlpack.live_exports() == before


def test_carried_failure_is_not_exported(dev):
    k = cubehip.Kernel(BROKEN, "broken", block=1, device=dev, compile=False)
    inp, out = dev.array(np.arange(4, dtype=np.int32)), dev.zeros(4, np.int32)
    before = settle()
    try:
        k(1, inp, out)
    except cubehip.CompileError:
        pass
    with pytest.raises(cubehip.CarriedFailure):
        out.__dlpack__()
    with pytest.raises(cubehip.CarriedFailure):
        out.data_ptr()
    assert settle() == before
    inp.__dlpack__()  # the launch's input carries nothing
    inp.release(), out.release()


def test_data_ptr_is_stable_and_distinct(dev):
    a, b = dev.zeros(16, np.uint8), dev.zeros(16, np.uint8)
    pa, pb = a.data_ptr(), b.data_ptr()
    assert pa and pb and (pa + 16 <= pb or pb + 16 <= pa)
    assert a.data_ptr() == pa and a.reshape(4, 4).data_ptr() == pa
    a.release(), b.release()


# --- the GPU consumers -------------------------------------------------------------------


def test_cupy(dev):
    on(dev, "nvidia")
    cp = pytest.importorskip("cupy")
    a = dev.array(np.arange(6, dtype=np.float32))
    x = cp.from_dlpack(a)
    assert x.data.ptr == a.data_ptr()
    np.testing.assert_array_equal(cp.asnumpy(x), np.arange(6))
    x += 1  # CuPy writes in place...
    cp.cuda.get_current_stream().synchronize()  # ...and finishes before cubehip reads
    np.testing.assert_array_equal(a.get(), np.arange(6) + 1)
    y = cp.asarray(a)  # through __cuda_array_interface__
    assert y.data.ptr == a.data_ptr()
    a.release()  # deferred for the DLPack tensor: x still reads valid memory
    np.testing.assert_array_equal(cp.asnumpy(x), np.arange(6) + 1)
    del x, y
    settle()


def test_torch(dev):
    on(dev, "nvidia")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")
    a = dev.array(np.arange(6, dtype=np.float32))
    t = torch.from_dlpack(a)
    assert t.is_cuda and t.data_ptr() == a.data_ptr()
    t.mul_(2)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(a.get(), np.arange(6) * 2)
    u = torch.as_tensor(a, device="cuda")  # through __cuda_array_interface__
    assert u.data_ptr() == a.data_ptr()
    a.release()
    assert t.sum().item() == 30.0
    del t, u
    settle()


def test_freed_while_an_exception_is_in_flight(dev):
    """Tensors and capsules freed as a frame unwinds run their deleter with an exception set:
    the exception must come through intact, and the exports still be given back."""
    base = settle()
    a = dev.array(np.arange(4, dtype=np.float32))

    def take_then_fail():
        held = np.from_dlpack(a) if dev.platform == "cpu" else None  # noqa: F841
        unconsumed = a.__dlpack__()  # noqa: F841
        raise KeyError("the caller's own error")

    with pytest.raises(KeyError, match="the caller's own error"):
        take_then_fail()
    assert settle() == base
    a.release()


# --- Import: other libraries' arrays as cubehip arrays, without copying ----------------------

import threading  # noqa: E402
import time  # noqa: E402
import weakref  # noqa: E402


def eventually(cond, what, timeout=5.0):
    """The release runs on a thread of libcubehip's once the device is done: wait for it."""
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            pytest.fail(f"not after {timeout}s: {what}")
        gc.collect()
        time.sleep(0.002)


class Owner(np.ndarray):
    """A numpy array a weak reference can follow: its death is the DLPack deleter's work."""


def owned(a):
    return np.ascontiguousarray(a).view(Owner)


def test_numpy_import_round_trip(dev):
    on(dev, "cpu")
    x = owned(np.arange(12, dtype=np.float32).reshape(3, 4))
    a = cubehip.from_dlpack(x, device=dev)
    assert a.shape == (3, 4) and a.dtype == np.float32
    assert a.data_ptr() == x.ctypes.data, "the array is the producer's memory, not a copy"
    np.testing.assert_array_equal(a.get(), x)
    # And back out: numpy reads the same memory through cubehip's export.
    np.testing.assert_array_equal(np.from_dlpack(a), x)
    assert cubehip.asarray(a, device=dev) is a
    assert cubehip.from_dlpack(a, device=dev) is a
    a.release()


def test_numpy_import_shared_writes(dev):
    on(dev, "cpu")
    k = cubehip.Kernel(INC, "inc", block=64, device=dev)
    x = owned(np.zeros(100, np.float32))
    a = cubehip.asarray(x, device=dev)
    k(2, a, 100)
    a.sync()
    np.testing.assert_array_equal(x, 1, err_msg="a launch through cubehip writes the producer's array")
    x[7] = 50
    assert a.get()[7] == 50, "the producer's write shows through cubehip"
    a.set(np.full(100, 3, np.float32))
    a.sync()
    np.testing.assert_array_equal(x, 3)
    a.release()


def test_numpy_import_keeps_producer_alive(dev):
    on(dev, "cpu")
    x = owned(np.arange(64, dtype=np.int32))
    alive = weakref.ref(x)
    a = cubehip.asarray(x, device=dev)
    del x
    gc.collect()
    assert alive() is not None, "the producer went while cubehip uses its memory"
    np.testing.assert_array_equal(a.get(), np.arange(64))
    del a
    eventually(lambda: alive() is None, "the producer is freed once the cubehip array is gone")


def test_numpy_import_released_after_graph(dev):
    on(dev, "cpu")
    k = cubehip.Kernel(INC, "inc", block=64, device=dev)
    x = owned(np.zeros(64, np.float32))
    alive = weakref.ref(x)
    s = dev.stream(3)
    a = cubehip.from_dlpack(x, device=dev, stream=s)
    with s.capture() as g:
        k(1, a, 64, stream=s)
    a.release()
    g.replay()
    s.sync()
    np.testing.assert_array_equal(x, 1, err_msg="the replay wrote the producer's memory")
    del x
    time.sleep(0.02)
    gc.collect()
    assert alive() is not None, "the graph still uses the memory"
    g.destroy()
    eventually(lambda: alive() is None, "the producer is freed once the graph is destroyed")


def test_numpy_import_deleter_once(dev):
    """A capsule the import took is renamed, so its destructor leaves the deleter to cubehip,
    which calls it once; a refused one is not, so the capsule's destructor calls it."""
    on(dev, "cpu")
    x = owned(np.ones(16, np.float64))
    base = sys.getrefcount(x)
    a = cubehip.from_dlpack(x, device=dev)
    assert sys.getrefcount(x) == base + 1, "the tensor holds one reference to the producer"
    a.release()
    eventually(lambda: sys.getrefcount(x) == base, "the deleter gave the reference back")
    time.sleep(0.02)
    assert sys.getrefcount(x) == base, "the deleter ran once"

    y = owned(np.ones((4, 4), np.float32))[:, ::2]
    base = sys.getrefcount(y)
    try:
        cubehip.from_dlpack(y, device=dev)
    except BufferError as e:  # not pytest.raises: its traceback would keep the capsule
        assert "not C-contiguous" in str(e)
    else:
        pytest.fail("a strided array was imported")
    gc.collect()
    assert sys.getrefcount(y) == base, "a refused capsule is freed by its own destructor"


def test_import_errors(dev):
    on(dev, "cpu")
    with pytest.raises(BufferError, match="not C-contiguous"):
        cubehip.asarray(np.zeros((4, 4), np.float32).T, device=dev)
    with pytest.raises(TypeError, match="shares no memory"):
        cubehip.asarray([1, 2, 3], device=dev)
    with pytest.raises(TypeError, match="not a DLPack producer"):
        cubehip.from_dlpack(object(), device=dev)
    with pytest.raises(TypeError, match="cubehip.Device"):
        cubehip.from_dlpack(np.zeros(4), device="cpu")
    with pytest.raises(BufferError, match="copy=True refused"):
        cubehip.from_dlpack(np.zeros(4), device=dev, copy=True)
    # Empty tensors share no memory: an empty array of cubehip's own.
    e = cubehip.asarray(np.zeros((0, 3), np.float32), device=dev)
    assert e.shape == (0, 3) and e.get().shape == (0, 3)


class Fake:
    """A DLPack producer of any device type and data type, over a numpy buffer. As DLPack
    requires of a producer, the tensor (and its memory) lives until its deleter is called:
    every Fake is kept in _fakes, and the deleter counts its calls in deleted."""

    def __init__(self, dev_type=1, dev_id=0, code=2, bits=32, lanes=1, n=4):
        self.mem = np.zeros(n * 8, np.uint8)
        self.dl = (dev_type, dev_id)
        self.shape = (ctypes.c_int64 * 1)(n)
        self.deleted = 0
        self.deleter = _dlpack._Deleter(self._delete)
        self.t = _dlpack.DLManagedTensor(
            _dlpack.DLTensor(self.mem.ctypes.data, _dlpack.DLDevice(dev_type, dev_id), 1, _dlpack.DLDataType(code, bits, lanes), self.shape, None, 0),
            None,
            self.deleter,
        )
        _fakes.append(self)

    def _delete(self, _):
        self.deleted += 1

    def __dlpack_device__(self):
        return self.dl

    def __dlpack__(self, stream=None, max_version=None):
        return _api.PyCapsule_New(ctypes.addressof(self.t), b"dltensor", None)


_fakes = []
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_New.restype = ctypes.py_object


def test_import_wrong_device_and_dtype(dev):
    want = {"cpu": 1, "nvidia": 2, "amd": 10}[dev.platform]
    other = 2 if want != 2 else 10
    with pytest.raises(BufferError, match="needs"):
        cubehip.from_dlpack(Fake(dev_type=other), device=dev)
    if dev.platform != "cpu":
        with pytest.raises(BufferError, match="needs"):
            cubehip.from_dlpack(Fake(dev_type=want, dev_id=dev.index + 1), device=dev)
    for code, bits, lanes in [(4, 16, 1), (2, 32, 4), (2, 12, 1), (9, 8, 1), (0, 24, 1), (6, 16, 1), (2, 128, 1), (5, 32, 1)]:
        with pytest.raises(BufferError, match="data type"):
            cubehip.from_dlpack(Fake(dev_type=want, dev_id=0 if dev.platform == "cpu" else dev.index, code=code, bits=bits, lanes=lanes), device=dev)
    if dev.platform == "cpu":
        f = Fake(code=1, bits=16)
        a = cubehip.from_dlpack(f, device=dev)
        assert a.dtype == np.uint16 and a.shape == (4,)
        assert f.deleted == 0
        a.release()
        eventually(lambda: f.deleted == 1, "the producer's deleter is called")
        time.sleep(0.01)
        assert f.deleted == 1, "once"


def test_numpy_import_on_gpu_refused(dev):
    if dev.platform == "cpu":
        pytest.skip("the cpu device's memory is host memory: numpy arrays are imported there")
    with pytest.raises(BufferError, match="Device.array"):
        cubehip.asarray(np.zeros(4, np.float32), device=dev)


def test_import_gc_storm(dev):
    """Many imports, launches and drops, from two threads: every producer is freed and the
    device's memory usage is back at its baseline."""
    on(dev, "cpu")
    k = cubehip.Kernel(INC, "inc", block=64, device=dev)
    k(1, dev.zeros(64, np.float32), 64)
    dev.sync()
    gc.collect()
    base = dev.memory_usage()
    refs = []

    def storm(sid):
        for i in range(150):
            x = owned(np.zeros(64 + i, np.float32))
            refs.append(weakref.ref(x))
            a = cubehip.asarray(x, device=dev, stream=sid)
            k(2, a, 64 + i, stream=sid)
            if i % 3 == 0:
                a.get(stream=sid)
            del a, x

    threads = [threading.Thread(target=storm, args=(sid,)) for sid in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    dev.sync(0)
    dev.sync(1)
    dev.memory_cleanup()
    eventually(lambda: all(r() is None for r in refs), "every producer freed")
    assert dev.memory_usage().bytes_in_use == base.bytes_in_use
    assert dev.memory_usage().number_allocs == base.number_allocs


def test_import_device_close_releases(dev):
    on(dev, "cpu")
    d = cubehip.Device("cpu")
    x = owned(np.ones(8, np.float32))
    alive = weakref.ref(x)
    a = cubehip.asarray(x, device=d)
    del x
    d.close()
    gc.collect()
    assert alive() is None, "close released the import before returning"
    with pytest.raises(Exception):
        a.get()


def test_cupy_import(dev):
    on(dev, "nvidia", "amd")
    cp = pytest.importorskip("cupy")
    k = cubehip.Kernel(INC, "inc", block=64, device=dev)
    x = cp.arange(256, dtype=cp.float32)
    alive = weakref.ref(x)
    a = cubehip.from_dlpack(x, device=dev)
    assert a.data_ptr() == x.data.ptr
    k(4, a, 256)
    a.sync()
    cp.testing.assert_array_equal(x, cp.arange(256, dtype=cp.float32) + 1)
    x[0] = 99
    cp.cuda.get_current_stream().synchronize()
    assert a.get()[0] == 99
    del x
    gc.collect()
    assert alive() is not None
    a.release()
    eventually(lambda: alive() is None, "the CuPy array is freed once cubehip lets go")
    with pytest.raises(BufferError, match="not C-contiguous"):
        cubehip.from_dlpack(cp.zeros((8, 8), cp.float32)[:, ::2], device=dev)


def test_torch_import(dev):
    on(dev, "nvidia", "amd")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no GPU here")
    k = cubehip.Kernel(INC, "inc", block=64, device=dev)
    x = torch.zeros(256, dtype=torch.float32, device=f"cuda:{dev.index}")
    x += 5  # pending work of torch's stream, ordered before cubehip's by __dlpack__'s stream
    a = cubehip.asarray(x, device=dev)
    assert a.data_ptr() == x.data_ptr()
    k(4, a, 256)
    a.sync()
    assert torch.all(x == 6).item()
    a.release()
    with pytest.raises(BufferError, match="not C-contiguous"):
        cubehip.from_dlpack(torch.zeros(8, 8, device=f"cuda:{dev.index}").t(), device=dev)
    with pytest.raises(BufferError, match="needs"):
        cubehip.from_dlpack(torch.zeros(4), device=dev)


class CAIOnly:
    """A producer that speaks __cuda_array_interface__ only (as Numba's arrays do)."""

    def __init__(self, iface):
        self.__cuda_array_interface__ = iface


def test_cuda_array_interface_import(dev):
    on(dev, "nvidia")
    k = cubehip.Kernel(INC, "inc", block=64, device=dev)
    owner = dev.zeros(64, np.float32)
    x = CAIOnly(owner.__cuda_array_interface__)
    alive = weakref.ref(x)
    a = cubehip.asarray(x, device=dev)
    assert a.data_ptr() == owner.data_ptr()
    k(1, a, 64)
    a.sync()
    np.testing.assert_array_equal(owner.get(), 1)
    del x
    gc.collect()
    assert alive() is not None, "the producer is kept while cubehip uses its memory"
    a.release()
    eventually(lambda: alive() is None, "the producer is given back once cubehip lets go")
    # The interface's stream (the device's export stream here; 1 the legacy default stream)
    # is waited for on the device; 0 is no stream.
    ours = owner.__cuda_array_interface__
    assert type(ours["stream"]) is int and ours["stream"] > 2
    for waiting in (ours, dict(ours, stream=1)):
        b = cubehip.asarray(CAIOnly(waiting), device=dev)
        assert b.data_ptr() == owner.data_ptr()
        b.release()
    with pytest.raises(BufferError, match="is no stream"):
        cubehip.asarray(CAIOnly(dict(ours, stream=0)), device=dev)
    strided = dict(owner.__cuda_array_interface__, shape=(8, 4), strides=(32, 8))
    with pytest.raises(BufferError, match="not C-contiguous"):
        cubehip.asarray(CAIOnly(strided), device=dev)


def test_import_released_on_the_releasing_thread_when_unused(dev):
    """An import whose memory the device no longer uses is given back by the call that
    lets go of the array, on its thread (CUBEHIP_IMPORT_RELEASE_ON_CALLER): the producer is
    gone when release() returns, with no library thread taking the interpreter lock. With
    work still queued on the memory the deleter waits for it (the tests above)."""
    on(dev, "cpu")
    k = cubehip.Kernel(INC, "inc", block=64, device=dev)
    x = owned(np.zeros(64, np.float32))
    alive = weakref.ref(x)
    a = cubehip.from_dlpack(x, device=dev)
    k(1, a, 64)
    a.sync()
    del x
    a.release()
    assert alive() is None, "the deleter ran before release() returned"

    y = owned(np.zeros(64, np.float32))
    alive = weakref.ref(y)
    b = cubehip.from_dlpack(y, device=dev)
    del y
    del b  # the array's own end (DeviceArray.__del__) takes the same path
    assert alive() is None, "the deleter ran when the array was collected"


SPIN = '''extern "C" __global__ void spin(float* out, unsigned long long n) {
    volatile float acc = 0.0f;
    for (unsigned long long i = 0; i < n; i++) acc = acc + 1.0f;
    out[0] = acc;
}'''


def test_shared_stream_launch_is_on_the_stream_when_the_call_returns(dev):
    """Once a stream's native handle is out, a launch is on that stream when the call
    returns: a copy CuPy queues on the handle right after it reads what the kernel wrote.
    (A launch through cubehip's launch queue reached the driver later, and CuPy's events
    on the stream timed 9.9 µs for a 12.7 µs kernel.)"""
    on(dev, "nvidia")
    cp = pytest.importorskip("cupy")
    native = cubehip._ffi.fast_stream_native_handle(dev._live(), 1)
    assert native > 0
    k = cubehip.Kernel(SPIN, "spin", block=1, device=dev)
    out = dev.zeros(1, np.float32, stream=1)
    ptr = out.data_ptr()
    host = cp.cuda.alloc_pinned_memory(4)
    view = np.frombuffer(host, np.float32, 1)
    for i in range(300):
        out.set(np.zeros(1, np.float32), stream=1)
        n = 100 + i
        k(1, out, np.uint64(n), stream=1)
        cp.cuda.runtime.memcpyAsync(host.ptr, ptr, 4, cp.cuda.runtime.memcpyDeviceToHost, native)
        cp.cuda.runtime.streamSynchronize(native)
        assert view[0] == float(n), f"round {i}: CuPy's copy ran before the launch"
    out.release()
