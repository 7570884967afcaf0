"""C++ kernels by name and modules: a template's specialization, a C++-linkage kernel and an
overload picked by a cast, taken by their name expressions through Kernel, RawKernel and
RawModule; the kernels of a RawModule share its variables."""

import numpy as np
import pytest

import cubehip
from cubehip._kernel import declared_name, parse_params

SRC = r"""
#include <hip/hip_runtime.h>
__device__ int counter;
template <typename T, int N>
__global__ void fill(T* out, T v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) out[i] = v + (T)i;
}
__global__ void scale(float* y, float a, int n) {
  int i = threadIdx.x;
  if (i < n) y[i] *= a;
}
__global__ void twice(float* y, int n) { int i = threadIdx.x; if (i < n) y[i] *= 2; }
__global__ void twice(int* y, int n) { int i = threadIdx.x; if (i < n) y[i] *= 2; }
extern "C" __global__ void put(int v) { if (threadIdx.x == 0) counter = v; }
template <typename T> __global__ void get(T* out) { if (threadIdx.x == 0) out[0] = (T)counter; }
"""


def test_declarations_of_name_expressions():
    assert declared_name("fill<float, 4>") == "fill"
    assert declared_name("ns::scale") == "scale"
    assert declared_name("(void(*)(int*, int))twice") == "twice"
    p = parse_params(SRC, "fill<float, 4>")
    assert [q.name for q in p] == ["out", "v"] and p[0].elem is None  # T: any array
    p = parse_params(SRC, "(void(*)(int*, int))twice")
    assert [q.kind for q in p] == ["buffer", "i32"] and p[0].elem == ("i", 4, False)
    assert parse_params(SRC, "twice") is None  # overloaded: the compiler's to pick


def test_kernels_by_name_expression(dev):
    out = dev.zeros(4, np.float32)
    cubehip.Kernel(SRC, "fill<float, 4>", block=4, device=dev)(1, out, np.float32(10))
    np.testing.assert_array_equal(out.get(), [10, 11, 12, 13])
    cubehip.Kernel(SRC, "scale", block=4, device=dev)(1, out, 0.5, 4)
    np.testing.assert_array_equal(out.get(), [5, 5.5, 6, 6.5])
    ints = dev.array(np.arange(4, dtype=np.int32))
    k = cubehip.RawKernel(SRC, "(void(*)(int*, int))twice")
    k((1,), (4,), (ints, np.int32(4)))
    np.testing.assert_array_equal(ints.get(), [0, 2, 4, 6])
    with pytest.raises(TypeError, match="int32|float"):
        k((1,), (4,), (out, np.int32(4)))  # the cast's parameters are checked


def test_raw_module_is_one_module(dev):
    # device=: put takes no array, so without it it would run on the current device, which
    # need not be the one out is on (a module is one per device).
    m = cubehip.RawModule(code=SRC, name_expressions=["get<int>", "fill<int, 4>"], device=dev)
    out = dev.zeros(4, np.int32)
    m.get_function("put")((1,), (32,), (np.int32(41),))
    m.get_function("get<int>")((1,), (32,), (out,))
    assert out.get()[0] == 41, "a template kernel of the module reads the variable an extern \"C\" one wrote"
    m.get_function("fill<int, 4>")((1,), (4,), (out, np.int32(1)))
    np.testing.assert_array_equal(out.get(), [1, 2, 3, 4])
    with pytest.raises(cubehip.CompileError, match="name expression"):
        m.get_function("scale")((1,), (4,), (out, np.float32(1), np.int32(4)))


def test_a_name_expression_that_names_nothing(dev):
    with pytest.raises(cubehip.CompileError):
        cubehip.Kernel(SRC, "fill<float>", block=4, device=dev)  # fill takes two template arguments


def test_get_global_is_the_variable(dev):
    m = cubehip.RawModule(code=SRC, name_expressions=["get<int>"], device=dev)
    m.get_function("put")((1,), (32,), (np.int32(7),))
    g = m.get_global("counter")
    assert g.nbytes == 4 and g.dtype == np.uint8
    assert g.view(np.int32).get()[0] == 7, "what a kernel wrote"
    g.view(np.int32).set(np.array([21], np.int32))
    out = dev.zeros(1, np.int32)
    m.get_function("get<int>")((1,), (32,), (out,))
    assert out.get()[0] == 21, "a write through it is what the module's kernels read"
    g.release()
    with pytest.raises(cubehip.CubehipError):
        m.get_global("nope")
