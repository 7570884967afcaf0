"""The C ABI of libcubehip (include/cubehip.h) as ctypes declarations, how the library is found,
and the hot calls: the extension module's (cubehip._native), else the same through ctypes.

Handles (``cubehip_device``, ``cubehip_buffer``, ...) are C structs of one ``uint64_t``. The
x86-64 and AArch64 calling conventions pass such a struct exactly as they pass a bare
``uint64_t``, so they are declared here as ``c_uint64``: a plain integer crosses ctypes
faster than a Structure, and the launch path pays for every conversion it makes.
"""

from __future__ import annotations

import ctypes
import os
import sys
from ctypes import (
    POINTER,
    Structure,
    Union,
    c_char,
    c_char_p,
    c_double,
    c_float,
    c_int32,
    c_int64,
    c_size_t,
    c_uint32,
    c_uint64,
    c_void_p,
)
from pathlib import Path
from typing import Any

__all__ = ["lib", "library_path", "find_library"]

# Statuses (cubehip.h).
SUCCESS = 0
HIP_ERROR_INVALID_VALUE = 1
HIP_ERROR_OUT_OF_MEMORY = 2
HIP_ERROR_INVALID_HANDLE = 400
ERROR_INVALID_HANDLE = 10001
ERROR_INVALID_ARGUMENT = 10002
ERROR_COMPILE = 10003
ERROR_CLOSED = 10004
ERROR_CAPTURE_REFUSED = 10005
ERROR_UNSUPPORTED = 10006
ERROR_INTERNAL = 10007
HIP_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720
KERNEL_COOPERATIVE = 1  # cubehip_kernel_desc.flags

# cubehip_access
ACCESS_DEFAULT, ACCESS_READ, ACCESS_WRITE, ACCESS_READ_WRITE = 0, 1, 2, 3

# cubehip_arg_kind
ARG_BUFFER = 1
ARG_I8, ARG_U8, ARG_I16, ARG_U16, ARG_I32, ARG_U32, ARG_I64, ARG_U64, ARG_F32, ARG_F64 = range(2, 12)
ARG_BYTES = 12
ARG_INFO = 13

handle = c_uint64


class DeviceProps(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("platform", c_char * 16),
        ("name", c_char * 256),
        ("arch", c_char * 64),
        ("total_mem", c_uint64),
        ("shared_mem_per_block", c_uint64),
        ("warp_size", c_int32),
        ("multiprocessor_count", c_int32),
        ("clock_rate_khz", c_int32),
        ("max_threads_per_block", c_int32),
        ("max_threads_dim", c_int32 * 3),
        ("max_grid_size", c_int32 * 3),
        ("major", c_int32),
        ("minor", c_int32),
        ("pci_bus_id", c_int32),
        ("pci_device_id", c_int32),
        ("pci_domain_id", c_int32),
        ("integrated", c_int32),
        ("shared_mem_per_block_optin", c_uint64),
    ]


class DeviceOptions(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("max_streams", c_uint32),
        ("cache_dir", c_char_p),
        ("staging_chunk", c_uint64),
        ("staging_depth", c_uint32),
        ("direct_launch", c_int32),
        ("check", c_char_p),
    ]


class CheckReport(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("check", c_char * 16),
        ("what", c_char * 128),
        ("kernel", c_char * 128),
        ("param", c_char * 64),
        ("file", c_char * 128),
        ("block", c_uint32 * 3),
        ("thread", c_uint32 * 3),
        ("address", c_uint64),
        ("access_size", c_uint32),
        ("write", c_int32),
        ("param_index", c_int32),
        ("offset", c_int64),
        ("buffer_size", c_uint64),
        ("line", c_int32),
        ("other_thread", c_uint32 * 3),
        ("other_line", c_int32),
    ]


class KernelDesc(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("source", c_char_p),
        ("entry", c_char_p),
        ("block", c_uint32 * 3),
        ("shared_mem", c_uint32),
        ("access", POINTER(c_int32)),
        ("access_count", c_size_t),
        ("options", POINTER(c_char_p)),
        ("option_count", c_size_t),
        ("flags", c_uint32),
    ]


class ModuleDesc(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("source", c_char_p),
        ("options", POINTER(c_char_p)),
        ("option_count", c_size_t),
        ("name_expressions", POINTER(c_char_p)),
        ("name_count", c_size_t),
        ("code", c_void_p),  # compiled code, exclusive with source
        ("code_size", c_size_t),
    ]


class _BufArg(Structure):
    _fields_ = [("buffer", c_uint64), ("offset", c_uint64)]


class _BytesArg(Structure):
    _fields_ = [("data", c_void_p), ("size", c_uint32), ("align", c_uint32)]


class _InfoArg(Structure):
    _fields_ = [("words", POINTER(c_uint64)), ("count", c_size_t)]


class _ArgValue(Union):
    _fields_ = [
        ("buffer", _BufArg),
        ("i64", c_int64),
        ("u64", c_uint64),
        ("f32", c_float),
        ("f64", c_double),
        ("bytes", _BytesArg),
        ("info", _InfoArg),
    ]


class Arg(Structure):
    """cubehip_arg: 24 bytes, read by the launch path as three 64-bit words."""

    _fields_ = [("kind", c_int32), ("access", c_int32), ("v", _ArgValue)]


assert ctypes.sizeof(Arg) == 24, "cubehip_arg must be 24 bytes"


class MemoryUsage(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("number_allocs", c_uint64),
        ("bytes_in_use", c_uint64),
        ("bytes_padding", c_uint64),
        ("bytes_reserved", c_uint64),
    ]


_status = c_int32
_u64p = POINTER(c_uint64)

# name: (argtypes, restype)
_PROTOTYPES = {
    "cubehip_status_string": ([_status], c_char_p),
    "cubehip_last_error": ([], c_char_p),
    "cubehip_version": ([], c_uint32),
    "cubehip_device_count": ([c_char_p, POINTER(c_int32)], _status),
    "cubehip_device_properties": ([c_char_p, c_int32, POINTER(DeviceProps)], _status),
    "cubehip_device_open": ([c_char_p, c_int32, POINTER(DeviceOptions), _u64p], _status),
    "cubehip_device_close": ([handle], _status),
    "cubehip_device_get_properties": ([handle, POINTER(DeviceProps)], _status),
    "cubehip_device_sync": ([handle, c_uint64], _status),
    "cubehip_buffer_alloc": ([handle, c_uint64, c_uint64, _u64p], _status),
    "cubehip_buffer_release": ([handle], _status),
    "cubehip_buffer_recycle": ([handle, POINTER(c_int32)], _status),
    "cubehip_buffer_size": ([handle, _u64p], _status),
    "cubehip_buffer_write": ([handle, c_uint64, c_uint64, c_void_p, c_uint64], _status),
    "cubehip_buffer_read": ([handle, c_uint64, c_uint64, c_void_p, c_uint64], _status),
    "cubehip_buffer_check": ([handle], _status),
    "cubehip_buffer_sync": ([handle], _status),
    "cubehip_buffer_device_pointer": ([handle, _u64p], _status),
    "cubehip_buffer_at": ([handle, c_uint64, _u64p, _u64p], _status),
    "cubehip_last_check_reports": ([POINTER(CheckReport), c_size_t, POINTER(c_size_t), POINTER(c_size_t)], _status),
    "cubehip_buffer_import": ([handle, c_uint64, c_uint64, c_uint64, c_void_p, c_void_p, _u64p], _status),
    "cubehip_stream_native_handle": ([handle, c_uint64, _u64p], _status),
    "cubehip_buffer_order_before": ([handle, c_uint64], _status),
    "cubehip_stream_wait_native": ([handle, c_uint64, c_uint64], _status),
    "cubehip_device_export_stream": ([handle, _u64p], _status),
    "cubehip_kernel_create": ([handle, POINTER(KernelDesc), _u64p], _status),
    "cubehip_module_create": ([handle, POINTER(ModuleDesc), _u64p], _status),
    "cubehip_module_kernel": ([handle, POINTER(KernelDesc), _u64p], _status),
    "cubehip_module_destroy": ([handle], _status),
    "cubehip_module_global_buffer": ([handle, c_uint64, c_char_p, _u64p], _status),
    "cubehip_module_file_read": ([c_char_p, POINTER(c_int32), c_void_p, c_size_t, POINTER(c_size_t)], _status),
    "cubehip_module_compile": ([handle], _status),
    "cubehip_module_log": ([handle, c_void_p, c_size_t, POINTER(c_size_t)], _status),
    "cubehip_kernel_compile": ([handle], _status),
    "cubehip_kernel_log": ([handle, c_void_p, c_size_t, POINTER(c_size_t)], _status),
    "cubehip_kernel_destroy": ([handle], _status),
    "cubehip_kernel_global_size": ([handle, c_char_p, _u64p], _status),
    "cubehip_kernel_global_write": ([handle, c_uint64, c_char_p, c_void_p, c_uint64], _status),
    "cubehip_kernel_global_read": ([handle, c_uint64, c_char_p, c_void_p, c_uint64], _status),
    "cubehip_kernel_max_active_blocks": ([handle, c_uint32, c_uint32, POINTER(c_int32)], _status),
    "cubehip_kernel_get_attribute": ([handle, c_int32, POINTER(c_int32)], _status),
    "cubehip_kernel_set_attribute": ([handle, c_int32, c_int32], _status),
    "cubehip_launch": ([handle, c_uint64, c_void_p, c_void_p, c_size_t], _status),
    "cubehip_launch_dynamic": ([handle, c_uint64, handle, c_void_p, c_size_t], _status),
    "cubehip_capture_begin": ([handle, c_uint64], _status),
    "cubehip_capture_end": ([handle, c_uint64, _u64p], _status),
    "cubehip_graph_replay": ([handle], _status),
    "cubehip_graph_destroy": ([handle], _status),
    "cubehip_profile_start": ([handle, c_uint64, _u64p], _status),
    "cubehip_profile_stop": ([handle, _u64p], _status),
    "cubehip_profile_abandon": ([handle], _status),
    "cubehip_memory_usage_get": ([handle, POINTER(MemoryUsage)], _status),
    "cubehip_memory_report": ([handle, c_void_p, c_size_t, POINTER(c_size_t)], _status),
    "cubehip_memory_cleanup": ([handle], _status),
    "cubehip_memory_set_allocation_mode": ([handle, c_uint64, c_int32], _status),
    # Several devices.
    "cubehip_device_can_access_peer": ([c_char_p, c_int32, c_int32, POINTER(c_int32)], _status),
    "cubehip_device_peers": ([handle, POINTER(c_int32), c_int32, POINTER(c_int32)], _status),
    "cubehip_buffer_copy_from": ([handle, c_uint64, handle], _status),
}

_SONAMES = ("libcubehip.so", "libcubehip.so.0")


def _candidates() -> list[tuple[str, Path | str]]:
    """Where the library is looked for, in order, each with why it is looked for there."""
    out: list[tuple[str, Path | str]] = []
    here = Path(__file__).resolve().parent / "_lib"
    for name in _SONAMES:
        out.append(("inside the package", here / name))
    env = os.environ.get("CUBEHIP_LIBRARY")
    if env:
        out.append(("$CUBEHIP_LIBRARY", Path(env)))
    for name in _SONAMES:
        # A bare soname: the dynamic loader's own search (LD_LIBRARY_PATH, ld.so.cache, /usr/lib).
        out.append(("the system's library path", name))
    return out


def find_library() -> tuple[ctypes.CDLL, str]:
    """Loads libcubehip: the copy inside the package (a wheel carries one), else the file
    $CUBEHIP_LIBRARY names, else the system's. Raises OSError listing every place looked at."""
    tried: list[str] = []
    env = os.environ.get("CUBEHIP_LIBRARY")
    for why, cand in _candidates():
        if isinstance(cand, Path):
            if not cand.exists():
                tried.append(f"{cand} ({why}): no such file")
                # $CUBEHIP_LIBRARY names one file on purpose: a wrong path is an error, not a
                # reason to fall through to some other copy of the library.
                if why == "$CUBEHIP_LIBRARY" and env:
                    break
                continue
        try:
            return ctypes.CDLL(str(cand), mode=ctypes.RTLD_GLOBAL), str(cand)
        except OSError as e:
            tried.append(f"{cand} ({why}): {e}")
            if why == "$CUBEHIP_LIBRARY":
                break
    raise OSError(
        "cubehip: cannot load libcubehip.so; looked at:\n  "
        + "\n  ".join(tried)
        + "\nInstall a cubehip wheel (it carries the library), set CUBEHIP_LIBRARY to the "
        "library's path, or install it where the dynamic loader finds it (scripts/build-capi.sh --install)."
    )


lib, library_path = find_library()
for _name, (_args, _res) in _PROTOTYPES.items():
    _f = getattr(lib, _name)
    _f.argtypes = _args
    _f.restype = _res

def _load_native() -> tuple[Any, str]:
    """cubehip._native, the package's C extension (its _native.c), bound to the library just
    loaded, and why not when it cannot be used: None with the reason when it was not built
    (a source tree without ``python3 setup.py build_ext --inplace``), this interpreter
    cannot load it (one without the stable ABI, as free-threaded builds are), or
    CUBEHIP_PYTHON_NATIVE=0 asks for the ctypes path."""
    if os.environ.get("CUBEHIP_PYTHON_NATIVE", "1") == "0":
        return None, "CUBEHIP_PYTHON_NATIVE=0"
    try:
        from . import _native
    except ImportError as e:
        return None, f"cubehip._native cannot be imported ({e})"
    try:
        _native.bind(library_path)
    except ImportError as e:  # a library without a function it calls
        return None, str(e)
    import atexit

    # At exit, before the interpreter stops letting other threads take the GIL: from then
    # on the releases and deleters the library's threads (or a consumer's) call do nothing.
    atexit.register(_native.exiting)
    return _native, ""


native, native_missing = _load_native()
"""The extension module, or None where the package runs on ctypes alone (native_missing says why)."""


def _ctypes_functions() -> tuple[Any, ...]:
    """The hot calls through ctypes, with the extension's arguments and results, where the
    extension is not there: each costs 0.2-0.45 us more. The launch keeps the GIL (a PyDLL
    function), as the extension's does."""
    launch = ctypes.PyDLL(library_path).cubehip_launch
    launch.argtypes, launch.restype = _PROTOTYPES["cubehip_launch"]

    def buffer_alloc(device: int, stream: int, size: int) -> int:
        out = c_uint64()
        st = lib.cubehip_buffer_alloc(device, stream, size, ctypes.byref(out))
        return -st if st else out.value

    def buffer_recycle(buffer: int) -> int:
        kept = c_int32()
        st = lib.cubehip_buffer_recycle(buffer, ctypes.byref(kept))
        return -st if st else kept.value

    def stream_native_handle(device: int, stream: int) -> int:
        out = c_uint64()
        st = lib.cubehip_stream_native_handle(device, stream, ctypes.byref(out))
        return -st if st else out.value

    return (launch, lib.cubehip_device_sync, buffer_alloc, lib.cubehip_buffer_release, buffer_recycle,
            lib.cubehip_buffer_read, lib.cubehip_graph_replay, stream_native_handle)


# launch(kernel, stream, grid_address, args_address, count) -> status
# device_sync(device, stream) -> status
# buffer_alloc(device, stream, size) -> handle, or minus the status
# buffer_release(buffer) -> status
# buffer_recycle(buffer) -> 1 kept, 0 released, or minus the status
# buffer_read(buffer, stream, offset, dst_address, size) -> status
# graph_replay(graph) -> status
# stream_native_handle(device, stream) -> the stream's native handle, or minus the status
(
    fast_launch,
    fast_device_sync,
    fast_buffer_alloc,
    fast_buffer_release,
    fast_buffer_recycle,
    fast_buffer_read,
    fast_graph_replay,
    fast_stream_native_handle,
) = (
    (native.launch, native.device_sync, native.buffer_alloc, native.buffer_release, native.buffer_recycle,
     native.buffer_read, native.graph_replay, native.stream_native_handle)
    if native is not None else _ctypes_functions()
)

if sys.byteorder != "little":  # pragma: no cover - every platform cubehip runs on is little-endian
    raise ImportError("cubehip: the launch path packs arguments little-endian")
