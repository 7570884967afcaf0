import threading

import numpy as np
import pytest

import cubehip
from conftest import PLATFORM


def test_library_found_and_versioned():
    assert cubehip.library_path.endswith(".so") or ".so." in cubehip.library_path
    assert cubehip.library_version()[0] == 0


def test_dir_is_the_public_api():
    """dir(cubehip) lists what the package offers: __all__ (and __version__), never a name
    that leaked from its imports (`from __future__ import annotations` leaves annotations)."""
    assert dir(cubehip) == sorted([*cubehip.__all__, "__version__"])
    public = {n for n in vars(cubehip) if not n.startswith("_")}
    assert public == set(cubehip.__all__)
    assert all(hasattr(cubehip, n) for n in cubehip.__all__)


def test_devices_have_properties():
    ds = cubehip.devices("cpu")
    assert len(ds) == cubehip.device_count("cpu") == 1
    p = ds[0]
    assert p.platform == "cpu" and p.index == 0
    assert p.name and p.arch
    assert p.warp_size in (32, 64)
    assert p.max_threads_per_block >= 256
    assert len(p.max_grid_size) == 3 and p.total_mem > 0
    assert p.shared_mem_per_block_optin >= p.shared_mem_per_block > 0
    assert cubehip.device_count("auto") >= 1


def test_unknown_platform_is_a_value_error():
    with pytest.raises(ValueError, match="platform must be one of"):
        cubehip.devices("tpu")
    with pytest.raises(ValueError):
        cubehip.Device("tpu")


def test_missing_device_index_is_an_error():
    with pytest.raises(cubehip.CubehipError) as e:
        cubehip.Device("cpu", 7)
    assert e.value.status != 0 and e.value.message
    with pytest.raises(ValueError):
        cubehip.Device("cpu", -1)
    with pytest.raises(TypeError):
        cubehip.Device("cpu", "0")


def test_context_manager_is_current_and_closes():
    with cubehip.Device(PLATFORM) as d:
        assert cubehip.get_device() is d
        assert d.platform == cubehip.devices(PLATFORM)[0].platform and d.platform in repr(d)
        a = d.array(np.arange(4, dtype=np.int32))
        k = cubehip.Kernel("extern \"C\" __global__ void f(int* p) { p[threadIdx.x] += 1; }", "f", block=4)
        assert k.device is d
    assert d.closed and "closed" in repr(d)
    assert cubehip.get_device() is not d
    # Everything made on a closed device raises; nothing crashes.
    with pytest.raises(cubehip.DeviceClosed):
        a.get()
    with pytest.raises(cubehip.DeviceClosed):
        d.empty(4)
    with pytest.raises(cubehip.DeviceClosed):
        d.sync()
    with pytest.raises(cubehip.InvalidHandle):
        k(1, a)
    with pytest.raises(cubehip.DeviceClosed):
        k.compile()
    d.close()  # twice is harmless
    a.release()
    k.destroy()


def test_current_device_is_per_thread():
    with cubehip.Device(PLATFORM) as d:
        seen = []
        t = threading.Thread(target=lambda: seen.append(cubehip.get_device()))
        t.start()
        t.join()
        assert seen[0] is not d


def test_sync_and_streams(dev):
    s = dev.stream(3)
    assert s.id == 3 and "Stream 3" in repr(s)
    s.sync()
    dev.sync()
    dev.sync(s)
    with pytest.raises(ValueError):
        dev.stream(-1)
    with pytest.raises(TypeError):
        dev.sync("x")


def test_memory_usage_report_cleanup(dev):
    before = dev.memory_usage()
    a = dev.empty(1 << 16, np.uint8)
    during = dev.memory_usage()
    assert during.number_allocs == before.number_allocs + 1
    assert during.bytes_in_use >= before.bytes_in_use + (1 << 16)
    report = dev.memory_report()
    assert isinstance(report, list) and "stream" in report[0] and "report" in report[0]
    a.release()
    # At most what was in use before: the session device's other arrays (an earlier test's,
    # collected meanwhile) may have gone back too.
    assert dev.memory_usage().bytes_in_use <= before.bytes_in_use
    dev.memory_cleanup()
    dev.set_allocation_mode("persistent", stream=5)
    p = dev.empty(100, np.float32, stream=5)
    p.release()
    dev.set_allocation_mode("auto", stream=5)
    with pytest.raises(ValueError, match="allocation mode"):
        dev.set_allocation_mode("forever")


def test_status_names():
    assert cubehip.status_name(2) == "hipErrorOutOfMemory"
    assert cubehip.status_name(10001) == "CUBEHIP_ERROR_INVALID_HANDLE"
