import numpy as np
import pytest

import cubehip
from conftest import PLATFORM, SAXPY

SCALARS = r"""
#include <hip/hip_runtime.h>
#include <stdint.h>
extern "C" __global__ void scalars(double* out, int a, unsigned b, long long c, unsigned long long d,
                                   float e, double f, int64_t g, uint32_t h) {
  out[0] = a; out[1] = b; out[2] = (double)c; out[3] = (double)d; out[4] = e; out[5] = f;
  out[6] = (double)g; out[7] = h;
}
"""
TYPEDEFS = r"""
typedef float real;
typedef unsigned count;
extern "C" __global__ void twice(real* y, real a, count n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * y[i] + a;
}
"""


def test_saxpy(dev, saxpy):
    n = 1000
    x = dev.array(np.arange(n, dtype=np.float32))
    y = dev.array(np.ones(n, np.float32))
    saxpy((n + 63) // 64, x, y, 2.0, n)
    np.testing.assert_allclose(y.get(), 2 * np.arange(n) + 1)
    # numpy scalars and a tuple grid, on another stream, give the same.
    y.set(np.ones(n, np.float32))
    saxpy(((n + 63) // 64, 1, 1), x, y, np.float32(2), np.uint32(n), stream=dev.stream(4))
    np.testing.assert_allclose(y.get(), 2 * np.arange(n) + 1)
    saxpy(((n + 63) // 64,), x, y, 2, n, stream=4)  # an int for a float parameter converts
    np.testing.assert_allclose(y.get(), 4 * np.arange(n) + 1)


def test_parameters_read_from_the_declaration(saxpy):
    assert [p.kind for p in saxpy.params] == ["buffer", "buffer", "f32", "u32"]
    assert [p.name for p in saxpy.params] == ["x", "y", "a", "n"]
    assert saxpy.io == (1, 3)  # const float* is read, float* read and written
    assert "saxpy(const float* x" in repr(saxpy)
    ps = cubehip.parse_params("/* __global__ void k(int) */ extern \"C\" __global__ void k(void) {}", "k")
    assert ps == []
    assert cubehip.parse_params("int f(int a);", "f") is None


def test_scalar_kinds_inferred_and_exact(dev):
    k = cubehip.Kernel(SCALARS, "scalars", block=1, device=dev)
    assert [p.kind for p in k.params] == ["buffer", "i32", "u32", "i64", "u64", "f32", "f64", "i64", "u32"]
    out = dev.zeros(8, np.float64)
    k(1, out, -7, 4000000000, -(2**40), 2**53, 0.5, 1e300, np.int64(-3), np.uint32(9))
    np.testing.assert_array_equal(out.get(), [-7, 4000000000, -(2**40), 2**53, 0.5, 1e300, -3, 9])
    k(1, out, 0, 0, 0, 2**64 - 1, 0.0, 0.0, 0, 0)  # the full u64 range
    assert out.get()[3] == float(2**64 - 1)


def test_scalar_errors(dev):
    k = cubehip.Kernel(SCALARS, "scalars", block=1, device=dev)
    out = dev.zeros(8, np.float64)
    ok = [out, 1, 2, 3, 4, 5.0, 6.0, 7, 8]
    for i, bad, exc in [(1, 2**31, OverflowError), (2, -1, OverflowError), (4, 2**64, OverflowError),
                        (1, 1.5, TypeError), (5, "x", TypeError), (6, out, TypeError), (0, 5, ValueError),
                        (0, np.zeros(8), TypeError), (3, None, TypeError)]:
        args = list(ok)
        args[i] = bad
        with pytest.raises(exc, match=f"argument {i}"):
            k(1, *args)
    with pytest.raises(TypeError, match="takes 9 arguments"):
        k(1, out, 1, 2)
    k(1, *ok)  # the failed calls left the plan intact
    np.testing.assert_array_equal(out.get(), [1, 2, 3, 4, 5, 6, 7, 8])


def test_grid_and_block_errors(dev, saxpy):
    x = dev.zeros(64, np.float32)
    for bad in (0, (1, 0), (1, 1, 1, 1), 1.5, "1", 2**32, (True,)):
        with pytest.raises((ValueError, TypeError)):
            saxpy(bad, x, x, 1.0, 64)
    with pytest.raises(ValueError):
        cubehip.Kernel(SAXPY, "saxpy", block=0, device=dev)
    with pytest.raises(ValueError):
        cubehip.Kernel(SAXPY, "saxpy", shared_mem=-1, device=dev)
    with pytest.raises(TypeError):
        cubehip.Kernel(SAXPY, "saxpy", options=[1], device=dev)
    with pytest.raises(TypeError):
        cubehip.Kernel(b"src", "saxpy", device=dev)
    with pytest.raises(ValueError):
        cubehip.Kernel(SAXPY, "", device=dev)


def test_released_buffer_argument(dev, saxpy):
    x = dev.zeros(64, np.float32)
    y = dev.zeros(64, np.float32)
    y.release()
    with pytest.raises(ValueError, match="released"):
        saxpy(1, x, y, 1.0, 64)


def test_buffer_of_another_device(dev, saxpy):
    with cubehip.Device(PLATFORM) as other:
        foreign = other.zeros(64, np.float32)
        x = dev.zeros(64, np.float32)
        with pytest.raises(cubehip.InvalidArgument, match="another device"):
            saxpy(1, foreign, x, 1.0, 64)


def test_compile_error_has_the_log(dev):
    with pytest.raises(cubehip.CompileError) as e:
        cubehip.Kernel('extern "C" __global__ void broken(int* o) { o[0] = undeclared_name; }', "broken", device=dev)
    assert "undeclared_name" in e.value.log
    assert e.value.status == 10003 and "undeclared_name" in str(e.value)


def test_carried_failure(dev):
    """A launch of a kernel that cannot compile queues; its output carries the failure."""
    k = cubehip.Kernel('extern "C" __global__ void broken(int* o) { o[0] = undeclared_name; }', "broken",
                       io=["w"], device=dev, compile=False)
    out = dev.zeros(4, np.int32)
    try:
        k(1, out)
    except cubehip.CompileError:
        pass  # a platform may compile at the launch itself
    with pytest.raises(cubehip.CarriedFailure) as e:
        out.get()
    assert e.value.status == 10003
    with pytest.raises(cubehip.CarriedFailure):
        out.check()
    with pytest.raises(cubehip.CarriedFailure):
        out.sync()
    out.set(np.zeros(4, np.int32))  # a new write clears it
    out.check()
    np.testing.assert_array_equal(out.get(), 0)


def test_options_and_typedef_kernels(dev):
    src = 'extern "C" __global__ void fill(int* o) { o[threadIdx.x] = VALUE; }'
    k = cubehip.Kernel(src, "fill", block=8, options=["-DVALUE=42"], io="w", device=dev)
    o = dev.empty(8, np.int32)
    k(1, o)
    np.testing.assert_array_equal(o.get(), 42)
    # The declaration uses typedefs: kinds come from arg_types, or from the values.
    t = cubehip.Kernel(TYPEDEFS, "twice", block=32, arg_types=["buffer", "f32", np.uint32], device=dev)
    y = dev.array(np.ones(32, np.float32))
    t(1, y, 1.0, 32)
    np.testing.assert_array_equal(y.get(), 3)
    d = cubehip.Kernel(TYPEDEFS, "twice", block=32, device=dev)
    assert [p.kind for p in d.params] == ["buffer", None, None]
    d(1, y, np.float32(0), np.uint32(32))
    np.testing.assert_array_equal(y.get(), 6)
    with pytest.raises(TypeError, match="numpy scalar"):
        d(1, y, 0.0, 32)
    with pytest.raises(ValueError, match="arg_types"):
        cubehip.Kernel(TYPEDEFS, "twice", arg_types=["buffer", "quaternion", "u32"], device=dev)
    with pytest.raises(ValueError, match="arg_types has"):
        cubehip.Kernel(SAXPY, "saxpy", arg_types=["buffer"], device=dev)
    with pytest.raises(ValueError, match="io"):
        cubehip.Kernel(SAXPY, "saxpy", io=["r"], device=dev)
    with pytest.raises(ValueError, match="io"):
        cubehip.Kernel(SAXPY, "saxpy", io=["r", "sideways"], device=dev)


def test_module_and_destroy(dev):
    m = cubehip.Module(SAXPY + TYPEDEFS, device=dev)
    k = m.get_function("saxpy", block=64)
    assert m.get_function("saxpy", block=64) is k
    x = dev.array(np.ones(64, np.float32))
    k(1, x, x, 1.0, 64)
    np.testing.assert_array_equal(x.get(), 2)
    k.destroy()
    with pytest.raises(ValueError, match="destroyed"):
        k(1, x, x, 1.0, 64)
    k.destroy()
    assert m.get_function("saxpy", block=64) is not k
    with cubehip.Kernel(SAXPY, "saxpy", device=dev) as k2:
        pass
    with pytest.raises(ValueError, match="destroyed"):
        k2.compile()


def test_default_device(saxpy):
    d = cubehip.get_device()
    k = cubehip.Kernel(SAXPY, "saxpy", block=64)
    assert k.device is d


def test_shared_memory_reduction(dev):
    src = r"""
extern "C" __global__ void block_sum(const float* in, float* out, unsigned n) {
  extern __shared__ float s[];
  unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
    if (t < w) s[t] += s[t + w];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}
"""
    k = cubehip.Kernel(src, "block_sum", block=128, shared_mem=128 * 4, device=dev)
    host = np.random.default_rng(1).random(1000, dtype=np.float32)
    out = dev.empty(8, np.float32)
    k(8, dev.array(host), out, 1000)
    np.testing.assert_allclose(out.get().sum(), host.sum(), rtol=1e-5)


def test_stream_arguments(dev, saxpy):
    x = dev.zeros(64, np.float32)
    for s in (None, 0, 5, 2**64 - 1, dev.stream(6)):
        saxpy(1, x, x, 1.0, 64, stream=s)
    dev.sync()
    for bad, exc in ((-1, ValueError), (2**64, ValueError), ("s", TypeError), (1.0, TypeError)):
        with pytest.raises(exc):
            saxpy(1, x, x, 1.0, 64, stream=bad)
    with cubehip.Device(PLATFORM) as other:
        with pytest.raises(ValueError, match="stream is one of"):
            saxpy(1, x, x, 1.0, 64, stream=other.stream(1))


def test_grid_changes_are_seen(dev):
    k = cubehip.Kernel('extern "C" __global__ void mark(int* o) { o[blockIdx.x + 4 * blockIdx.y] = 1; }', "mark",
                       block=1, device=dev)
    for grid, ones in ((1, 1), (3, 3), ((2, 2), 4), ([4, 1], 4), (np.array([2, 3]), 6), (np.int64(1), 1)):
        o = dev.zeros(16, np.int32)
        k(grid, o)
        assert o.get().sum() == ones, grid


# The kinds the library takes today (I32, U32, I64, U64, F32, F64); 8- and 16-bit scalars are
# packed the same way (test_scalar_kinds_inferred_and_exact checks how they are read).
ECHO = r"""
#include <stdint.h>
extern "C" __global__ void echo(int32_t* o1, uint32_t* o2, int64_t* o3, uint64_t* o4, float* o5, double* o6,
                                int32_t v1, uint32_t v2, int64_t v3, uint64_t v4, float v5, double v6) {
  *o1 = v1; *o2 = v2; *o3 = v3; *o4 = v4; *o5 = v5; *o6 = v6;
}
"""
ECHO_TYPES = [np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64]


def _echo_values():
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    return st.tuples(*[hnp.from_dtype(np.dtype(t), allow_nan=False) for t in ECHO_TYPES])


@pytest.fixture(scope="module")
def echo(dev):
    k = cubehip.Kernel(ECHO, "echo", block=1, device=dev)
    outs = [dev.empty((), t) for t in ECHO_TYPES]
    return k, outs


def test_scalar_round_trip_property(echo):
    """Every scalar kind reaches the kernel bit-exact, given as a Python number or a numpy scalar."""
    from hypothesis import given, settings

    k, outs = echo
    assert [p.kind for p in k.params[6:]] == ["i32", "u32", "i64", "u64", "f32", "f64"]

    @settings(max_examples=40, deadline=None)
    @given(_echo_values(), st_bool())
    def check(values, as_python):
        args = [v.item() if as_python else v for v in values]
        k(1, *outs, *args)
        for o, v in zip(outs, values):
            assert o.get() == v, (o.dtype, v)

    check()


def st_bool():
    from hypothesis import strategies as st

    return st.booleans()


def test_small_integer_kinds_are_read_from_the_declaration():
    ps = cubehip.parse_params('extern "C" __global__ void s(int8_t a, unsigned char b, short c, uint16_t d, bool e, '
                              'const volatile long long f, size_t g, float* __restrict__ h, double i[]) {}', "s")
    assert [p.kind for p in ps] == ["i8", "u8", "i16", "u16", "u8", "i64", "u64", "buffer", "buffer"]
    assert [p.name for p in ps] == list("abcdefghi")
