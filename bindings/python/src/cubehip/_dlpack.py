"""Zero-copy export of device arrays: DLPack capsules and ``__cuda_array_interface__``.

DLPack is the protocol numpy, CuPy, PyTorch and JAX share for handing a tensor across
libraries without a copy: the producer wraps a ``DLManagedTensor`` (the memory's address,
device, shape, dtype, and a deleter) in a PyCapsule named ``"dltensor"``. A consumer that
takes the tensor renames the capsule ``"used_dltensor"`` and calls the deleter once it is
done with the memory; a capsule nobody consumed calls the deleter itself when it is
garbage collected. Either way the deleter runs exactly once, and it is what lets go of the
device array that owns the memory.

Everything here is ctypes: the structs live in ctypes buffers that this module keeps alive
(in ``_live``) until their deleter runs, and the capsule calls go through
``ctypes.pythonapi``.
"""

from __future__ import annotations

import ctypes
import itertools
import threading
from ctypes import POINTER, Structure, c_char_p, c_int32, c_int64, c_uint8, c_uint16, c_uint64, c_void_p
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _ffi

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


class _Export:
    """One exported tensor: its struct, its shape array and the device array it keeps alive."""

    __slots__ = ("tensor", "shape", "owner")

    def __init__(self, tensor: DLManagedTensor, shape: Any, owner: "DeviceArray") -> None:
        self.tensor, self.shape, self.owner = tensor, shape, owner


# Every export whose deleter has not run yet, by its key (the tensor's manager_ctx). The
# entry is what keeps the struct's memory and the owning array alive; popping it is the
# one release, so a deleter called twice finds nothing the second time.
_live: dict[int, _Export] = {}
_lock = threading.RLock()  # the counts of every exporting array, too
_keys = itertools.count(1)


def live_exports() -> int:
    """How many exported tensors are still held by a consumer or an unconsumed capsule."""
    return len(_live)


def _give_back(key: Any) -> None:
    # The one release of an export, by its key. libcubehip's deleter calls it with the GIL
    # held and any exception in flight set aside, so plain Python is safe here; an export
    # popped already (a consumer calling the deleter twice) finds nothing to release.
    with _lock:
        ex = _live.pop(key or 0, None)
        if ex is not None:
            ex.owner._unexport()


_release = ctypes.CFUNCTYPE(None, c_void_p)(_give_back)
# The deleter and the capsule destructor are C functions of libcubehip (capi/pydlpack.c):
# both run when C code frees a tensor, which is often while a Python exception is in
# flight, and a ctypes callback entered then can call nothing without losing that exception.
# They set it aside, call _release, and put it back.
_ready = _ffi.pylib.capi_python_dlpack_init(_release) == 1
_delete = _Deleter(ctypes.cast(_ffi.lib.capi_python_dlpack_deleter, c_void_p).value)
_capsule_destructor = ctypes.cast(_ffi.lib.capi_python_dlpack_capsule_destructor, c_void_p)

_pyapi = ctypes.pythonapi
_pyapi.PyCapsule_New.restype = ctypes.py_object
_pyapi.PyCapsule_New.argtypes = [c_void_p, c_char_p, c_void_p]

# The capsule keeps a pointer to its name, not a copy: the name must outlive every capsule.
_NAME = ctypes.create_string_buffer(b"dltensor")
_new_capsule = _pyapi.PyCapsule_New


_dl_dtypes: dict[np.dtype, DLDataType] = {}


def dtype_of(dt: np.dtype) -> DLDataType:
    t = _dl_dtypes.get(dt)
    if t is None:
        code = _CODES.get(dt.kind)
        if code is None or dt.byteorder == ">":
            raise BufferError(f"dtype {dt} has no DLPack data type")
        t = _dl_dtypes[dt] = DLDataType(code, dt.itemsize * 8, 1)
    return t


def capsule(arr: "DeviceArray", ptr: int, device_type: int, device_id: int) -> Any:
    """A "dltensor" capsule over arr's memory at ptr; it keeps arr alive until its deleter runs."""
    if not _ready:
        raise BufferError("DLPack export needs the Python C API, which this process does not export")
    nd = len(arr.shape)
    shape = (c_int64 * max(nd, 1))(*arr.shape)
    key = next(_keys)
    # strides NULL: C-contiguous, which a device array always is. One constructor call: each
    # field set on its own is a descriptor call, and an export is a per-call cost.
    t = DLManagedTensor(DLTensor(ptr, DLDevice(device_type, device_id), nd, dtype_of(arr.dtype), shape, None, 0), key, _delete)
    with _lock:
        _live[key] = _Export(t, shape, arr)
        arr._export()
    try:
        return _new_capsule(ctypes.addressof(t), _NAME, _capsule_destructor)
    except BaseException:
        _give_back(key)
        raise


def typestr(dt: np.dtype) -> str:
    """The array interface's type string ("<f4"), which both array interfaces use."""
    return dt.str
