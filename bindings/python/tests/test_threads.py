import sys
import threading

import numpy as np

import cubehip

ADD = 'extern "C" __global__ void add(int* p, int v, unsigned n) { unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] += v; }'


def test_threads_launch_and_read_at_once(dev):
    k = cubehip.Kernel(ADD, "add", block=64, device=dev)
    errors = []

    def work(t):
        try:
            s = dev.stream(100 + t)
            a = dev.zeros(500, np.int32, stream=s)
            for i in range(50):
                k(8, a, t + 1, 500, stream=s)
                if i % 10 == 9:
                    got = a.get(stream=s)
                    assert (got == (i + 1) * (t + 1)).all(), (t, i, got[:4])
            a.release()
        except BaseException as e:  # reported below, on the main thread
            errors.append(e)

    ts = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors


def test_one_kernel_shared_by_threads_on_one_array(dev):
    k = cubehip.Kernel(ADD, "add", block=64, device=dev)
    a = dev.zeros(64, np.int32)
    ts = [threading.Thread(target=lambda: [k(1, a, 1, 64) for _ in range(100)]) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    np.testing.assert_array_equal(a.get(), 400)


def test_threads_launch_one_kernel_with_their_own_arguments(dev):
    """One kernel, many threads, each with its own array and value: no thread's launch may
    run with another's arguments (the kernel's argument array is shared)."""
    k = cubehip.Kernel(ADD, "add", block=64, device=dev)
    arrays = [dev.zeros(64, np.int32) for _ in range(6)]

    def work(t):
        for _ in range(200):
            k(1, arrays[t], t + 1, 64)

    ts = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch between any two stores, as they may anywhere
    try:
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    finally:
        sys.setswitchinterval(switch)
    for t, a in enumerate(arrays):
        np.testing.assert_array_equal(a.get(), 200 * (t + 1))


def test_threads_launch_an_undeclared_kernel_with_their_own_arguments(dev):
    k = cubehip.Kernel("typedef int num;\n" + ADD.replace("int v", "num v"), "add", block=64, device=dev)
    assert k.params[1].kind is None  # the dynamic path
    arrays = [dev.zeros(64, np.int32) for _ in range(4)]

    def work(t):
        for _ in range(100):
            k(1, arrays[t], np.int32(t + 1), np.uint32(64))

    ts = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    finally:
        sys.setswitchinterval(switch)
    for t, a in enumerate(arrays):
        np.testing.assert_array_equal(a.get(), 100 * (t + 1))
