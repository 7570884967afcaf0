"""A kernel that faults on the cpu device (a store to an unmapped address, __trap()) fails
its launch, as on a GPU: the array it writes carries the fault as an exception naming the
kernel, and the interpreter lives on to run kernels on a device opened after it. Only on
the cpu device, each test on a device of its own: a GPU's fault is sticky for the whole
process, and the session's device must not see this one's fault."""

import numpy as np
import pytest

import cubehip

FAULTS = r"""
#include <hip/hip_runtime.h>
extern "C" __global__ void store_at(int* out, unsigned long long bad) {
  if (bad != 0) *(volatile int*)bad = 1;
  out[threadIdx.x] = threadIdx.x;
}
extern "C" __global__ void traps(int* out) {
  out[threadIdx.x] = 1;
  __trap();
}
"""

ILLEGAL_ADDRESS, LAUNCH_FAILURE = 700, 719


@pytest.fixture
def cpu(dev):
    if dev.platform != "cpu":
        pytest.skip("a GPU's fault is sticky: it would end every later test's device")
    d = cubehip.Device("cpu")
    yield d
    d.close()


@pytest.mark.parametrize(
    "entry, args, status",
    [("store_at", (16,), ILLEGAL_ADDRESS), ("traps", (), LAUNCH_FAILURE)],
)
def test_a_faulting_kernel_raises_and_the_interpreter_lives(cpu, entry, args, status):
    k = cubehip.Kernel(FAULTS, entry, block=4, device=cpu)
    out = cpu.array(np.full(4, -1, np.int32))
    k(1, out, *args)
    with pytest.raises(cubehip.CarriedFailure) as e:
        out.get()
    assert e.value.status == status
    assert entry in e.value.message

    later = cubehip.Device("cpu")
    try:
        ok = cubehip.Kernel(FAULTS, "store_at", block=4, device=later)
        fresh = later.zeros(4, np.int32)
        ok(1, fresh, 0)
        np.testing.assert_array_equal(fresh.get(), np.arange(4))
    finally:
        later.close()


def test_sync_reports_the_fault_a_read_reported_first(cpu):
    # A stream's sync reports the first failure of its work since the last sync, once,
    # even where a read of the faulted array raised it already: a program that launches
    # and syncs without reading sees its work failed.
    k = cubehip.Kernel(FAULTS, "traps", block=4, device=cpu)
    out = cpu.array(np.zeros(4, np.int32))
    k(1, out)
    with pytest.raises(cubehip.CarriedFailure):
        out.get()
    with pytest.raises(cubehip.CubehipError) as e:
        cpu.sync()
    assert e.value.status == LAUNCH_FAILURE
    cpu.sync()  # once: the cpu device runs on after a fault


def test_sync_reports_a_compile_error_the_call_raised(cpu):
    broken = cubehip.Kernel("extern \"C\" __global__ void b(int* o) { o[0] = nope; }", "b", block=1,
                            device=cpu, compile=False)
    out = cpu.zeros(4, np.int32)
    with pytest.raises(cubehip.CompileError):
        broken(1, out)
    with pytest.raises(cubehip.CubehipError, match="failed to compile"):
        cpu.sync()
    cpu.sync()
