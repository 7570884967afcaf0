"""Fixtures: one device for the session, on the platform $CUBEHIP_PLATFORM picks ("auto":
amd, else nvidia, else the cpu device, which is what runs where there is no GPU)."""

from __future__ import annotations

import os

import pytest

import cubehip

SAXPY = r"""
#include <hip/hip_runtime.h>
extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"""

PLATFORM = os.environ.get("CUBEHIP_TEST_PLATFORM", "auto")


@pytest.fixture(scope="session")
def dev():
    d = cubehip.Device(PLATFORM)
    yield d
    d.close()


@pytest.fixture(autouse=True)
def _synced(request):
    """Each test starts with the session device's stream 0 synced: a stream's sync reports
    the first failure of its work since the last sync, so a failure a test made on purpose
    and did not sync would be reported by the next test's sync."""
    yield
    if "dev" in request.fixturenames:
        try:
            request.getfixturevalue("dev").sync()
        except cubehip.CubehipError:
            pass


@pytest.fixture(scope="session")
def saxpy(dev):
    return cubehip.Kernel(SAXPY, "saxpy", block=64, device=dev)


def pytest_configure(config):
    # The suite is of the package as it ships: with its extension (cubehip._native), built in
    # place beside the sources (python3 setup.py build_ext --inplace) or installed with the
    # wheel. Its absence would quietly test the ctypes fallback in its place, which has a
    # test of its own (test_fastcalls.py runs it with CUBEHIP_PYTHON_NATIVE=0).
    from cubehip import _ffi

    if _ffi.native is None and os.environ.get("CUBEHIP_PYTHON_NATIVE", "1") != "0":
        raise pytest.UsageError(
            f"cubehip's extension is not in use ({_ffi.native_missing}); build it: "
            "cd bindings/python && python3 setup.py build_ext --inplace"
        )
