"""Raw device pointers as kernel arguments, as CuPy takes them: a MemoryPointer (a.data,
a.data + n), an int address, any object with .ptr or .data.ptr. Each is traced back to the
live array it points into (whose reads then carry the launch's failure), and anything the
device cannot name is refused with the address named, nothing queued."""

import ctypes

import numpy as np
import pytest

import cubehip

FILL = r"""
extern "C" __global__ void fill(float* p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}
"""

FILL_THEN_TRAP = r"""
extern "C" __global__ void fill_trap(float* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = 1.0f;
  if (i == 0) __trap();
}
"""


@pytest.fixture(scope="module")
def fill(dev):
    return cubehip.Kernel(FILL, "fill", block=16, device=dev)


def _zeros(dev, n=64):
    return dev.array(np.zeros(n, np.float32))


def _expect(a, lo, hi, v):
    want = np.zeros(a.size, np.float32)
    want[lo:hi] = v
    np.testing.assert_array_equal(a.get(), want)


def test_memory_pointer_is_the_array_from_a_byte(dev, fill):
    a = _zeros(dev)
    p = a.data
    assert isinstance(p, cubehip.MemoryPointer)
    assert p.ptr == a.data_ptr() == int(p)
    assert (a.data + 64).ptr == a.data_ptr() + 64 and (64 + a.data).ptr == a.data_ptr() + 64
    assert (a.data + 64 - 32).offset == 32
    fill(1, a.data + 16 * 4, np.float32(3), 16)
    _expect(a, 16, 32, 3)


def test_int_address_inside_a_live_array(dev, fill):
    a, b = _zeros(dev), _zeros(dev)
    fill(1, a.data_ptr() + 8 * 4, np.float32(2), 16)  # through the extension's call and back
    fill(1, np.uint64(b.data_ptr()), 5.0, 4)
    _expect(a, 8, 24, 2)
    _expect(b, 0, 4, 5)


def test_objects_holding_a_pointer(dev, fill):
    a = _zeros(dev)

    class Ptr:
        def __init__(self, ptr):
            self.ptr = ptr

    class Holder:
        def __init__(self, ptr):
            self.data = Ptr(ptr)

    fill(1, Ptr(a.data_ptr()), np.float32(1), 4)
    fill(1, Holder(a.data_ptr() + 4 * 4), np.float32(7), 4)
    want = np.zeros(64, np.float32)
    want[:4], want[4:8] = 1, 7
    np.testing.assert_array_equal(a.get(), want)


def test_cupy_call_with_data_ptr():
    # As a CuPy program: the kernel and the array on the current device.
    k = cubehip.RawKernel(FILL, "fill")
    a = _zeros(cubehip.get_device())
    k((1,), (16,), (a.data.ptr + 4, np.float32(9), np.int32(15)))
    want = np.zeros(64, np.float32)
    want[1:16] = 9
    np.testing.assert_array_equal(a.get(), want)


def test_an_implicit_kernel_follows_a_memory_pointer(dev):
    k = cubehip.RawKernel(FILL, "fill")
    a = _zeros(dev)
    k((1,), (16,), (a.data + 8, np.float32(4), np.int32(2)))
    want = np.zeros(64, np.float32)
    want[2:4] = 4
    np.testing.assert_array_equal(a.get(), want)


def test_a_failure_is_carried_by_the_array_a_pointer_names(dev):
    if dev.platform != "cpu":
        pytest.skip("a GPU's fault is sticky: it would end every later test's device")
    k = cubehip.Kernel(FILL_THEN_TRAP, "fill_trap", block=16, device=dev)
    a = _zeros(dev)
    k(1, a.data_ptr() + 16, 8)
    with pytest.raises(cubehip.CarriedFailure) as e:
        a.get()
    assert "fill_trap" in str(e.value)


def _refused(fill, arg, *words):
    with pytest.raises(ValueError) as e:
        fill(1, arg, np.float32(1), 4)
    msg = str(e.value)
    assert "fill: argument 0 (p)" in msg, msg
    for w in words:
        assert w in msg, msg
    return msg


def test_refused_addresses_name_what_was_given(dev, fill):
    a = _zeros(dev)
    host = np.zeros(16, np.float32)
    _refused(fill, host.ctypes.data, f"{host.ctypes.data:#x}", "lies in no live array")
    stack = ctypes.c_float * 4
    local = stack()
    _refused(fill, ctypes.addressof(local), f"{ctypes.addressof(local):#x}")
    _refused(fill, 0, "address 0x0")
    _refused(fill, -8, "address -8")
    gone = _zeros(dev)
    at = gone.data_ptr()
    gone.release()
    _refused(fill, at, f"{at:#x}", "lies in no live array")
    _refused(fill, a.data + a.nbytes, "outside it")
    _refused(fill, a.data - 4, "outside it")
    np.testing.assert_array_equal(a.get(), np.zeros(64, np.float32))


def test_refused_kinds_are_type_errors(fill):
    for bad in (True, "0x1000", 1.5, object()):
        with pytest.raises(TypeError) as e:
            fill(1, bad, np.float32(1), 4)
        assert "fill: argument 0 (p)" in str(e.value)


def test_another_devices_memory_is_refused(dev, fill):
    other = cubehip.Device(dev.platform, dev.index)
    try:
        b = other.array(np.zeros(16, np.float32))
        _refused(fill, b.data_ptr(), f"{b.data_ptr():#x}")
        _refused(fill, b.data, "not of the kernel's")  # a kernel made with device= stays there
    finally:
        other.close()


def test_cuda_array_interface_off_nvidia_is_refused(dev, fill):
    if dev.platform == "nvidia":
        pytest.skip("on nvidia such an object is imported (test_interop covers the import)")

    class Foreign:
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (0x1000, False), "version": 3}

    _refused(fill, Foreign(), "__cuda_array_interface__", dev.platform)


@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_another_librarys_array_as_a_pointer_on_nvidia(dev, fill, library):
    """On nvidia a CuPy array or a PyTorch tensor passed for a pointer parameter is imported
    for the launch (its __cuda_array_interface__) and written in place; its own library
    reads what the kernel wrote."""
    if dev.platform != "nvidia":
        pytest.skip("__cuda_array_interface__ is CUDA memory: the nvidia platform's")
    lib = pytest.importorskip(library)
    if library == "cupy":
        x = lib.zeros(64, dtype=lib.float32)
    else:
        if not lib.cuda.is_available():
            pytest.skip("PyTorch sees no CUDA device")
        x = lib.zeros(64, dtype=lib.float32, device="cuda")
    fill(4, x, np.float32(6), 40)
    dev.sync()
    got = lib.asnumpy(x) if library == "cupy" else x.cpu().numpy()
    want = np.zeros(64, np.float32)
    want[:40] = 6
    np.testing.assert_array_equal(got, want)
