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


@pytest.fixture(scope="session")
def saxpy(dev):
    return cubehip.Kernel(SAXPY, "saxpy", block=64, device=dev)
