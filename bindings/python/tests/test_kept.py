"""Released arrays' buffers kept for reuse (cubehip._kept): an idle buffer serves the next
array of its size and stream without a call into the library; a buffer with anything of its
past that could reach its next use (work in flight, a failure, an unconfirmed write) is
released instead; memory figures never count what is kept."""

import threading

import numpy as np
import pytest

import cubehip
from cubehip import _array
from test_failures import BROKEN, launch

SIZE = 1 << 16


@pytest.fixture
def fresh():
    """A device of its own: these tests look at its kept buffers and memory usage."""
    d = cubehip.Device("cpu")
    yield d
    d.close()


def test_an_idle_buffer_serves_the_next_array_of_its_size(fresh):
    a = fresh.alloc(SIZE)
    h = a.handle
    a.release()
    assert fresh._kept.nbytes == SIZE
    b = fresh.alloc(SIZE)
    assert b.handle == h and fresh._kept.nbytes == 0
    # As good as a fresh allocation: it holds what is written to it.
    b.set(np.arange(SIZE, dtype=np.uint8))
    np.testing.assert_array_equal(b.get(), np.arange(SIZE, dtype=np.uint8))
    c = fresh.alloc(SIZE // 2)
    assert c.handle != h, "another size gets another buffer"
    d = fresh.empty(SIZE, np.uint8, stream=3)
    assert d.handle != h


def test_del_keeps_it_too(fresh):
    a = fresh.empty(SIZE // 4, np.float32)
    h = a.handle
    del a
    assert fresh.empty(SIZE // 4, np.float32).handle == h


def test_work_no_wait_confirmed_is_released_not_kept(fresh):
    a = fresh.array(np.ones(SIZE // 4, np.float32))  # a write: no wait confirmed it
    a.release()
    assert fresh._kept.nbytes == 0
    b = fresh.array(np.ones(SIZE // 4, np.float32))
    fresh.sync()  # confirmed now
    h = b.handle
    b.release()
    assert fresh.alloc(SIZE).handle == h


def test_a_buffer_carrying_a_failure_is_never_reused(fresh):
    broken = cubehip.Kernel(BROKEN, "broken", block=1, device=fresh, compile=False)
    inp, out = fresh.array(np.arange(4, dtype=np.int32)), fresh.empty(4, np.int32)
    launch(broken, inp, out)
    with pytest.raises(cubehip.CarriedFailure):
        out.check()
    with pytest.raises(cubehip.CubehipError, match="failed to compile"):
        fresh.sync()  # the stream's sync reports its failed launch, once
    fresh.sync()
    h = out.handle
    out.release()
    assert fresh._kept.nbytes == 0
    again = fresh.empty(4, np.int32)
    assert again.handle != h
    again.check()  # a fresh buffer carries nothing


def test_memory_figures_do_not_count_kept_buffers(fresh):
    base = fresh.memory_usage()
    arrays = [fresh.alloc(SIZE) for _ in range(8)]
    for a in arrays:
        a.release()
    assert fresh._kept.nbytes == 8 * SIZE
    now = fresh.memory_usage()  # the pools' reserved pages stay: what is in use does not
    assert (now.number_allocs, now.bytes_in_use) == (base.number_allocs, base.bytes_in_use)
    assert fresh._kept.nbytes == 0
    fresh.alloc(SIZE).release()
    fresh.memory_report()
    assert fresh._kept.nbytes == 0
    fresh.alloc(SIZE).release()
    fresh.memory_cleanup()
    assert fresh._kept.nbytes == 0
    fresh.alloc(SIZE).release()
    fresh.set_allocation_mode("persistent")
    assert fresh._kept.nbytes == 0
    fresh.set_allocation_mode("auto")


def test_the_limits_hold(fresh):
    arrays = [fresh.alloc(1024) for _ in range(cubehip._kept.KeptBuffers.PER_SIZE + 4)]
    for a in arrays:
        a.release()
    assert fresh._kept.nbytes == cubehip._kept.KeptBuffers.PER_SIZE * 1024
    big = fresh.alloc(cubehip._kept.KeptBuffers.LIMIT + 1)
    big.release()
    assert fresh._kept.nbytes == cubehip._kept.KeptBuffers.PER_SIZE * 1024, "past the limit: released"


def test_out_of_memory_gives_the_kept_buffers_back_and_retries(fresh, monkeypatch):
    fresh.alloc(SIZE).release()
    assert fresh._kept.nbytes == SIZE
    real = _array._alloc
    calls = []

    def once_out_of_memory(dev, stream, n):
        calls.append(n)
        return -2 if len(calls) == 1 else real(dev, stream, n)

    monkeypatch.setattr(_array, "_alloc", once_out_of_memory)
    a = fresh.alloc(2 * SIZE)
    assert len(calls) == 2 and fresh._kept.nbytes == 0 and a.handle
    monkeypatch.setattr(_array, "_alloc", lambda dev, stream, n: -2)
    with pytest.raises(cubehip.CubehipError, match="hipErrorOutOfMemory"):
        fresh.alloc(3 * SIZE)


def test_threads_never_share_a_buffer(fresh):
    errors = []

    def work(i):
        try:
            for j in range(200):
                a = fresh.alloc(256)
                a.set(np.full(256, (i * 7 + j) % 251, np.uint8))
                fresh.sync()
                assert (a.get() == (i * 7 + j) % 251).all()
                a.release()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors


def test_close_forgets_them(fresh):
    fresh.alloc(SIZE).release()
    fresh.close()
    assert fresh._kept.nbytes == 0
