"""A kernel's call and a device's sync as built-in functions of the extension (_launch.c's
kernel_launcher and device_syncer): the common call runs in C, every other goes to the package's Python code.
These check both halves: that the C path packs exactly what the Python path would, and that
everything it does not take reaches the Python path with its arguments and errors intact."""

import gc
import weakref

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cubehip
from cubehip import _ffi, _kernel
from cubehip._kernel import _NUMPY_FLOATS as NP_FLOATS, _NUMPY_INTS as NP_INTS

# Every scalar kind the C path packs, written back so the test reads what the kernel got.
SCALARS = r"""
extern "C" __global__ void scalars(signed char a, unsigned char b, short c, unsigned short d, int e,
                                   unsigned int f, long long g, unsigned long long h, float x, double y,
                                   long long* out, double* fout) {
    out[0] = a; out[1] = b; out[2] = c; out[3] = d; out[4] = e; out[5] = f; out[6] = g;
    out[7] = (long long)h; fout[0] = x; fout[1] = y;
}
"""
VALUES = (-128, 255, -32768, 65535, -(2**31), 2**32 - 1, -(2**63), 2**64 - 1, 1.5, -2.25)

GRID = r"""
extern "C" __global__ void where(unsigned* out) {
    unsigned i = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    out[i] = i + 1;
}
"""


@pytest.fixture(scope="module")
def scalars(dev):
    return cubehip.Kernel(SCALARS, "scalars", block=1, device=dev)


@pytest.fixture(scope="module")
def where(dev):
    return cubehip.Kernel(GRID, "where", block=1, device=dev)


def test_a_typed_kernel_and_a_device_call_built_in_functions(dev, scalars):
    assert type(type(scalars).__call__).__name__ == "builtin_function_or_method"
    assert type(dev.sync).__name__ == "builtin_function_or_method"


def test_every_scalar_kind_arrives_as_given(dev, scalars):
    out, fout = dev.zeros(8, np.int64), dev.zeros(2, np.float64)
    scalars(1, *VALUES, out, fout)
    got = out.get()
    assert got[:7].tolist() == list(VALUES[:7])
    assert int(got[7]) & (2**64 - 1) == VALUES[7]
    assert fout.get().tolist() == [1.5, -2.25]
    # The same call through the package's Python path (numpy scalars are not exact ints):
    # the same bytes arrive.
    out2, fout2 = dev.zeros(8, np.int64), dev.zeros(2, np.float64)
    typed = (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64)
    scalars(1, *(t(v) for t, v in zip(typed, VALUES)), out2, fout2)
    np.testing.assert_array_equal(out2.get(), got)
    np.testing.assert_array_equal(fout2.get(), fout.get())


@pytest.mark.parametrize("grid", [5, (5,), (2, 3), (2, 3, 2), [2, 3], np.int64(5), (np.int32(2), 3)])
def test_every_grid_form_launches_its_blocks(dev, where, grid):
    out = dev.zeros(16, np.uint32)
    where(grid, out)
    dims = [int(g) for g in (grid if isinstance(grid, (tuple, list)) else [grid])]
    n = int(np.prod(dims))
    np.testing.assert_array_equal(out.get()[:n], np.arange(1, n + 1))
    assert (out.get()[n:] == 0).all()


@pytest.mark.parametrize(
    "grid, exc",
    [(0, ValueError), (2**32, ValueError), (-1, ValueError), ((), ValueError), ((1, 1, 1, 1), ValueError),
     ((0, 1), ValueError), (True, TypeError), (1.0, TypeError), ("1", TypeError), (None, TypeError)],
)
def test_a_bad_grid_raises_as_before_and_launches_nothing(dev, where, grid, exc):
    out = dev.zeros(4, np.uint32)
    with pytest.raises(exc, match="grid"):
        where(grid, out)
    assert (out.get() == 0).all()


def test_a_bad_argument_raises_as_before(dev, scalars):
    out, fout = dev.zeros(8, np.int64), dev.zeros(2, np.float64)
    good = list(VALUES)
    for i, bad in [(0, 128), (1, -1), (4, 2**31), (5, 2**32), (7, 2**64), (7, -1)]:
        args = good.copy()
        args[i] = bad
        with pytest.raises((OverflowError, ValueError, cubehip.InvalidArgument)):
            scalars(1, *args, out, fout)
    with pytest.raises(TypeError, match="takes 12 arguments"):
        scalars(1, *good, out)
    with pytest.raises(TypeError, match="takes 12 arguments"):
        scalars(1, *good, out, fout, fout)
    with pytest.raises(TypeError):
        scalars(1, *good[:-1], "x", out, fout)
    with pytest.raises((TypeError, ValueError)):
        scalars(1, *good, np.zeros(8), fout)  # a host array where a device array goes
    with pytest.raises(TypeError, match="strem"):
        scalars(1, *good, out, fout, strem=0)  # a misspelt keyword
    with pytest.raises(TypeError, match="grid"):
        scalars()
    assert (out.get() == 0).all()


def test_bool_and_int_for_float_take_the_python_path(dev, scalars):
    out, fout = dev.zeros(8, np.int64), dev.zeros(2, np.float64)
    args = list(VALUES)
    args[8], args[9] = 3, 4  # ints where floats go: converted, as the Python path does
    args[0] = True  # a bool is not an exact int: the Python path decides
    try:
        scalars(1, *args, out, fout)
    except TypeError:
        pass  # refusing a bool is the Python path's choice too
    else:
        assert fout.get().tolist() == [3.0, 4.0]
        assert out.get()[0] == 1


def test_a_released_array_raises(dev, where):
    a = dev.zeros(4, np.uint32)
    a.release()
    with pytest.raises((ValueError, cubehip.CubehipError), match="released|invalid"):
        where(1, a)


def test_keywords_however_passed(dev, where):
    out = dev.zeros(4, np.uint32)
    where(2, out, **{})
    where(2, out, stream=None)
    where(*(2, out), **{"stream": 0})
    np.testing.assert_array_equal(out.get()[:2], [1, 2])
    with pytest.raises(TypeError):
        where(2, out, stream=0, other=1)


def test_streams_by_keyword(dev, where):
    for stream in (None, 0, 3, dev.stream(5)):
        out = dev.zeros(4, np.uint32, stream=stream)
        where(2, out, stream=stream)
        np.testing.assert_array_equal(out.get(stream=stream)[:2], [1, 2])
    with pytest.raises((TypeError, ValueError, OverflowError)):
        where(1, dev.zeros(4, np.uint32), stream=-1)
    with pytest.raises((TypeError, ValueError)):
        where(1, dev.zeros(4, np.uint32), stream="s")


def test_the_kernel_and_device_are_freed_when_unused():
    d = cubehip.Device("cpu")
    k = cubehip.Kernel(GRID, "where", block=1, device=d)
    out = d.zeros(4, np.uint32)
    k(1, out)
    d.sync()
    kr, dr = weakref.ref(k), weakref.ref(d)
    del k
    assert kr() is None  # by its reference count, no cycle collection needed
    out.release()
    del out
    h = d.handle
    del d
    assert dr() is None
    assert h != 0
    gc.collect()


def test_a_closed_device_and_a_destroyed_kernel(where):
    d = cubehip.Device("cpu")
    k = cubehip.Kernel(GRID, "where", block=1, device=d)
    out = d.zeros(4, np.uint32)
    k.destroy()
    with pytest.raises((cubehip.InvalidHandle, ValueError), match="destroyed|invalid"):
        k(1, out)
    d.close()
    with pytest.raises(cubehip.DeviceClosed):
        d.sync()
    with pytest.raises(cubehip.DeviceClosed):
        d.sync(0)


def test_sync_with_arguments_goes_to_the_method(dev):
    dev.sync()
    dev.sync(0)
    dev.sync(dev.stream(3))
    dev.sync(stream=2)
    dev.stream(4).sync()
    with pytest.raises((TypeError, ValueError, OverflowError)):
        dev.sync(-1)


def test_a_refused_sync_reaches_failed_once_with_its_status():
    seen = []

    def slow(*a, **kw):
        seen.append(("slow", a, kw))
        return "slow"

    def failed(st):
        seen.append(("failed", st))
        raise cubehip.InvalidHandle(st, "made up", "test")

    sync = _ffi.native.device_syncer(0x0100_0000_DEAD_BEEF, slow, failed)
    with pytest.raises(cubehip.InvalidHandle):
        sync()
    assert seen == [("failed", _ffi.ERROR_INVALID_HANDLE)]
    assert sync(1, stream=2) == "slow"
    assert seen[-1] == ("slow", (1,), {"stream": 2})


def test_a_refused_launch_goes_to_slow_with_the_same_arguments(dev):
    seen = []

    def slow(*a, **kw):
        seen.append((a, kw))

    a = dev.zeros(4, np.float32)
    launch = _ffi.native.kernel_launcher(0x0300_0000_DEAD_BEEF, bytes([_ffi.ARG_BUFFER, _ffi.ARG_I32]), cubehip.DeviceArray, slow, NP_INTS, NP_FLOATS,
                                         (None, None))
    launch((2, 1), a, 7, stream=3)  # a made-up kernel: the library refuses it, slow decides
    assert seen == [(((2, 1), a, 7), {"stream": 3})]
    launch(1, a)  # a wrong count never reaches the library
    assert seen[-1] == ((1, a), {})


def test_the_makers_check_their_arguments():
    with pytest.raises(TypeError):
        _ffi.native.kernel_launcher(1, b"\x01", cubehip.DeviceArray, print, NP_INTS, NP_FLOATS)
    with pytest.raises(TypeError):
        _ffi.native.kernel_launcher(1, "not bytes", cubehip.DeviceArray, print, NP_INTS, NP_FLOATS, (None,))
    with pytest.raises(TypeError, match="tuples"):
        _ffi.native.kernel_launcher(1, b"\x01", cubehip.DeviceArray, print, list(NP_INTS), NP_FLOATS, (None,))
    with pytest.raises(TypeError, match="kind"):
        _ffi.native.kernel_launcher(1, bytes([_ffi.ARG_BYTES]), cubehip.DeviceArray, print, NP_INTS, NP_FLOATS, (None,))
    with pytest.raises(TypeError, match="at most"):
        _ffi.native.kernel_launcher(1, bytes([_ffi.ARG_I32]) * 65, cubehip.DeviceArray, print, NP_INTS, NP_FLOATS, (None,) * 65)
    f32 = (np.dtype(np.float32),)
    with pytest.raises(TypeError, match="an entry per parameter"):
        _ffi.native.kernel_launcher(1, b"\x01\x07", cubehip.DeviceArray, print, NP_INTS, NP_FLOATS, (f32,))
    with pytest.raises(TypeError, match="an entry per parameter"):
        _ffi.native.kernel_launcher(1, b"\x01", cubehip.DeviceArray, print, NP_INTS, NP_FLOATS, [f32])
    with pytest.raises(TypeError, match=r"dtypes\[1\]"):  # a scalar has no element type
        _ffi.native.kernel_launcher(1, b"\x01\x07", cubehip.DeviceArray, print, NP_INTS, NP_FLOATS, (f32, f32))
    with pytest.raises(TypeError, match=r"dtypes\[0\]"):
        _ffi.native.kernel_launcher(1, b"\x01", cubehip.DeviceArray, print, NP_INTS, NP_FLOATS, (f32 * 5,))
    with pytest.raises(TypeError, match=r"dtypes\[0\]"):
        _ffi.native.kernel_launcher(1, b"\x01", cubehip.DeviceArray, print, NP_INTS, NP_FLOATS, ((),))
    with pytest.raises(OverflowError):
        _ffi.native.device_syncer(-1, print, print)
    with pytest.raises(TypeError):
        _ffi.native.device_syncer(1, print)


def test_threads_launch_through_one_kernel(dev, where):
    import threading

    outs = [dev.zeros(8, np.uint32) for _ in range(8)]

    def work(o):
        for _ in range(200):
            where(8, o)

    ts = [threading.Thread(target=work, args=(o,)) for o in outs]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    dev.sync()
    for o in outs:
        np.testing.assert_array_equal(o.get(), np.arange(1, 9))


# The same kernel with its name too far from __global__ for the package to read its
# declaration: it is launched by Kernel.__call__, the arguments saying their own types.
UNREAD = 'extern "C" __global__' + " " * 400 + GRID[GRID.index("void where") :]


@pytest.mark.parametrize("typed", [True, False], ids=["typed", "untyped"])
def test_a_grid_is_read_again_unless_it_cannot_change(dev, where, typed):
    # typed: the built-in call and its Python path; untyped: a kernel whose declaration
    # the package cannot read, launched by Kernel.__call__.
    k = where if typed else cubehip.Kernel(UNREAD, "where", block=1, io=["w"], device=dev)
    assert (k.params is None) is (not typed)

    def blocks(grid):
        out = dev.zeros(16, np.uint32)
        k(grid, out)
        return int((out.get() != 0).sum())

    g = [2]
    assert blocks(g) == 2
    g[0] = 4  # the same list, changed in place
    assert blocks(g) == 4
    # A numpy scalar, then a tuple holding one: never compared element by element.
    assert blocks(np.int64(5)) == 5
    assert blocks((np.int32(2), 3)) == 6
    n = np.array(3)
    assert blocks((n,)) == 3
    n[()] = 7  # a 0-d array changed in place
    assert blocks((n,)) == 7
    with pytest.raises(TypeError, match="grid"):
        blocks((np.array([1, 2]),))
    assert blocks(6) == 6
    assert blocks(6) == 6


ONE = r"""
extern "C" __global__ void one_%(k)s(%(t)s v, long long* out, double* fout) { out[0] = (long long)v; fout[0] = (double)v; }
"""
C_TYPE = {"i8": "signed char", "u8": "unsigned char", "i16": "short", "u16": "unsigned short", "i32": "int",
          "u32": "unsigned int", "i64": "long long", "u64": "unsigned long long", "f32": "float", "f64": "double"}  # fmt: skip


@pytest.fixture(scope="module")
def one_kernels(dev):
    return {k: cubehip.Kernel(ONE % {"k": k, "t": t}, f"one_{k}", block=1, device=dev) for k, t in C_TYPE.items()}


def outcome(launch, dev, value):
    """What a launch with value does: the exception's type, or the bits the kernel got."""
    out, fout = dev.zeros(1, np.int64), dev.zeros(1, np.float64)
    try:
        launch(1, value, out, fout)
    except Exception as e:  # noqa: BLE001 - the type is the outcome
        return type(e)
    return int(out.get()[0]), float(fout.get()[0])


def _numpy_int(t):
    info = np.iinfo(t)
    return st.integers(min_value=int(info.min), max_value=int(info.max)).map(t)


ANY_SCALAR = st.one_of(
    st.integers(min_value=-(2**65), max_value=2**65),
    st.integers(min_value=-300, max_value=300),
    st.floats(allow_nan=False, width=64),
    st.booleans(),
    st.sampled_from([0, -1, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 0.5, -0.0]),
    # numpy scalars, as CuPy's callers pass them: the built-in call takes integers and
    # float32/float64 itself, the rest (bool_, float16) goes to Kernel.__call__.
    st.sampled_from(NP_INTS).flatmap(_numpy_int),
    st.floats(allow_nan=False, width=32).map(np.float32),
    st.floats(allow_nan=False, width=64).map(np.float64),
    st.floats(allow_nan=False, width=16).map(np.float16),
    st.booleans().map(np.bool_),
)


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(sorted(C_TYPE)), value=ANY_SCALAR)
def test_the_built_in_call_does_what_the_python_call_does(dev, one_kernels, kind, value):
    k = one_kernels[kind]
    assert type(type(k).__call__).__name__ == "builtin_function_or_method"
    assert outcome(k, dev, value) == outcome(lambda *a: cubehip.Kernel.__call__(k, *a), dev, value)


def test_numpy_scalars_take_the_built_in_path(dev, scalars):
    """CuPy's callers pass numpy scalars (np.float32(a), np.uint32(n)): packed in C, never
    handed to the package's Python call."""
    slow_calls = []

    def slow(*a, **kw):
        slow_calls.append(a)

    kinds = bytes(_ffi.ARG_BUFFER if p.kind == "buffer" else _kernel._KIND_CODE[p.kind] for p in scalars.params)
    launch = _ffi.native.kernel_launcher(scalars._h, kinds, cubehip.DeviceArray, slow, NP_INTS, NP_FLOATS, (None,) * len(kinds))
    out, fout = dev.zeros(8, np.int64), dev.zeros(2, np.float64)
    typed = (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64)
    launch((1,), *(t(v) for t, v in zip(typed, VALUES)), out, fout)
    assert slow_calls == []
    got = out.get()
    assert got[:7].tolist() == list(VALUES[:7])
    assert int(got[7]) & (2**64 - 1) == VALUES[7]
    assert fout.get().tolist() == [1.5, -2.25]
    launch(1, *VALUES[:8], np.float16(1.5), VALUES[9], out, fout)  # float16: the package's call
    assert len(slow_calls) == 1


def test_a_subclass_keeps_its_methods_and_its_own_call(dev):
    class Named(cubehip.Kernel):
        def label(self):
            return f"kernel {self.entry}"

    k = Named(GRID, "where", block=1, device=dev)
    assert isinstance(k, Named) and k.label() == "kernel where"
    assert type(type(k).__call__).__name__ == "builtin_function_or_method"
    out = dev.zeros(4, np.uint32)
    k(2, out)
    np.testing.assert_array_equal(out.get()[:2], [1, 2])

    class Counted(cubehip.Kernel):
        calls = 0

        def __call__(self, *args, **kwargs):
            type(self).calls += 1
            return super().__call__(*args, **kwargs)

    c = Counted(GRID, "where", block=1, device=dev)
    c(3, out)
    assert Counted.calls == 1
    np.testing.assert_array_equal(out.get()[:3], [1, 2, 3])
