"""Zero-copy export of device arrays: DLPack capsules and ``__cuda_array_interface__``.

DLPack is the protocol numpy, CuPy, PyTorch and JAX share for handing a tensor across
libraries without a copy: the producer wraps a ``DLManagedTensor`` (the memory's address,
device, shape, dtype, and a deleter) in a PyCapsule named ``"dltensor"``. A consumer that
takes the tensor renames the capsule ``"used_dltensor"`` and calls the deleter once it is
done with the memory; a capsule nobody consumed calls the deleter itself when it is
garbage collected. Either way the deleter runs exactly once, and it is what lets go of the
device array that owns the memory.

The export is the extension's (cubehip._native, one call: the order the consumer asked for,
the device pointer, the tensor and its capsule, whose deleter runs while an exception is in
flight and on any thread, which Python code cannot). Without the extension it is made here
with ctypes: the structs live in ctypes buffers kept alive (in ``_live``) until their
deleter runs.
"""

from __future__ import annotations

import ctypes
import threading
from ctypes import POINTER, Structure, c_char_p, c_int32, c_int64, c_uint8, c_uint16, c_uint64, c_void_p
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _ffi
from ._errors import check, check_carried

_native = _ffi.native

if TYPE_CHECKING:
    from ._array import DeviceArray

# DLDeviceType values (dlpack.h).
KDL_CPU = 1
KDL_CUDA = 2
KDL_ROCM = 10

# The DLPack device type of each platform's memory. The cpu device's memory is host memory,
# so numpy (which takes kDLCPU only) reads a cpu-device array in place.
DEVICE_TYPES = {"cpu": KDL_CPU, "nvidia": KDL_CUDA, "amd": KDL_ROCM}

# DLDataTypeCode values, by numpy dtype kind.
_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", DLDevice),
        ("ndim", c_int32),
        ("dtype", DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("byte_offset", c_uint64),
    ]


class DLManagedTensor(Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", _Deleter)]


class DLManagedTensorVersioned(Structure):
    """DLPack 1.0's tensor, in a "dltensor_versioned" capsule."""


_DeleterVersioned = ctypes.CFUNCTYPE(None, POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [
    ("major", ctypes.c_uint32),
    ("minor", ctypes.c_uint32),
    ("manager_ctx", c_void_p),
    ("deleter", _DeleterVersioned),
    ("flags", c_uint64),
    ("dl_tensor", DLTensor),
]


def wants_versioned(max_version: Any) -> bool:
    """Whether __dlpack__'s max_version asks for DLPack 1.0's versioned tensor: a (major,
    minor) tuple from major 1 on. None (a consumer older than 1.0) and major 0 get the
    legacy one, which every version of the protocol reads."""
    if max_version is None:
        return False
    if type(max_version) is not tuple or len(max_version) != 2 or not all(type(v) is int for v in max_version):
        raise BufferError(f"__dlpack__: max_version {max_version!r} is not a (major, minor) tuple of ints")
    return max_version[0] >= 1


_dl_dtypes: dict[np.dtype, DLDataType] = {}


def dtype_of(dt: np.dtype) -> DLDataType:
    t = _dl_dtypes.get(dt)
    if t is None:
        code = _CODES.get(dt.kind)
        if code is None or dt.byteorder == ">":
            raise BufferError(f"dtype {dt} has no DLPack data type")
        t = _dl_dtypes[dt] = DLDataType(code, dt.itemsize * 8, 1)
    return t


# __dlpack__'s orders: none (the consumer synchronizes itself), a host wait for the array's
# writes, or its writes ordered before the consumer's stream on the device.
ORDER_NONE, ORDER_HOST, ORDER_STREAM = 0, 1, 2

# The CUDA driver's handles of the default streams, which the array API's stream argument uses.
CU_STREAM_LEGACY, CU_STREAM_PER_THREAD = 1, 2


def order_for(platform: str, stream: Any) -> tuple[int, int]:
    """(order, native stream) for __dlpack__'s stream argument, as the array API standard
    reads it, or BufferError for a stream the array's memory has no meaning for.

    - cpu (kDLCPU): only None, and then a host wait for the array's writes.
    - nvidia (kDLCUDA): None and 1 the legacy default stream, 2 the per-thread default
      stream, a larger int that stream's handle (a CUstream); 0 is refused (ambiguous).
    - amd (kDLROCM): None and 0 the null stream, a larger int than 2 that stream's handle (a
      hipStream_t); 1 and 2 are refused (they name no ROCm stream).
    - -1 on a GPU: no ordering at all (the consumer has ordered it itself).
    """
    if platform == "cpu":
        if stream is None:
            return ORDER_HOST, 0
        raise BufferError(f"__dlpack__: stream {stream!r} given for kDLCPU memory, which has no streams (stream must be None)")
    if stream is None:
        return ORDER_STREAM, CU_STREAM_LEGACY if platform == "nvidia" else 0
    if type(stream) is not int or not -1 <= stream < 2**64:
        raise BufferError(f"__dlpack__: stream {stream!r} is not a stream of the {platform} device (None, -1, or an int stream handle)")
    if stream == -1:
        return ORDER_NONE, 0
    if platform == "nvidia":
        if stream == 0:
            raise BufferError("__dlpack__: stream 0 is ambiguous for CUDA and refused: None or 1 is the legacy default stream, 2 the per-thread one")
    elif stream in (1, 2):
        raise BufferError(f"__dlpack__: stream {stream} names no ROCm stream: None or 0 is the null stream, else a hipStream_t")
    return ORDER_STREAM, stream


def code_bits(dt: np.dtype) -> tuple[int, int]:
    """dt's DLPack (code, bits), or BufferError: the extension's __dlpack__ asks this once
    per dtype."""
    t = _dl_dtypes.get(dt) or dtype_of(dt)
    return t.code, t.bits


def export(arr: "DeviceArray", h: int, order: int, native_stream: int, versioned: bool = False) -> Any:
    """A "dltensor" capsule over arr's buffer h ("dltensor_versioned", DLPack 1.0's, when
    versioned), after the order __dlpack__ asked for; it keeps arr's memory alive until its
    deleter runs. With the extension this is one call (the order, the device pointer, the
    tensor, the capsule)."""
    platform = arr.device.platform
    device_type = DEVICE_TYPES[platform]
    device_id = 0 if platform == "cpu" else arr.device.index
    dt = _dl_dtypes.get(arr.dtype) or dtype_of(arr.dtype)
    if _native is not None:
        owner = arr._base if arr._base is not None else arr
        r = _native.dlpack_export(owner, h, order, native_stream, device_type, device_id, arr.shape, dt.code, dt.bits, versioned)
        if type(r) is int:
            _refused(r, order)
        return r
    return _ctypes_export(arr, h, order, native_stream, device_type, device_id, dt, versioned)


def _refused(st: int, order: int) -> None:
    check_carried(st, {ORDER_HOST: "cubehip_buffer_sync", ORDER_STREAM: "cubehip_buffer_order_before"}.get(order, "cubehip_buffer_device_pointer"))


def order_before(h: int, order: int, native_stream: int) -> None:
    """The order of an export made without the extension (and of __cuda_array_interface__)."""
    if order == ORDER_HOST:
        st = _ffi.lib.cubehip_buffer_sync(h)
    elif order == ORDER_STREAM:
        st = _ffi.lib.cubehip_buffer_order_before(h, native_stream)
    else:
        return
    if st:
        _refused(st, order)


def export_stream(dev: Any) -> int:
    """The device's stream for exports to name (cubehip_device_export_stream): one the device
    never runs its own work on, so a consumer waiting on it waits only for what an export
    ordered before it."""
    h = dev._live()
    s = _export_streams.get(h)
    if s is None:
        out = c_uint64()
        check(_ffi.lib.cubehip_device_export_stream(h, ctypes.byref(out)), "cubehip_device_export_stream")
        s = _export_streams[h] = out.value
    return s


_export_streams: dict[int, int] = {}


def live_exports() -> int:
    """How many exported tensors are still held by a consumer or an unconsumed capsule."""
    if _native is not None:
        return _native.live_exports()
    return len(_live)


# An array's exports are counted in its lease, which its _exports slot holds from its first
# export on (0 before): the extension's (a capsule whose count only C code touches, under
# the GIL) or, without the extension, a _Lease. leave(lease, h) is True when exports of the
# memory are live, and the last of them then gives buffer h back (the owner's
# _export_pending_gone); False when none is, and the caller gives it back itself.


class _Lease:
    __slots__ = ("count", "pending")

    def __init__(self) -> None:
        self.count = 0
        self.pending = 0


def _py_leave(lease: Any, h: int) -> bool:
    if type(lease) is not _Lease:
        return False
    with _lock:
        if lease.count == 0:
            return False
        lease.pending = h
        return True


def _py_count(lease: Any) -> int:
    return lease.count if type(lease) is _Lease else 0


leave = _native.export_leave if _native is not None else _py_leave
export_count = _native.export_count if _native is not None else _py_count


# --- the export without the extension: ctypes structs and callbacks ----------------------------


class _Export:
    """One exported tensor: its struct, its shape array and the device array it keeps alive."""

    __slots__ = ("tensor", "shape", "owner", "lease")

    def __init__(self, tensor: DLManagedTensor, shape: Any, owner: "DeviceArray", lease: _Lease) -> None:
        self.tensor, self.shape, self.owner, self.lease = tensor, shape, owner, lease


# Every export whose deleter has not run yet, by the tensor's address. The entry is what
# keeps the struct's memory and the owning array alive; popping it is the one release, so a
# deleter called twice finds nothing the second time (and reads nothing of the freed struct).
_live: dict[int, _Export] = {}
_lock = threading.RLock()  # the counts of every exporting array, too


def _give_back(addr: int) -> None:
    with _lock:
        ex = _live.pop(addr or 0, None)
        if ex is None:
            return
        lease = ex.lease
        lease.count -= 1
        h = lease.pending if lease.count == 0 else 0
        lease.pending = 0 if h else lease.pending
    if h:
        ex.owner._export_pending_gone(h)


_delete = _Deleter(lambda m: _give_back(ctypes.cast(m, c_void_p).value or 0))
_delete_versioned = _DeleterVersioned(lambda m: _give_back(ctypes.cast(m, c_void_p).value or 0))

_py = ctypes.PyDLL(None)  # the interpreter's own functions, declared here for this module alone
_is_valid = _py.PyCapsule_IsValid
_is_valid.argtypes, _is_valid.restype = [c_void_p, c_char_p], c_int32
_get_pointer = _py.PyCapsule_GetPointer
_get_pointer.argtypes, _get_pointer.restype = [c_void_p, c_char_p], c_void_p
_new_capsule = _py.PyCapsule_New
_new_capsule.argtypes, _new_capsule.restype = [c_void_p, c_char_p, c_void_p], ctypes.py_object


@ctypes.CFUNCTYPE(None, c_void_p)
def _capsule_destructor(capsule: int) -> None:
    # A capsule still named "dltensor" (or "dltensor_versioned") was never consumed: it
    # gives the tensor back itself.
    for name in (b"dltensor", b"dltensor_versioned"):
        if _is_valid(capsule, name):
            _give_back(_get_pointer(capsule, name) or 0)


# The capsule keeps a pointer to its name, not a copy: the names must outlive every capsule.
_NAME = ctypes.create_string_buffer(b"dltensor")
_NAME_VERSIONED = ctypes.create_string_buffer(b"dltensor_versioned")


def _ctypes_export(arr: "DeviceArray", h: int, order: int, native_stream: int, device_type: int, device_id: int,
                   dt: DLDataType, versioned: bool = False) -> Any:
    order_before(h, order, native_stream)
    ptr = c_uint64()
    st = _ffi.lib.cubehip_buffer_device_pointer(h, ctypes.byref(ptr))
    if st:
        _refused(st, ORDER_NONE)
    nd = len(arr.shape)
    shape = (c_int64 * max(nd, 1))(*arr.shape)
    # strides NULL: C-contiguous, which a device array always is.
    tensor = DLTensor(ptr.value, DLDevice(device_type, device_id), nd, dt, shape, None, 0)
    t: Any
    if versioned:
        t = DLManagedTensorVersioned(1, 0, None, _delete_versioned, 0, tensor)  # flags 0: writable, not a copy
    else:
        t = DLManagedTensor(tensor, None, _delete)
    addr = ctypes.addressof(t)
    owner = arr._base if arr._base is not None else arr
    with _lock:
        lease = owner._exports
        if type(lease) is not _Lease:
            lease = owner._exports = _Lease()
        lease.count += 1
        _live[addr] = _Export(t, shape, owner, lease)
    try:
        return _new_capsule(addr, _NAME_VERSIONED if versioned else _NAME, ctypes.cast(_capsule_destructor, c_void_p))
    except BaseException:
        _give_back(addr)
        raise


def typestr(dt: np.dtype) -> str:
    """The array interface's type string ("<f4"), which both array interfaces use."""
    return dt.str
