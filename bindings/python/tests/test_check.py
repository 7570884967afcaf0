"""The kernel checker from Python: Device(check=...) on the cpu device. A kernel with one bug
is reported with the right kernel, thread, parameter, offset and line, as dicts on the
exception; its fixed twin runs clean on the same device."""

import numpy as np
import pytest

import cubehip

OVERRUN = r"""
extern "C" __global__ void scale(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) y[i] = 2.0f * x[i];
}
"""

FIXED = OVERRUN.replace("i <= n", "i < n")

BRANCH_BARRIER = r"""
extern "C" __global__ void tail(float* out) {
  __shared__ float s[64];
  int t = threadIdx.x;
  s[t] = t;
  if (t < 32) {
    __syncthreads();
    out[t] = s[63 - t];
  }
}
"""

RACE = r"""
extern "C" __global__ void reduce(const float* in, float* out) {
  __shared__ float s[64];
  int t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  for (int k = 32; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
  }
  if (t == 0) out[0] = s[0];
}
"""

RACE_FIXED = RACE.replace("s[t + k];\n  }", "s[t + k];\n    __syncthreads();\n  }")

UNINIT = r"""
extern "C" __global__ void copy(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
"""


@pytest.fixture(scope="module")
def checked():
    d = cubehip.Device("cpu", check="all", cache_dir="-")
    yield d
    d.close()


def _reports(fn):
    with pytest.raises(cubehip.CubehipError) as e:
        fn()
    assert e.value.reports, e.value
    return e.value


def test_memcheck_names_parameter_offset_thread_and_line(checked):
    n = 100
    x = checked.array(np.arange(n, dtype=np.float32))
    y = checked.array(np.zeros(n, np.float32))
    checked.sync()
    k = cubehip.Kernel(OVERRUN, "scale", block=128, device=checked)
    k(1, x, y, n)
    e = _reports(checked.sync)
    assert isinstance(e, cubehip.CarriedFailure)
    assert e.reports_total == 2  # x[n] read and y[n] written, by thread n
    r = e.reports[0]
    assert r["check"] == "memcheck" and r["what"] == "out of bounds"
    assert r["kernel"] == "scale" and r["thread"] == (n, 0, 0) and r["block"] == (0, 0, 0)
    assert r["param"] == "x" and r["offset"] == 4 * n and r["size"] == 4 and not r["write"]
    assert r["line"] == 4 and r["buffer_size"] == 4 * n
    assert e.reports[1]["param"] == "y" and e.reports[1]["write"]
    with pytest.raises(cubehip.CarriedFailure) as again:
        y.get()
    assert again.value.reports and again.value.reports[0]["kernel"] == "scale"

    good = cubehip.Kernel(FIXED, "scale", block=128, device=checked)
    z = checked.array(np.zeros(n, np.float32))
    good(1, x, z, n)
    np.testing.assert_array_equal(z.get(), 2 * np.arange(n, dtype=np.float32))


def test_synccheck_reports_a_barrier_in_a_branch(checked):
    out = checked.array(np.zeros(64, np.float32))
    checked.sync()
    k = cubehip.Kernel(BRANCH_BARRIER, "tail", block=64, device=checked)
    k(1, out)
    e = _reports(checked.sync)
    r = e.reports[0]
    assert r["check"] == "synccheck" and r["line"] == 7 and r["other_thread"] == (32, 0, 0), r


def test_racecheck_names_both_threads_and_lines(checked):
    x = checked.array(np.ones(64, np.float32))
    out = checked.array(np.zeros(1, np.float32))
    checked.sync()
    cubehip.Kernel(RACE, "reduce", block=64, device=checked)(1, x, out)
    e = _reports(checked.sync)
    r = e.reports[0]
    assert r["check"] == "racecheck" and r["line"] == 8 and r["other_line"] == 8, r
    assert r["thread"] != r["other_thread"]
    fixed_out = checked.array(np.zeros(1, np.float32))
    cubehip.Kernel(RACE_FIXED, "reduce", block=64, device=checked)(1, x, fixed_out)
    assert fixed_out.get()[0] == 64


def test_synccheck_twin_runs_clean(checked):
    out = checked.array(np.zeros(64, np.float32))
    fixed = BRANCH_BARRIER.replace("  if (t < 32) {\n    __syncthreads();", "  __syncthreads();\n  if (t < 32) {")
    cubehip.Kernel(fixed, "tail", block=64, device=checked)(1, out)
    np.testing.assert_array_equal(out.get()[:32], np.arange(63, 31, -1, dtype=np.float32))


def test_initcheck_reports_a_read_of_unwritten_memory(checked):
    n = 16
    x = checked.empty(n, np.float32)  # allocated, never written
    y = checked.array(np.zeros(n, np.float32))
    checked.sync()
    cubehip.Kernel(UNINIT, "copy", block=16, device=checked)(1, x, y, n)
    e = _reports(checked.sync)
    assert e.reports[0]["check"] == "initcheck" and e.reports[0]["param"] == "x"
    assert e.reports_total == n
    w = checked.array(np.arange(n, dtype=np.float32))  # written: its twin reads clean
    z = checked.array(np.zeros(n, np.float32))
    cubehip.Kernel(UNINIT, "copy", block=16, device=checked)(1, w, z, n)
    np.testing.assert_array_equal(z.get(), np.arange(n, dtype=np.float32))


def test_a_bad_check_name_is_refused():
    with pytest.raises(cubehip.InvalidArgument, match="leakcheck"):
        cubehip.Device("cpu", check="memcheck,leakcheck")
    with pytest.raises(TypeError):
        cubehip.Device("cpu", check=[1, 2])


def test_other_errors_have_no_reports(dev):
    with pytest.raises(cubehip.CubehipError) as e:
        cubehip.Kernel("this is not C++", "k", device=dev)
    assert e.value.reports == [] and e.value.reports_total == 0
