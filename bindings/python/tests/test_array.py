import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import cubehip


DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
          np.float16, np.float32, np.float64, np.complex64, np.complex128, np.bool_]


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_every_dtype(dev, dtype):
    host = (np.arange(37) % 5).astype(dtype)
    d = dev.array(host)
    assert d.shape == (37,) and d.dtype == np.dtype(dtype) and d.nbytes == host.nbytes
    np.testing.assert_array_equal(d.get(), host)
    np.testing.assert_array_equal(d.numpy(), host)
    np.testing.assert_array_equal(np.asarray(d), host)
    d.release()


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(dtype=st.sampled_from([np.dtype(t) for t in DTYPES]),
                  shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=7)))
def test_round_trip_property(dev, host):
    d = dev.array(host)
    try:
        back = d.get()
        assert back.shape == host.shape and back.dtype == host.dtype
        assert back.tobytes() == host.tobytes()  # bit-exact, NaNs included
        new = np.ascontiguousarray(host[::-1]) if host.ndim else host.copy()
        d.set(new)
        assert d.get().tobytes() == new.tobytes()
    finally:
        d.release()


def test_non_contiguous_and_out(dev):
    host = np.arange(64, dtype=np.float64).reshape(8, 8).T  # Fortran order view
    d = dev.array(host)
    np.testing.assert_array_equal(d.get(), host)
    out = np.empty((8, 8), np.float64)
    assert d.get(out=out) is out
    np.testing.assert_array_equal(out, host)
    with pytest.raises(ValueError, match="out is"):
        d.get(out=np.empty((8, 9), np.float64))
    with pytest.raises(ValueError, match="C-contiguous"):
        d.get(out=np.empty((8, 8), np.float64, order="F"))
    with pytest.raises(TypeError):
        d.get(out=[0] * 64)


def test_empty_zeros_alloc(dev):
    e = dev.empty((3, 4), np.int32)
    assert e.shape == (3, 4) and e.size == 12 and e.ndim == 2 and e.itemsize == 4 and len(e) == 3
    z = dev.zeros((5,), np.float32)
    np.testing.assert_array_equal(z.get(), np.zeros(5, np.float32))
    b = dev.alloc(100)
    assert b.dtype == np.uint8 and b.nbytes == 100
    with pytest.raises(TypeError):
        dev.alloc(1.5)
    with pytest.raises(ValueError, match="negative"):
        dev.empty((-1,))
    with pytest.raises(TypeError, match="Python objects"):
        dev.empty(3, object)
    with pytest.raises(TypeError):
        dev.empty("abc")


def test_the_default_dtype_is_numpys(dev):
    """float64, as numpy.zeros and cupy.zeros give: a script moved from either keeps its
    arrays' dtype."""
    assert dev.zeros(3).dtype == np.zeros(3).dtype == np.float64
    assert dev.empty((2, 2)).dtype == np.empty((2, 2)).dtype
    assert cubehip.DeviceArray(dev, 2).dtype == np.float64
    np.testing.assert_array_equal(dev.zeros(4).get(), np.zeros(4))


def test_zero_size_and_zero_dim(dev):
    z = dev.empty((0, 5), np.float32)
    assert z.get().shape == (0, 5)
    z.set(np.empty((0, 5), np.float32))
    s = dev.array(np.float64(3.5))
    assert s.shape == () and s.get() == 3.5
    with pytest.raises(TypeError):
        len(s)


def test_set_refuses_wrong_dtype_and_shape(dev):
    d = dev.empty(4, np.float32)
    with pytest.raises(TypeError, match="dtype is float64"):
        d.set(np.zeros(4, np.float64))
    with pytest.raises(ValueError, match="shape is"):
        d.set(np.zeros(5, np.float32))
    d.set([1, 2, 3, 4])  # a list is converted to the array's dtype
    np.testing.assert_array_equal(d.get(), [1, 2, 3, 4])


def test_released_array_raises(dev):
    d = dev.array(np.ones(4, np.float32))
    with d:
        pass
    assert d.released and "released" in repr(d)
    for op in (d.get, lambda: d.set(np.ones(4, np.float32)), d.check, d.sync):
        with pytest.raises(ValueError, match="released"):
            op()
    d.release()


def test_views_share_memory(dev):
    d = dev.array(np.arange(12, dtype=np.int32))
    r = d.reshape(3, 4)
    assert r.shape == (3, 4)
    np.testing.assert_array_equal(r.get(), np.arange(12).reshape(3, 4))
    u = d.view(np.uint32)
    assert u.dtype == np.uint32
    with pytest.raises(ValueError):
        d.reshape(5)
    # Another itemsize, as numpy's view: the last dimension counts the new dtype's items.
    host = np.arange(12, dtype=np.int32)
    for dt, shape in ((np.int64, (6,)), (np.uint8, (48,)), (np.float32, (12,))):
        v = d.view(dt)
        assert (v.shape, v.dtype, v.nbytes) == (shape, np.dtype(dt), 48)
        np.testing.assert_array_equal(v.get(), host.view(dt))
    np.testing.assert_array_equal(r.view(np.uint16).get(), host.reshape(3, 4).view(np.uint16))
    assert r.view(np.int64).shape == (3, 2)
    with pytest.raises(ValueError, match="whole number"):
        d.view(np.uint8).reshape(16, 3).view(np.int32)  # 3 bytes a row
    with pytest.raises(ValueError, match="0-d"):
        dev.empty((), np.int32).view(np.int64)
    with pytest.raises(ValueError, match="view"):
        r.release()
    d.release()
    with pytest.raises(ValueError, match="released"):
        r.get()


def test_check_and_sync_clean_array(dev):
    d = dev.array(np.ones(8, np.int64))
    d.check()
    d.sync()


def test_streams_order_reads_after_writes(dev):
    s1, s2 = dev.stream(1), dev.stream(2)
    d = dev.empty(1000, np.float32, stream=s1)
    d.set(np.full(1000, 7, np.float32), stream=s1)
    np.testing.assert_array_equal(d.get(stream=s2), np.full(1000, 7, np.float32))


def test_gc_storm_returns_to_baseline(dev):
    import gc

    dev.sync()
    gc.collect()
    base = dev.memory_usage()
    for i in range(300):
        a = dev.array(np.full(1000 + i, i, np.int32))
        b = dev.empty(4096, np.uint8)
        del a, b
    gc.collect()
    dev.sync()
    after = dev.memory_usage()
    assert after.number_allocs == base.number_allocs
    assert after.bytes_in_use == base.bytes_in_use
