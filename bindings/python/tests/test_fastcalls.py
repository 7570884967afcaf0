"""The hot calls (_ffi.fast_*), the extension's (cubehip._native): the package's launch, sync,
alloc, release, read and replay go through them, so every other test drives them too; these check what only
they add: their argument handling, their results, and that the package really uses them."""

import ctypes

import numpy as np
import pytest

import cubehip
from cubehip import _ffi

FAST = ("launch", "device_sync", "buffer_alloc", "buffer_release", "buffer_read", "graph_replay", "stream_native_handle")
ARITY = {"launch": 5, "device_sync": 2, "buffer_alloc": 3, "buffer_release": 1, "buffer_read": 5, "graph_replay": 1,
         "stream_native_handle": 2}


def test_they_are_the_extensions():
    assert _ffi.native is not None, _ffi.native_missing
    assert _ffi.native.__name__ == "cubehip._native"
    for name in FAST:
        f = getattr(_ffi, "fast_" + name)
        assert f is getattr(_ffi.native, name), name


@pytest.mark.parametrize("name", FAST)
def test_a_wrong_argument_raises_and_calls_nothing(name):
    f = getattr(_ffi, "fast_" + name)
    n = ARITY[name]
    with pytest.raises(TypeError, match=f"{name} takes {n} arguments"):
        f(*([0] * (n + 1)))
    with pytest.raises(TypeError):
        f(*(["0"] + [0] * (n - 1)))
    with pytest.raises(TypeError):
        f(*([1.5] + [0] * (n - 1)))
    with pytest.raises(OverflowError):
        f(*([-1] + [0] * (n - 1)))
    with pytest.raises(OverflowError):
        f(*([2**64] + [0] * (n - 1)))


@pytest.mark.parametrize("name", FAST)
def test_a_made_up_handle_is_an_invalid_handle_status(name):
    f = getattr(_ffi, "fast_" + name)
    st = f(*([0x0100_0000_dead_beef] + [0] * (ARITY[name] - 1)))
    if name in ("buffer_alloc", "stream_native_handle"):
        assert st == -_ffi.ERROR_INVALID_HANDLE
    else:
        assert st == _ffi.ERROR_INVALID_HANDLE


def test_alloc_returns_a_handle_or_minus_the_status(dev):
    h = _ffi.fast_buffer_alloc(dev.handle, 0, 64)
    assert h > 0
    size = ctypes.c_uint64()
    assert _ffi.lib.cubehip_buffer_size(h, ctypes.byref(size)) == 0 and size.value == 64
    assert _ffi.fast_buffer_release(h) == 0
    assert _ffi.fast_buffer_release(h) == _ffi.ERROR_INVALID_HANDLE
    # Larger than any device: out of memory, as a driver says, named in the exception.
    assert _ffi.fast_buffer_alloc(dev.handle, 0, 1 << 62) == -2
    with pytest.raises(cubehip.CubehipError, match="hipErrorOutOfMemory") as e:
        dev.alloc(1 << 62)
    assert e.value.status == 2


def test_read_and_launch_through_them(dev, saxpy):
    x = dev.array(np.arange(64, dtype=np.float32))
    y = dev.array(np.ones(64, dtype=np.float32))
    saxpy(1, x, y, 2.0, 64)
    out = np.empty(64, np.float32)
    assert _ffi.fast_buffer_read(y.handle, 0, 0, out.ctypes.data, out.nbytes) == 0
    np.testing.assert_array_equal(out, 2.0 * np.arange(64, dtype=np.float32) + 1)
    # A read past the end is refused, and nothing is written.
    out[:] = 7
    assert _ffi.fast_buffer_read(y.handle, 0, 8, out.ctypes.data, out.nbytes) == _ffi.ERROR_INVALID_ARGUMENT
    assert (out == 7).all()
    assert _ffi.fast_device_sync(dev.handle, 0) == 0


def test_a_destroyed_kernel_launch_raises(dev):
    k = cubehip.Kernel('extern "C" __global__ void nothing(float* p) {}', "nothing", device=dev)
    a = dev.empty(4, np.float32)
    k(1, a)
    k.destroy()
    with pytest.raises((cubehip.InvalidHandle, ValueError), match="destroyed|invalid"):
        k(1, a)


CTYPES_RUN = r"""
import ctypes
import numpy as np
import cubehip
from cubehip import _dlpack, _ffi

assert _ffi.native is None and _ffi.native_missing == "CUBEHIP_PYTHON_NATIVE=0"
assert type(_ffi.fast_device_sync).__name__ != "builtin_function_or_method"
with cubehip.Device("cpu") as dev:
    assert type(dev.sync).__name__ == "method"
    k = cubehip.Kernel(SAXPY, "saxpy", block=64, device=dev)
    assert type(k).__call__ is cubehip.Kernel.__call__
    x = dev.array(np.arange(64, dtype=np.float32))
    y = dev.array(np.ones(64, dtype=np.float32))
    k(1, x, y, 2.0, 64)
    dev.sync()
    np.testing.assert_array_equal(y.get(), 2.0 * np.arange(64, dtype=np.float32) + 1)
    k((1,), x, y, np.float32(1.0), np.uint32(64))  # numpy scalars, a tuple grid
    np.testing.assert_array_equal(y.get(), 3.0 * np.arange(64, dtype=np.float32) + 1)
    try:
        k(1, x, y, 1e39, 64)
    except OverflowError as e:
        assert "does not fit" in str(e)
    else:
        raise AssertionError("a float beyond float's range was launched")
    s = dev.stream(3)
    with s.capture() as g:
        k(1, x, y, 1.0, 64, stream=s)
    g.replay()
    s.sync()
    np.testing.assert_array_equal(y.get(), 4.0 * np.arange(64, dtype=np.float32) + 1)
    w = dev.empty(64, np.float32)
    h = w.handle
    w.release()  # idle: kept by buffer_recycle, and handed out again
    z = dev.empty(64, np.float32)
    assert z.handle == h
    try:
        dev.alloc(1 << 62)
    except cubehip.CubehipError as e:
        assert e.status == 2
    else:
        raise AssertionError("an impossible allocation succeeded")

    # DLPack export through ctypes: numpy reads the memory in place, the deleter runs once,
    # a release waits for the last export, a capsule nobody took gives the array back.
    host = np.from_dlpack(y)
    assert host.__array_interface__["data"][0] == y.data_ptr()
    assert _dlpack.live_exports() == 1
    y.release()
    np.testing.assert_array_equal(host, 4.0 * np.arange(64, dtype=np.float32) + 1)
    del host
    assert _dlpack.live_exports() == 0
    c = x.__dlpack__()
    assert _dlpack.live_exports() == 1
    del c
    assert _dlpack.live_exports() == 0
    for bad in (1, -1, 0):
        try:
            x.__dlpack__(stream=bad)
        except BufferError as e:
            assert "kDLCPU" in str(e)
        else:
            raise AssertionError(f"stream {bad} taken for kDLCPU memory")
    assert type(cubehip.DeviceArray.__dlpack__).__name__ == "function"
    # A view's export counts on its base, a 0-d base (whose len() raises) too: the base's
    # release is left to it.
    z = dev.array(np.array(5, dtype=np.int32))
    zh = np.from_dlpack(z.reshape(1))
    z.release()
    assert zh[0] == 5 and _dlpack.live_exports() == 1 and _dlpack.export_count(z._exports) == 1
    del zh
    assert _dlpack.live_exports() == 0 and _dlpack.export_count(z._exports) == 0
    # Importing needs the extension (its releases run on the library's threads): refused,
    # saying why.
    try:
        cubehip.from_dlpack(np.zeros(4, np.float32), device=dev)
    except BufferError as e:
        assert "CUBEHIP_PYTHON_NATIVE=0" in str(e), e
    else:
        raise AssertionError("an import without the extension")
print("ok")
"""


def test_the_package_works_through_ctypes_alone(tmp_path):
    """Where the extension cannot be used (not built, or an interpreter that cannot load a
    stable-ABI extension), the package makes the same calls through ctypes:
    CUBEHIP_PYTHON_NATIVE=0 forces that path."""
    import os
    import subprocess
    import sys

    from conftest import SAXPY

    env = dict(os.environ, CUBEHIP_PYTHON_NATIVE="0")
    code = f"SAXPY = {SAXPY!r}\n" + CTYPES_RUN
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_bind_refuses_a_library_not_loaded(tmp_path):
    # The extension calls the library the package loaded, never a second copy of its own.
    with pytest.raises(ImportError, match="is not loaded"):
        _ffi.native.bind(str(tmp_path / "libcubehip.so"))
    with pytest.raises(TypeError):
        _ffi.native.bind(7)
    _ffi.native.bind(_ffi.library_path)  # the loaded one, again: harmless
    assert _ffi.fast_device_sync(0x0100_0000_DEAD_BEEF, 0) == _ffi.ERROR_INVALID_HANDLE
