"""The launch rules the Go side keeps (modules/server/args.go), kept by the Python calls too,
and the shape of what the package hands back (compile errors, memory reports)."""

from __future__ import annotations

import numpy as np
import pytest

import cubehip

KERN = r"""
extern "C" __global__ void take(int n, float a, double d, float* out) {
  if (threadIdx.x == 0 && blockIdx.x == 0) { out[0] = a; out[1] = (float)d; out[2] = (float)n; out[3] = blockDim.x; }
}
"""


@pytest.fixture(scope="module")
def take(dev):
    return cubehip.Kernel(KERN, "take", device=dev)


def run(k, dev, *args):
    out = dev.zeros(4, np.float32)
    k(1, *args, out)
    return out.get()


def test_default_block_is_256(dev, take):
    assert take.block == (256, 1, 1)
    assert run(take, dev, 1, 2.0, 3.0)[3] == 256


def test_a_float_beyond_float_range_is_refused(dev, take):
    # Python's own call (the one any argument of another type takes, and every call where
    # the extension is not in use).
    call = cubehip.Kernel.__call__
    with pytest.raises(OverflowError, match=r"argument 1 \(a\): float 1e\+39 does not fit the kernel's float"):
        call(take, 1, 1, 1e39, 0.0, dev.zeros(4, np.float32))
    with pytest.raises(OverflowError, match=r"argument 1 \(a\)"):
        run(take, dev, 1, np.float64(-1e39), 0.0)
    # Infinity and NaN are values of float: they pass; so does a double beyond float's range.
    assert run(take, dev, 1, np.float64("inf"), 1e300)[0] == np.inf
    assert np.isnan(run(take, dev, 1, np.float64("nan"), 0.0)[0])
    # Rounded, as C++ and CuPy round it.
    assert run(take, dev, 1, np.float64(0.1), 0.0)[0] == np.float32(0.1)


def test_the_built_in_call_refuses_a_float_beyond_float_range(dev, take):
    with pytest.raises(OverflowError):
        take(1, 1, 1e39, 0.0, dev.zeros(4, np.float32))


def test_an_int_a_float_cannot_hold_is_refused(dev, take):
    assert run(take, dev, 1, 2**24, 2**53)[0] == 2**24
    with pytest.raises(ValueError, match=r"argument 1 \(a\): int 16777217 given, the kernel takes float a"):
        run(take, dev, 1, 2**24 + 1, 0.0)
    with pytest.raises(ValueError, match=r"argument 2 \(d\): int 9007199254740993 given, the kernel takes double d"):
        run(take, dev, 1, 1.0, 2**53 + 1)
    with pytest.raises(ValueError, match=r"argument 1 \(a\)"):
        run(take, dev, 1, np.int64(2**60 + 1), 0.0)
    with pytest.raises(ValueError, match=r"argument 2 \(d\)"):
        run(take, dev, 1, 1.0, 2**2000)
    # A float32 holds 2**60 exactly.
    assert run(take, dev, 1, 2**60, 0.0)[0] == np.float32(2**60)


def test_wording_names_the_parameter_and_its_declaration(dev, take):
    with pytest.raises(TypeError, match=r"take: argument 1 \(a\): str given, the kernel takes float a$"):
        run(take, dev, 1, "2", 0.0)
    with pytest.raises(TypeError, match=r"argument 0 \(n\): float32 given, the kernel takes int n$"):
        run(take, dev, np.float32(1), 2.0, 0.0)
    with pytest.raises(ValueError, match=r"argument 3 \(out\): address 0x7 given, the kernel takes float\* out; it lies in no live array"):
        take(1, 1, 2.0, 3.0, 7)
    with pytest.raises(TypeError, match=r"argument 1 \(a\): a buffer given, the kernel takes float a$"):
        run(take, dev, 1, dev.zeros(1, np.float32), 0.0)


def test_overflow_names_the_parameter(dev, take):
    with pytest.raises(OverflowError, match=r"^take: argument 0 \(n\): int 4294967296 does not fit the kernel's int$"):
        run(take, dev, 2**32, 1.0, 0.0)
    with pytest.raises(OverflowError, match=r"argument 0 \(n\): int64 -2147483649 does not fit the kernel's int$"):
        run(take, dev, np.int64(-(2**31) - 1), 1.0, 0.0)


def test_an_empty_grid_is_refused(dev, take):
    for grid in (0, (0,), (0, 1, 1), [0]):
        with pytest.raises(ValueError, match="grid x is 0: to launch nothing for an empty input, skip the call"):
            take(grid, 1, 1.0, 1.0, dev.zeros(4, np.float32))


def test_a_compile_error_shows_its_log_once(dev):
    with pytest.raises(cubehip.CompileError) as e:
        cubehip.Kernel('extern "C" __global__ void broken(int* o) { o[0] = undeclared_name_once; }', "broken", device=dev)
    text = str(e.value)
    assert "undeclared_name_once" in e.value.log
    assert text.count(e.value.log.strip().splitlines()[0].strip()) == 1, text
    assert text.startswith("cubehip_kernel_compile: CUBEHIP_ERROR_COMPILE (10003): kernel")


def test_memory_report_keys_are_snake_case(dev):
    a = dev.empty(1024, np.uint8)
    report = dev.memory_report()
    a.release()
    assert set(report[0]) == {"stream", "report"}
    dynamic = report[0]["report"]["dynamic"]
    assert any(p["usage"]["number_allocs"] >= 1 for p in dynamic)
    assert {"bytes_in_use", "bytes_padding", "bytes_reserved"} <= set(dynamic[0]["usage"])
    assert "pages_peak" in dynamic[0] and "largest_alloc" in dynamic[0]

    def keys(v):
        if isinstance(v, dict):
            for k, x in v.items():
                yield k
                yield from keys(x)
        elif isinstance(v, list):
            for x in v:
                yield from keys(x)

    assert all(k == k.lower() for k in keys(report))
