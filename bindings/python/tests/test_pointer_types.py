"""A device array given for a pointer parameter must be of the element type the kernel
declares: a float64 array for a ``const float*`` is a TypeError naming the parameter, on
the extension's built-in call, on Kernel.__call__, on RawKernel's and on ctypes alone."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import cubehip
from cubehip import _ffi, _kernel

needs_native = pytest.mark.skipif(_ffi.native is None, reason="the extension is not loaded")

# One kernel with a parameter of every element class, so that one compile serves the file.
EVERY = r"""
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>
#include <hip/hip_complex.h>
typedef float real;
extern "C" __global__ void every(const float* f, double* d, int* i, unsigned int* u, long long* l, short* s,
                                 __half* h, __hip_bfloat16* b, float2* f2, double2* d2, int4* i4,
                                 hipFloatComplex* c, void* v, char* ch, unsigned char* uc, signed char* sc,
                                 int8_t* i8, uint8_t* u8, real* r, float** pp, float arr[]) {}
"""

# Parameter name -> the dtypes its pointer takes, among those tried.
TAKES = {
    "f": {"float32"},
    "d": {"float64"},
    "i": {"int32", "uint32"},
    "u": {"int32", "uint32"},
    "l": {"int64", "uint64"},
    "s": {"int16", "uint16"},
    "h": {"float16"},
    "b": {"int16", "uint16"},
    "f2": {"float32", "complex64"},
    "d2": {"float64", "complex128"},
    "i4": {"int32", "uint32"},
    "c": {"float32", "complex64"},
    "pp": {"int64", "uint64"},
    "arr": {"float32"},
}
ANY = ["v", "ch", "uc", "sc", "i8", "u8", "r"]
TRIED = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
         "float16", "float32", "float64", "complex64", "complex128"]  # fmt: skip
NAMES = ["f", "d", "i", "u", "l", "s", "h", "b", "f2", "d2", "i4", "c", "v", "ch", "uc", "sc", "i8", "u8", "r", "pp", "arr"]
GOOD = {"f": "float32", "d": "float64", "i": "int32", "u": "uint32", "l": "int64", "s": "int16", "h": "float16",
        "b": "uint16", "f2": "float32", "d2": "float64", "i4": "int32", "c": "complex64", "pp": "uint64",
        "arr": "float32"}  # fmt: skip


@pytest.fixture(scope="module")
def every(dev):
    return cubehip.Kernel(EVERY, "every", block=1, device=dev)


@pytest.fixture(scope="module")
def arrays(dev):
    return {t: dev.zeros(8, t) for t in TRIED}


def _args(arrays, name, dtype):
    """The kernel's arguments: dtype for parameter name, a good array for every other."""
    return [arrays[dtype] if n == name else arrays[GOOD.get(n, "uint8")] for n in NAMES]


def test_the_declaration_gives_each_pointers_element(every):
    got = {p.name: p.elem for p in every.params}
    assert got["f"] == ("f", 4, False) and got["arr"] == ("f", 4, False)
    assert got["f2"] == ("f", 4, True) and got["c"] == ("f", 4, True) and got["d2"] == ("f", 8, True)
    assert got["i4"] == ("i", 4, False) and got["h"] == ("f", 2, False) and got["b"] == ("bf16", 2, False)
    assert all(got[n] is None for n in ANY)


@pytest.mark.parametrize("decl,elem", [
    ("float a[][4]", ("f", 4, False)), ("float a[4][4]", ("f", 4, False)), ("float* a[]", ("i", 8, False)),
    ("const float* const* p", ("i", 8, False)), ("const float* const x", ("f", 4, False)),
    ("unsigned* u", ("i", 4, False)), ("std::int32_t* p", ("i", 4, False)), ("ulong4 *v", ("i", 8, False)),
    ("double4* __restrict__ v", ("f", 8, True)), ("float3* v", ("f", 4, False)), ("size_t* n", ("i", 8, False)),
    ("half2* h", ("f", 2, False)), ("__nv_bfloat16* b", ("bf16", 2, False)), ("uchar4* px", None), ("bool* m", None),
])  # fmt: skip
def test_declarations_read(decl, elem):
    (p,) = cubehip.parse_params(f'extern "C" __global__ void k({decl}) {{}}', "k")
    assert p.kind == "buffer" and p.elem == elem


@pytest.mark.parametrize("name", NAMES)
def test_each_pointer_takes_its_dtypes_only(every, arrays, name):
    """Every tried dtype for every parameter, through the built-in call and Kernel.__call__:
    the same outcome on both, and the one TAKES says."""
    call = cubehip.Kernel.__call__
    for dtype in TRIED:
        args = _args(arrays, name, dtype)
        takes = name in ANY or dtype in TAKES[name]
        for path in (every, lambda *a: call(every, *a)):
            if takes:
                path(1, *args)
            else:
                with pytest.raises(TypeError) as e:
                    path(1, *args)
                i = NAMES.index(name)
                assert f"every: argument {i} ({name}): an array of {dtype} given" in str(e.value)
    every.device.sync()


def test_the_message_names_the_parameter_the_declaration_and_the_way_out(dev):
    saxpy = cubehip.Kernel(
        'extern "C" __global__ void saxpy(const float* x, float* y, float a, int n) {}', "saxpy", block=32, device=dev
    )
    x, y = dev.array(np.arange(4)), dev.zeros(4, np.float32)
    want = ("saxpy: argument 0 (x): an array of int64 given, the kernel takes const float* x (float32); "
            "to pass the array's bytes as they are, pass a view: a.view(np.float32)")  # fmt: skip
    with pytest.raises(TypeError) as e:
        saxpy(1, x, y, 2.0, 4)
    assert str(e.value) == want
    with pytest.raises(TypeError, match=r"argument 1 \(y\): an array of float64 given, the kernel takes float\* y"):
        saxpy(1, y, dev.zeros(4), 2.0, 4)
    with pytest.raises(TypeError, match=r"int32 or uint32"):
        cubehip.Kernel('extern "C" __global__ void k(int* p) {}', "k", block=1, device=dev)(1, y)
    with pytest.raises(TypeError, match=r"float32 or complex64"):
        cubehip.Kernel('extern "C" __global__ void k(float2* p) {}', "k", block=1, device=dev)(1, dev.zeros(2))


def test_a_refused_array_queues_nothing(dev):
    inc = cubehip.Kernel('extern "C" __global__ void inc(float* y) { y[threadIdx.x] += 1.0f; }', "inc", block=4, device=dev)
    y = dev.array(np.arange(4, dtype=np.float64))
    with pytest.raises(TypeError):
        inc(1, y)
    np.testing.assert_array_equal(y.get(), np.arange(4))


def test_a_view_passes_the_bytes_as_they_are(dev):
    """The documented way to pass an array's bytes to a pointer of another type: a view."""
    src = r"""extern "C" __global__ void bump(unsigned* bits) { bits[threadIdx.x] += 1; }"""
    bump = cubehip.Kernel(src, "bump", block=4, device=dev)
    x = dev.array(np.array([1.0, 2.0, 4.0, 8.0], np.float32))
    with pytest.raises(TypeError, match=r"a.view\(np.uint32\)"):
        bump(1, x)
    bump(1, x.view(np.uint32))
    want = (np.array([1.0, 2.0, 4.0, 8.0], np.float32).view(np.uint32) + 1).view(np.float32)
    np.testing.assert_array_equal(x.get(), want)
    # Bytes of another width: the view's last dimension counts the new elements.
    d = dev.zeros(2, np.float64)
    bump(1, d.view(np.uint32))
    np.testing.assert_array_equal(d.get().view(np.uint32), [1, 1, 1, 1])
    # dev.alloc's bytes go to a typed pointer as a view too.
    raw = dev.alloc(16)  # uninitialized: its bytes are whatever they were
    before = raw.get().view(np.uint32).copy()
    bump(1, raw.view(np.uint32))
    np.testing.assert_array_equal(raw.get().view(np.uint32), before + 1)


def test_a_byte_swapped_array_is_refused(dev):
    k = cubehip.Kernel('extern "C" __global__ void k(float* p) {}', "k", block=1, device=dev)
    big = dev.array(np.arange(4, dtype=">f4"))
    for call in (k, lambda *a: cubehip.Kernel.__call__(k, *a)):
        with pytest.raises(TypeError, match=">f4"):
            call(1, big)
    k(1, big.view(np.float32))


def test_arg_types_says_the_element_or_any(dev):
    src = 'extern "C" __global__ void k(float* p, int n) {}'
    anything = cubehip.Kernel(src, "k", block=1, device=dev, arg_types=["buffer", "i32"])
    anything(1, dev.zeros(4, np.int8), 4)
    anything(1, dev.zeros(4, np.float64), 4)
    also = cubehip.Kernel(src, "k", block=1, device=dev, arg_types=["void*", "i32"])
    also(1, dev.zeros(4, np.float64), 4)
    doubles = cubehip.Kernel(src, "k", block=1, device=dev, arg_types=["double*", "i32"])
    doubles(1, dev.zeros(4, np.float64), 4)
    with pytest.raises(TypeError, match="float64"):
        doubles(1, dev.zeros(4, np.float32), 4)
    # A declaration the package cannot read: the arg_types entry is all there is.
    unread = cubehip.Kernel(UNREAD, "k", block=1, device=dev, arg_types=["float*"])
    with pytest.raises(TypeError, match="float64"):
        unread(1, dev.zeros(4))
    unread(1, dev.zeros(4, np.float32))


# A kernel whose name is too far from __global__ for the package to read its declaration.
UNREAD = 'extern "C" __global__' + " " * 400 + "void k(float* p) {}"


def test_a_type_the_declaration_does_not_say_takes_any_array(dev):
    k = cubehip.Kernel(UNREAD, "k", block=1, io=["rw"], device=dev)
    assert k.params is None
    k(1, dev.zeros(4, np.float64))
    k(1, dev.zeros(4, np.int8))
    # A template parameter, a typedef, a struct: no element the package knows.
    for decl in ("T* p", "const T* __restrict__ p", "real* p", "struct pair* p", "MyType p[]"):
        (p,) = cubehip.parse_params(f"template <typename T> __global__ void k({decl}) {{}}", "k")
        assert p.kind == "buffer" and p.elem is None, decl


def test_raw_kernel_checks_too(dev):
    k = cubehip.RawKernel('extern "C" __global__ void k(const double* x, float* y) {}', "k", device=dev)
    with pytest.raises(TypeError, match=r"argument 0 \(x\): an array of float32 given, the kernel takes const double\* x"):
        k((1,), (32,), (dev.zeros(4, np.float32), dev.zeros(4, np.float32)))
    k((1,), (32,), (dev.zeros(4), dev.zeros(4, np.float32)))  # float64 by default, as CuPy's


def test_ml_dtypes_bfloat16_goes_to_a_bfloat16_pointer(dev):
    ml = pytest.importorskip("ml_dtypes")
    k = cubehip.Kernel('#include <hip/hip_bf16.h>\nextern "C" __global__ void k(__hip_bfloat16* p) {}', "k", block=1,
                       device=dev)
    k(1, dev.zeros(4, ml.bfloat16))
    with pytest.raises(TypeError, match="float16"):
        k(1, dev.zeros(4, np.float16))


@needs_native
def test_the_built_in_call_checks_in_c(dev):
    """The built-in call takes an array of a dtype its plan names without the package's
    Python call, and hands any other to it (which raises or, for an equal dtype made
    another way, launches)."""
    k = cubehip.Kernel('extern "C" __global__ void k(const float* x, void* v) {}', "k", block=1, device=dev)
    seen = []

    def slow(*a, **kw):
        seen.append(a)

    kinds = bytes([_ffi.ARG_BUFFER, _ffi.ARG_BUFFER])
    f32 = np.dtype(np.float32)
    launch = _ffi.native.kernel_launcher(k._h, kinds, cubehip.DeviceArray, slow, _kernel._NUMPY_INTS,
                                         _kernel._NUMPY_FLOATS, ((f32,), None))
    x, other = dev.zeros(4, np.float32), dev.zeros(4, np.float64)
    launch(1, x, other)  # void* takes anything, float* its float32
    assert seen == []
    launch(1, other, x)
    assert len(seen) == 1
    # The same dtype as another object (numpy makes one for a byte order spelt out): the
    # package's call judges it, and takes it.
    same = x.view(np.dtype("=f4").newbyteorder("="))
    assert same.dtype == f32
    launch(1, same, x)
    assert type(type(k).__call__).__name__ == "builtin_function_or_method"
    k(1, same, x)
    dev.sync()
    # The kernel's own plan is made with its parameters' dtypes.
    with pytest.raises(TypeError, match="float64"):
        k(1, other, x)


CTYPES_ONLY = r"""
import numpy as np, pytest, cubehip
from cubehip import _ffi
assert _ffi.native is None
with cubehip.Device("cpu") as dev:
    k = cubehip.Kernel('extern "C" __global__ void k(const float* x, unsigned* u) {}', "k", block=1, device=dev)
    k(1, dev.zeros(4, np.float32), dev.zeros(4, np.int32))
    with pytest.raises(TypeError, match=r"argument 0 \(x\): an array of float64 given"):
        k(1, dev.zeros(4), dev.zeros(4, np.uint32))
    with pytest.raises(TypeError, match=r"argument 1 \(u\): an array of float32 given"):
        k(1, dev.zeros(4, np.float32), dev.zeros(4, np.float32))
print("ok")
"""


def test_ctypes_alone_checks_too():
    env = dict(os.environ, CUBEHIP_PYTHON_NATIVE="0")
    env["PYTHONPATH"] = os.pathsep.join([str(Path(cubehip.__file__).parents[1]), env.get("PYTHONPATH", "")])
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(CTYPES_ONLY)], capture_output=True, text=True, env=env,
                         timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr
