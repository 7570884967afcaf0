"""CuPy's RawKernel and RawModule behaviours beyond the call, as CuPy documents them: compile
errors raised at ``kernel``, ``compile()`` and ``get_function``; ``compile(log_stream=)``;
CuPy's exception names; pickling; translate_cucomplex."""

from __future__ import annotations

import io
import pickle
import sys

import numpy as np
import pytest

import cubehip
from cubehip import RawKernel, RawModule

from conftest import PLATFORM

SCALE = r"""
extern "C" __global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
"""

# Line 3 does not compile: the log names it.
BAD = 'extern "C" __global__ void bad(int* o) {\n  o[0] = 1;\n  o[1] = undeclared_name;\n}\n'

# A macro name must be an identifier: every platform's compiler refuses this option.
BAD_OPTION = ("-D1=2",)

CUCOMPLEX = r"""#include <cuComplex.h>
extern "C" __global__ void cplx(const cuFloatComplex* a, const cuFloatComplex* b, cuFloatComplex* out,
                                cuDoubleComplex* d, float* mag, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  cuComplex p = cuCmulf(a[i], b[i]);
  cuFloatComplex q = cuCaddf(p, cuConjf(make_cuFloatComplex(cuCrealf(a[i]), cuCimagf(b[i]))));
  out[i] = cuCdivf(cuCsubf(q, make_cuComplex(1.0f, 0.0f)), make_cuFloatComplex(2.0f, 0.0f));
  mag[i] = cuCabsf(a[i]);
  cuDoubleComplex w = cuComplexFloatToDouble(a[i]);
  d[i] = cuCfma(w, cuConj(w), make_cuDoubleComplex(cuCreal(d[i]), cuCimag(d[i])));
}
"""


def _cplx_expected(a: np.ndarray, b: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q = a * b + np.conj(a.real + 1j * b.imag)
    out = (q - 1) / 2
    w = a.astype(np.complex128)
    return out.astype(np.complex64), np.abs(a).astype(np.float32), w * np.conj(w) + d


# --- errors where CuPy raises them -------------------------------------------------------


def test_kernel_attribute_compiles_and_raises_there(dev):
    k = RawKernel(SCALE, "scale", device=dev)
    kern = k.kernel  # CuPy's spelling: an attribute that compiles
    assert kern.device is dev and kern.params is not None
    assert isinstance(k.kernel((64,)), cubehip.Kernel)  # cubehip's: the Kernel of a launch shape
    assert k.kernel((64,)) is k.kernel((64,))
    with pytest.raises(cubehip.CompileException, match="undeclared_name"):
        RawKernel(BAD, "bad", device=dev).kernel
    with pytest.raises(cubehip.CompileException):
        RawKernel(SCALE, "scale", options=BAD_OPTION, device=dev).kernel
    with pytest.raises(cubehip.CompileException, match="missing"):
        RawKernel(SCALE, "missing", device=dev).kernel


def test_kernel_attribute_called_as_cupys_function_launches(dev):
    k = RawKernel(SCALE, "scale", device=dev)
    x = dev.array(np.ones(100, np.float32))
    k.kernel((1,), (128,), (x, np.float32(3), np.int32(100)))
    k.kernel(grid=(1,), block=(128,), args=(x, 2.0, 100), shared_mem=0, stream=None)
    np.testing.assert_array_equal(x.get(), 6)


def test_compile_raises_for_a_source_or_option_that_does_not_compile(dev):
    with pytest.raises(cubehip.CompileError, match="undeclared_name"):
        RawKernel(BAD, "bad", device=dev).compile()
    with pytest.raises(cubehip.CompileError):
        RawKernel(SCALE, "scale", options=BAD_OPTION, device=dev).compile()
    with pytest.raises(cubehip.CompileError):
        RawModule(code=BAD, device=dev).compile()
    with pytest.raises(cubehip.CompileError):
        RawModule(code=SCALE, options=BAD_OPTION, device=dev).compile()
    with pytest.raises(cubehip.CompileError):
        RawModule(code=SCALE, options=BAD_OPTION, device=dev).get_function("scale")


# --- compile(log_stream=) ------------------------------------------------------------------


def test_raw_kernel_compile_log_stream(dev):
    k = RawKernel(SCALE, "scale", device=dev)
    log = io.StringIO()
    assert k.compile(log_stream=log) is None
    assert log.getvalue() == ""  # cubehip keeps the log of a failed compile only
    assert k._kernels, "compiled now, not at the first call"
    k.compile(sys.stdout)  # positional, as CuPy's examples pass it
    x = dev.array(np.ones(8, np.float32))
    k((1,), (8,), (x, 2.0, 8))
    np.testing.assert_array_equal(x.get(), 2)

    bad = RawKernel(BAD, "bad", device=dev)
    log = io.StringIO()
    with pytest.raises(cubehip.CompileError) as e:
        bad.compile(log_stream=log)
    assert "undeclared_name" in log.getvalue() and log.getvalue().rstrip() == e.value.log.rstrip()
    assert ":3:" in e.value.log or "(3)" in e.value.log  # the source's own line numbers (g++'s, NVRTC's form)
    with pytest.raises(TypeError, match="log_stream"):
        k.compile(log_stream="stdout")


def test_raw_kernel_compile_keeps_cubehips_block_form(dev):
    k = RawKernel(SCALE, "scale", device=dev)
    k.compile((64,))
    k.compile(block=(32,), shared_mem=128)
    k.compile(16)
    assert {kern.block for kern in k._kernels.values()} == {(64, 1, 1), (32, 1, 1), (16, 1, 1)}
    assert any(kern.shared_mem == 128 for kern in k._kernels.values())


def test_raw_module_compile_log_stream(dev):
    mod = RawModule(code=SCALE, device=dev)
    log = io.StringIO()
    assert mod.compile(log_stream=log) is None and log.getvalue() == ""
    x = dev.array(np.ones(8, np.float32))
    mod.get_function("scale")((1,), (8,), (x, 5.0, 8))
    np.testing.assert_array_equal(x.get(), 5)

    log = io.StringIO()
    with pytest.raises(cubehip.CompileError) as e:
        RawModule(code=BAD, device=dev).compile(log)
    assert "undeclared_name" in log.getvalue() and "undeclared_name" in e.value.log
    with pytest.raises(cubehip.CompileError):  # a name expression the source does not resolve
        RawModule(code=SCALE, name_expressions=["scale<float>"], device=dev).compile()
    with pytest.raises(TypeError, match="log_stream"):
        mod.compile(log_stream=1)


# --- CuPy's exception names ------------------------------------------------------------------


def test_cupy_exception_names_catch_cubehips(dev):
    assert cubehip.CompileException is cubehip.CompileError
    assert cubehip.CUDADriverError is cubehip.CubehipError and cubehip.CUDARuntimeError is cubehip.CubehipError
    for n in ("CompileException", "CUDADriverError", "CUDARuntimeError"):
        assert n in cubehip.__all__ and n in dir(cubehip)
    # CuPy raises CUDADriverError at get_function for a name the module lacks.
    with pytest.raises(cubehip.CUDADriverError):
        RawModule(code=SCALE, device=dev).get_function("nope")
    try:
        RawKernel(BAD, "bad", options=("-DUNUSED=1",), device=dev).compile()
    except cubehip.CompileException as e:
        assert "undeclared_name" in e.get_message() and e.get_message() == str(e)
        out = io.StringIO()
        e.dump(out)
        dumped = out.getvalue()
        assert "-DUNUSED=1" in dumped and "3   o[1] = undeclared_name;" in dumped
        assert dumped.endswith("-----\n")
    else:
        pytest.fail("no CompileException")


# --- pickling --------------------------------------------------------------------------------


def test_raw_kernel_pickles_after_a_call_and_compiles_again(dev):
    k = RawKernel(SCALE, "scale", options=("-DUNUSED=1",), device=dev)
    x = dev.array(np.ones(16, np.float32))
    k((1,), (16,), (x, 2.0, 16))
    k2 = pickle.loads(pickle.dumps(k))
    assert (k2.code, k2.name, k2.options, k2.backend) == (k.code, k.name, k.options, k.backend)
    assert k2.device is None and not k2._kernels  # neither the device nor compiled kernels travel
    k2((1,), (16,), (x, 3.0, 16))  # compiled again here, on the arrays' device
    np.testing.assert_array_equal(x.get(), 6)
    coop = pickle.loads(pickle.dumps(RawKernel(SCALE, "scale", enable_cooperative_groups=True)))
    assert coop.enable_cooperative_groups


def test_raw_module_pickles_after_get_function(dev):
    mod = RawModule(code=SCALE, options=("-O2",), device=dev)
    mod.get_function("scale")
    mod2 = pickle.loads(pickle.dumps(mod))
    assert mod2.options == ("-O2",) and mod2.device is None and not mod2._functions
    x = dev.array(np.ones(4, np.float32))
    mod2.get_function("scale")((1,), (4,), (x, 4.0, 4))
    np.testing.assert_array_equal(x.get(), 4)
    # A kernel of a module pickles with the module's name expressions.
    tmpl = RawModule(code="template <typename T> __global__ void fill(T* o, T v) { o[threadIdx.x] = v; }",
                     name_expressions=["fill<int>"], device=dev)
    f = pickle.loads(pickle.dumps(tmpl.get_function("fill<int>")))
    y = dev.zeros(4, np.int32)
    f((1,), (4,), (y, np.int32(7)))
    np.testing.assert_array_equal(y.get(), 7)


def test_a_pickle_of_another_layout_is_refused():
    k = RawKernel(SCALE, "scale")
    state = k.__getstate__()
    state["cubehip_pickle"] = 0
    other = RawKernel.__new__(RawKernel)
    with pytest.raises(pickle.UnpicklingError, match="another cubehip version"):
        other.__setstate__(state)


# --- translate_cucomplex ---------------------------------------------------------------------


def test_translate_cucomplex_rewrites_names_and_the_include():
    out = cubehip.translate_cucomplex(CUCOMPLEX)
    assert out.splitlines()[0] == "#include <hip/hip_complex.h>"
    assert len(out.splitlines()) == len(CUCOMPLEX.splitlines())  # lines keep their numbers
    for cu, hip in [("cuFloatComplex", "hipFloatComplex"), ("cuComplex p", "hipComplex p"), ("cuCmulf", "hipCmulf"),
                    ("make_cuFloatComplex", "make_hipFloatComplex"), ("cuComplexFloatToDouble", "hipComplexFloatToDouble"),
                    ("cuCfma(", "hipCfma("), ("cuConjf", "hipConjf"), ("cuCabsf", "hipCabsf")]:  # fmt: skip
        assert cu not in out and hip in out
    # A source without the include gets HIP's header, its lines still numbered from 1.
    bare = cubehip.translate_cucomplex("__device__ cuDoubleComplex z;")
    assert bare == "#include <hip/hip_complex.h>\n#line 1\n__device__ hipDoubleComplex z;"
    # Names that only contain cuComplex's are left alone.
    assert cubehip.translate_cucomplex('#include "cuComplex.h"\nint my_cuCaddf, cuCaddfx;') == (
        '#include <hip/hip_complex.h>\nint my_cuCaddf, cuCaddfx;')


def test_translate_cucomplex_kernel_runs(dev):
    rng = np.random.default_rng(3)
    n = 50
    a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    b = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    d = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex128)
    da, db, dd = dev.array(a), dev.array(b), dev.array(d)
    out, mag = dev.zeros(n, np.complex64), dev.zeros(n, np.float32)
    k = RawKernel(CUCOMPLEX, "cplx", translate_cucomplex=True)
    assert k.translate_cucomplex and k.code == CUCOMPLEX
    k((1,), (64,), (da, db, out, dd, mag, np.int32(n)))
    want_out, want_mag, want_d = _cplx_expected(a, b, d)
    np.testing.assert_allclose(out.get(), want_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mag.get(), want_mag, rtol=1e-6)
    np.testing.assert_allclose(dd.get(), want_d, rtol=1e-12)
    # The same through a module, and after a pickle.
    mod = pickle.loads(pickle.dumps(RawModule(code=CUCOMPLEX, translate_cucomplex=True)))
    dd2 = dev.array(d)
    mod.get_function("cplx")((1,), (64,), (da, db, out, dd2, mag, np.int32(n)))
    np.testing.assert_allclose(dd2.get(), want_d, rtol=1e-12)


def test_translate_cucomplex_errors_name_the_sources_lines(dev):
    src = 'extern "C" __global__ void k(cuFloatComplex* z) {\n  z[0] = cuCaddf(z[0], nope);\n}\n'
    with pytest.raises(cubehip.CompileError) as e:
        RawKernel(src, "k", translate_cucomplex=True, device=dev).compile()
    assert (":2:" in e.value.log or "(2)" in e.value.log) and e.value.source == src
    # Without translate_cucomplex the names are not HIP's: cuComplex.h is CUDA's, which only
    # NVRTC has (nvidia compiles them as CUDA does).
    if dev.platform != "nvidia":
        with pytest.raises(cubehip.CompileError):
            RawKernel(CUCOMPLEX, "cplx", device=dev).compile()


# --- RawModule(path=...) -----------------------------------------------------------------------

ADD_ONE = r"""
#include <hip/hip_runtime.h>
extern "C" __global__ void add_one(float* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
"""


def test_raw_module_path_of_source_and_code(tmp_path):
    # A source file is read as code.
    src = tmp_path / "k.hip"
    src.write_text(ADD_ONE + "// " + str(tmp_path) + "\n")
    d = cubehip.Device(PLATFORM, cache_dir=str(tmp_path / "cache"))
    try:
        mod = RawModule(path=str(src), device=d)
        assert mod.code == src.read_text()
        x = d.array(np.arange(4, dtype=np.float32))
        mod.get_function("add_one")((1,), (4,), (x, np.uint32(4)))
        np.testing.assert_array_equal(x.get(), [1, 2, 3, 4])

        # The module's code, as the kernel disk cache (and `cubehip compile`) wrote it,
        # is a compiled module: loaded by path, not compiled.
        (entry,) = (tmp_path / "cache" / "kernels").glob("*.co")
        cm = RawModule(path=str(entry), device=d)
        f = cm.get_function("add_one")
        f((1,), (4,), (x, np.uint32(4)))
        np.testing.assert_array_equal(x.get(), [2, 3, 4, 5])
        # Unsealed, the code is the platform's own: loaded as it is.
        raw = tmp_path / "k.co"
        is_source, code = cubehip._cupy._read_module_file(str(entry))
        assert not is_source
        raw.write_bytes(code)
        RawModule(path=str(raw), device=d).get_function("add_one")((1,), (4,), [x, np.uint32(4)])
        np.testing.assert_array_equal(x.get(), [3, 4, 5, 6])
        # It pickles with its code.
        g = pickle.loads(pickle.dumps(cm))
        g.device = d
        g.get_function("add_one")((1,), (4,), (x, np.uint32(4)))
        np.testing.assert_array_equal(x.get(), [4, 5, 6, 7])

        with pytest.raises(cubehip.CubehipError, match="no such kernel"):
            cm.get_function("nope")
        renamed = tmp_path / "other.co"
        renamed.write_bytes(entry.read_bytes())
        with pytest.raises(ValueError, match="damaged, truncated or renamed"):
            RawModule(path=str(renamed))
        junk = tmp_path / "junk.co"
        junk.write_bytes(b"junk")
        with pytest.raises(cubehip.CubehipError):
            RawModule(path=str(junk), device=d).get_function("add_one")
        with pytest.raises(TypeError, match="not both"):
            RawModule(code=ADD_ONE, path=str(src))
    finally:
        d.close()
