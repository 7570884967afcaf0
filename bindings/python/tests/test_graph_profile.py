import numpy as np
import pytest

import cubehip

INC = 'extern "C" __global__ void inc(int* p, unsigned n) { unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] += 1; }'


def test_capture_and_replay(dev):
    k = cubehip.Kernel(INC, "inc", block=64, device=dev)
    s = dev.stream(7)
    a = dev.zeros(256, np.int32, stream=s)
    with s.capture() as g:
        for _ in range(10):
            k(4, a, 256, stream=s)
    s.sync()
    np.testing.assert_array_equal(a.get(stream=s), 0)  # recorded, not run
    g.replay()
    g.replay()
    s.sync()
    np.testing.assert_array_equal(a.get(stream=s), 20)
    g.destroy()
    with pytest.raises(ValueError, match="not recorded"):
        g.replay()
    g.destroy()
    with pytest.raises(RuntimeError, match="records once"):
        with g:
            pass


def test_capture_with_an_exception_drops_the_recording(dev):
    s = dev.stream(8)
    with pytest.raises(KeyError):
        with s.capture() as g:
            raise KeyError("inside")
    with pytest.raises(ValueError):
        g.replay()
    # The stream is not left capturing.
    a = dev.array(np.ones(4, np.int32), stream=s)
    np.testing.assert_array_equal(a.get(stream=s), 1)


def test_profile(dev):
    k = cubehip.Kernel(INC, "inc", block=64, device=dev)
    s = dev.stream(9)
    a = dev.zeros(4096, np.int32, stream=s)
    with s.profile() as p:
        for _ in range(5):
            k(64, a, 4096, stream=s)
    assert p.nanoseconds > 0 and p.elapsed == p.nanoseconds / 1e9
    np.testing.assert_array_equal(a.get(stream=s), 5)
    q = s.profile()
    with pytest.raises(ValueError, match="not ended"):
        q.elapsed
    with pytest.raises(ZeroDivisionError):
        with q:
            1 / 0
    with pytest.raises(ValueError):
        q.elapsed
    with pytest.raises(RuntimeError):
        with p:
            pass
