"""cubehip: HIP kernels from Python on AMD GPUs, NVIDIA GPUs and an embedded cpu device.

A thin layer over libcubehip's C ABI (ctypes), with numpy as its one dependency::

    import numpy as np, cubehip

    with cubehip.Device() as dev:            # amd, else nvidia, else the cpu device
        x = dev.array(np.arange(1024, dtype=np.float32))
        y = dev.zeros(1024, np.float32)
        k = cubehip.Kernel(SAXPY_SOURCE, "saxpy", block=256)
        k(4, x, y, 2.0, 1024)               # grid, then the kernel's arguments
        print(y.get())
"""

# No `from __future__ import annotations` here: it would leave the name annotations among
# the package's attributes, where dir(cubehip) and tab completion would offer it.
from . import _ffi
from ._array import DeviceArray
from ._device import (
    Device,
    DeviceProperties,
    Graph,
    MemoryUsage,
    Profile,
    Stream,
    can_access_peer,
    device_count,
    devices,
    get_device,
)
from ._errors import (
    CarriedFailure,
    CompileError,
    CubehipError,
    DeviceClosed,
    InvalidArgument,
    InvalidHandle,
    last_error,
    status_name,
)
from ._cupy import RawKernel, RawModule, translate_cucomplex
from ._hostcache import free_host_cache, host_cache_bytes, set_host_cache_limit
from ._import import asarray, from_dlpack
from ._kernel import Kernel, Module, Param, parse_params
from ._pointer import MemoryPointer

__version__ = "0.1.0"

# CuPy's names for the exceptions its RawKernel and RawModule raise, so that a CuPy program's
# except clauses catch cubehip's: CompileException (cupy.cuda.compiler) is CompileError, with
# its get_message() and dump(f); CUDADriverError and CUDARuntimeError (cupy.cuda.driver and
# cupy.cuda.runtime: a failed call's status) are CubehipError, whose status and name are the
# library's (HIP's statuses), and which every cubehip error (CompileError and CarriedFailure
# among them) is.
CompileException = CompileError
CUDADriverError = CubehipError
CUDARuntimeError = CubehipError

library_path: str = _ffi.library_path
"""The path libcubehip was loaded from."""


def library_version() -> tuple[int, int, int]:
    """The loaded library's version (major, minor, patch)."""
    v = _ffi.lib.cubehip_version()
    return v // 10000, v // 100 % 100, v % 100


__all__ = [
    "CUDADriverError",
    "CUDARuntimeError",
    "CarriedFailure",
    "CompileError",
    "CompileException",
    "CubehipError",
    "Device",
    "DeviceArray",
    "DeviceClosed",
    "DeviceProperties",
    "Graph",
    "InvalidArgument",
    "InvalidHandle",
    "Kernel",
    "MemoryPointer",
    "MemoryUsage",
    "Module",
    "Param",
    "Profile",
    "RawKernel",
    "RawModule",
    "Stream",
    "asarray",
    "can_access_peer",
    "device_count",
    "devices",
    "free_host_cache",
    "from_dlpack",
    "get_device",
    "host_cache_bytes",
    "last_error",
    "library_path",
    "library_version",
    "parse_params",
    "set_host_cache_limit",
    "status_name",
    "translate_cucomplex",
]


def __dir__() -> list[str]:
    # The public API only: the package's own modules (_ffi, _kernel, ...) are attributes of it
    # once imported, and are not the package's to offer.
    return sorted([*__all__, "__version__"])
