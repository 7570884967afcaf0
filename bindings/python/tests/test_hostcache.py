"""The host memory under the arrays that large reads return: kept for the next read of the
same size once the array and every view of it are gone, never while one is alive, bounded
by its limit, and never shown to a caller with bytes the read did not write."""

import os
import subprocess
import sys

import numpy as np
import pytest

import cubehip

BROKEN = 'extern "C" __global__ void broken(const int* in, int* out) { out[0] = undeclared_name; }'
N = (8 << 20) // 4  # 8 MiB of int32: over the cache's 4 MiB threshold


def address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


@pytest.fixture
def cache():
    cubehip.free_host_cache()
    old = cubehip.set_host_cache_limit(1 << 30)
    yield
    cubehip.set_host_cache_limit(old)
    cubehip.free_host_cache()


def test_a_large_read_lands_on_memory_kept_for_the_next(dev, cache):
    d = dev.array(np.arange(N, dtype=np.int32))
    a = d.get()
    np.testing.assert_array_equal(a, np.arange(N))
    assert a.flags.c_contiguous and a.flags.writeable and a.dtype == np.int32 and a.shape == (N,)
    a[0] = -5  # the caller's array to write
    first = address(a)
    assert cubehip.host_cache_bytes() == 0
    del a
    assert cubehip.host_cache_bytes() == 8 << 20  # back, for the next read of the size
    b = d.get()
    assert address(b) == first, "the next read of the same size took another block"
    np.testing.assert_array_equal(b, np.arange(N))  # every byte of the new read, none of the old
    assert cubehip.host_cache_bytes() == 0
    d.release()


def test_a_view_keeps_the_memory_from_the_next_read(dev, cache):
    d = dev.array(np.arange(N, dtype=np.int32))
    a = d.get()
    view = a[N // 2 :]
    tail = view.reshape(-1, 2)[:, 1]  # a view of a view
    del a
    assert cubehip.host_cache_bytes() == 0, "the block came back while views of it live"
    d.set(np.full(N, 7, np.int32))
    b = d.get()  # must take another block
    np.testing.assert_array_equal(view, np.arange(N // 2, N))
    np.testing.assert_array_equal(tail, np.arange(N // 2 + 1, N, 2))
    np.testing.assert_array_equal(b, 7)
    del view, b
    assert cubehip.host_cache_bytes() == 8 << 20  # tail still holds one block
    del tail
    assert cubehip.host_cache_bytes() == 16 << 20
    d.release()


def test_shapes_and_dtypes_through_the_cache(dev, cache):
    for shape, dtype in [((1024, 2048), np.float32), ((3, 5, 7, 11, 13, 17), np.float64), ((N + 3,), np.uint8), ((N,), np.bool_)]:
        host = (np.arange(int(np.prod(shape))) % 3).astype(dtype).reshape(shape)
        d = dev.array(host)
        got = d.get()
        assert got.shape == shape and got.dtype == dtype
        np.testing.assert_array_equal(got, host)
        got2 = d.get(stream=0)  # the other path of get()
        np.testing.assert_array_equal(got2, host)
        d.release()


def test_a_failed_read_shows_nothing(dev, cache):
    broken = cubehip.Kernel(BROKEN, "broken", block=1, device=dev, compile=False)
    inp, out = dev.array(np.arange(4, dtype=np.int32)), dev.array(np.full(N, 9, np.int32))
    ok = dev.array(np.full(N, 5, np.int32))
    a = ok.get()
    del a  # the cache now holds a block of fives
    try:
        broken(1, inp, out)
    except cubehip.CompileError:
        pass
    with pytest.raises(cubehip.CarriedFailure):
        out.get()
    assert cubehip.host_cache_bytes() == 8 << 20  # the failed read's block is back
    for d in (inp, out, ok):
        d.release()


def test_the_limit_bounds_what_is_kept(dev, cache):
    d = dev.array(np.ones(N, np.int32))
    cubehip.set_host_cache_limit(0)
    a = d.get()
    del a
    assert cubehip.host_cache_bytes() == 0  # limit 0: nothing kept
    cubehip.set_host_cache_limit(20 << 20)
    arrays = [d.get() for _ in range(3)]  # 24 MiB alive
    del arrays
    assert cubehip.host_cache_bytes() == 16 << 20  # two of 8 MiB fit under 20 MiB
    assert cubehip.set_host_cache_limit(8 << 20) == 20 << 20
    assert cubehip.host_cache_bytes() == 8 << 20  # the oldest let go
    assert cubehip.free_host_cache() == 8 << 20
    assert cubehip.host_cache_bytes() == 0
    with pytest.raises(ValueError, match="byte count"):
        cubehip.set_host_cache_limit(-1)
    with pytest.raises(ValueError, match="byte count"):
        cubehip.set_host_cache_limit(1.5)
    d.release()


def test_small_reads_stay_numpys(dev, cache):
    d = dev.array(np.arange(1024, dtype=np.int32))
    a = d.get()
    assert a.flags.owndata  # a plain numpy array
    del a
    assert cubehip.host_cache_bytes() == 0
    d.release()


@pytest.mark.parametrize("value", ["lots", "-1", "2.5"])
def test_a_bad_limit_in_the_environment_is_refused(value):
    env = dict(os.environ, CUBEHIP_HOST_CACHE_MB=value)
    r = subprocess.run([sys.executable, "-c", "import cubehip"], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert f"CUBEHIP_HOST_CACHE_MB='{value}'" in r.stderr and "whole megabytes" in r.stderr


def test_the_environment_sets_the_limit():
    env = dict(os.environ, CUBEHIP_HOST_CACHE_MB="0")
    code = "import cubehip; print(cubehip.set_host_cache_limit(0))"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "0"
