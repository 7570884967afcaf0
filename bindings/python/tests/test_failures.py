"""The failure cases a Python caller can reach, end to end: a failed piece of work is carried
by exactly the arrays it would have written, returned by their next read, check or sync on
any stream, ends a profile window it falls in, and is healed by a later write."""

import numpy as np
import pytest

import cubehip

BROKEN = 'extern "C" __global__ void broken(const int* in, int* out) { out[0] = undeclared_name; }'


@pytest.fixture
def broken(dev):
    return cubehip.Kernel(BROKEN, "broken", block=1, device=dev, compile=False)


def launch(k, *args, **kw):
    try:
        k(1, *args, **kw)
    except cubehip.CompileError:
        pass  # a platform may compile at the launch itself; the outputs carry it either way


def test_outputs_carry_the_failure_inputs_do_not(dev, broken):
    assert broken.io == (1, 3)
    inp, out = dev.array(np.arange(4, dtype=np.int32)), dev.array(np.full(4, 9, np.int32))
    launch(broken, inp, out)
    inp.check()
    np.testing.assert_array_equal(inp.get(), np.arange(4))
    for stream in (None, 1, dev.stream(7)):  # on any stream
        with pytest.raises(cubehip.CarriedFailure) as e:
            out.get(stream=stream)
        assert e.value.status == 10003 and e.value.name == "CUBEHIP_ERROR_COMPILE"
        assert "undeclared_name" in e.value.message
    host = np.full(4, -1, np.int32)
    with pytest.raises(cubehip.CarriedFailure):
        out.get(out=host)
    np.testing.assert_array_equal(host, -1)  # a failed read leaves the destination as it was


def test_io_decides_which_arrays_carry_it(dev):
    k = cubehip.Kernel(BROKEN, "broken", block=1, io=["rw", "r"], device=dev, compile=False)
    a, b = dev.zeros(4, np.int32), dev.zeros(4, np.int32)
    launch(k, a, b)
    with pytest.raises(cubehip.CarriedFailure):
        a.check()
    b.check()


def test_a_failure_ends_its_profile_window(dev, broken):
    s = dev.stream(11)
    inp, out = dev.zeros(4, np.int32, stream=s), dev.zeros(4, np.int32, stream=s)
    with pytest.raises(cubehip.CarriedFailure, match="profile"):
        with s.profile() as p:
            launch(broken, inp, out, stream=s)
    with pytest.raises(ValueError):
        p.elapsed
    with s.profile() as q:  # the next window is clean
        pass
    assert q.nanoseconds is not None


def test_a_failure_recorded_in_a_graph_is_carried(dev, broken):
    s = dev.stream(12)
    inp, out = dev.zeros(4, np.int32, stream=s), dev.zeros(4, np.int32, stream=s)
    try:
        with s.capture() as g:
            launch(broken, inp, out, stream=s)
        g.replay()
    except cubehip.CubehipError as e:
        assert e.status in (10003, 10005)  # refused at capture_end: CUBEHIP_ERROR_CAPTURE_REFUSED
    with pytest.raises(cubehip.CarriedFailure):
        out.sync()


def test_a_write_heals(dev, broken):
    inp, out = dev.zeros(4, np.int32), dev.zeros(4, np.int32)
    launch(broken, inp, out)
    with pytest.raises(cubehip.CarriedFailure):
        out.sync()
    out.set(np.arange(4, dtype=np.int32))
    out.check()
    np.testing.assert_array_equal(out.get(), np.arange(4))


def test_a_good_launch_after_a_compile_fix(dev, broken):
    out = dev.zeros(4, np.int32)
    launch(broken, dev.zeros(4, np.int32), out)
    fixed = cubehip.Kernel(BROKEN.replace("broken", "fixed").replace("undeclared_name", "in[0] + 1"), "fixed",
                           block=1, device=dev, io=("r", "w"))
    fixed(1, dev.array(np.full(4, 41, np.int32)), out)  # a kernel that only writes out heals it
    assert out.get()[0] == 42


def test_a_read_write_output_carries_its_failure_on(dev, broken):
    # A kernel that reads what it writes (the default for a non-const pointer) cannot heal
    # a buffer that carries a failure: it would compute from bytes nothing wrote.
    out = dev.zeros(4, np.int32)
    launch(broken, dev.zeros(4, np.int32), out)
    inplace = cubehip.Kernel('extern "C" __global__ void inc(int* out) { out[0] += 1; }', "inc", block=1, device=dev)
    inplace(1, out)
    with pytest.raises(cubehip.CarriedFailure):
        out.get()
