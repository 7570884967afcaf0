"""Zero-copy import: CuPy arrays, PyTorch tensors and numpy arrays as cubehip device arrays.

``from_dlpack`` takes any DLPack producer: it asks the producer for a capsule, reads the
``DLManagedTensor`` inside (or the ``DLManagedTensorVersioned`` of DLPack 1.0, which newer
producers give when asked with ``max_version``), checks the tensor against the device
(memory kind and device index, data type, C-contiguity), and hands the memory to
libcubehip (``cubehip_buffer_import``) with a release that calls the tensor's deleter.
The capsule is renamed ``"used_dltensor"`` (``"used_dltensor_versioned"``), the DLPack
sign that a consumer took the tensor, so the capsule's own destructor no longer calls the
deleter: it runs exactly once, when the device no longer uses the memory. Until then the
producer's memory (and the producer's array, which the tensor holds) stays alive, whatever
happens to the producer's Python object.

Nothing is copied, ever: a tensor cubehip cannot use in place (another device, strides
that are not C-contiguous, a data type numpy has no name for, read-only memory) is an
error saying so, and ``Device.array`` is the way to copy host data to a device.
"""

from __future__ import annotations

import ctypes
import math
from ctypes import POINTER, Structure, c_uint32, c_uint64, c_void_p
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _dlpack, _ffi
from ._array import DeviceArray, check_dtype, stream_id
from ._errors import check

if TYPE_CHECKING:
    from ._device import Device, Stream

__all__ = ["from_dlpack", "asarray"]


class _DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class _DLManagedTensorVersioned(Structure):
    _fields_ = [
        ("version", _DLPackVersion),
        ("manager_ctx", c_void_p),
        ("deleter", c_void_p),
        ("flags", c_uint64),
        ("dl_tensor", _dlpack.DLTensor),
    ]


_READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY

_api = ctypes.pythonapi
_is_valid = _api.PyCapsule_IsValid
_is_valid.argtypes, _is_valid.restype = [ctypes.py_object, ctypes.c_char_p], ctypes.c_int
_get_pointer = _api.PyCapsule_GetPointer
_get_pointer.argtypes, _get_pointer.restype = [ctypes.py_object, ctypes.c_char_p], c_void_p
_set_name = _api.PyCapsule_SetName
_set_name.argtypes, _set_name.restype = [ctypes.py_object, ctypes.c_char_p], ctypes.c_int
_incref = _api.Py_IncRef
_incref.argtypes, _incref.restype = [ctypes.py_object], None
_decref = _api.Py_DecRef
_decref.argtypes, _decref.restype = [ctypes.py_object], None

# A capsule keeps a pointer to its name, not a copy: the new names live as long as the module.
_USED = ctypes.create_string_buffer(b"used_dltensor")
_USED_VERSIONED = ctypes.create_string_buffer(b"used_dltensor_versioned")

# The releases libcubehip calls from a thread of its own once the memory is unused
# (capi/pydlpack.c): they take the interpreter lock themselves.
_ready = _ffi.pylib.capi_python_import_init() == 1
_release_dltensor = ctypes.cast(_ffi.lib.capi_python_release_dltensor, c_void_p).value
_release_object = ctypes.cast(_ffi.lib.capi_python_release_object, c_void_p).value

# DLDataTypeCode → the numpy dtype kind of that code.
_KINDS = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}
_NAMES = {1: "kDLCPU", 2: "kDLCUDA", 3: "kDLCUDAHost", 4: "kDLOpenCL", 7: "kDLVulkan", 8: "kDLMetal", 10: "kDLROCM", 13: "kDLCUDAManaged"}


def _device(device: "Device | None") -> "Device":
    if device is None:
        from ._device import get_device

        return get_device()
    from ._device import Device

    if not isinstance(device, Device):
        raise TypeError(f"device must be a cubehip.Device, not {type(device).__name__}")
    return device


def _want(dev: "Device") -> tuple[int, int]:
    """The DLPack device the memory must be on to be dev's."""
    return (_dlpack.DEVICE_TYPES[dev.platform], 0 if dev.platform == "cpu" else dev.index)


def _name(dl: tuple[int, int]) -> str:
    return f"{_NAMES.get(dl[0], f'DLPack device type {dl[0]}')}:{dl[1]}"


def _check_device(dev: "Device", got: tuple[int, int], what: str) -> None:
    want = _want(dev)
    if got[0] != want[0] or (dev.platform != "cpu" and got[1] != want[1]):
        hint = " (copy host data to the device with Device.array)" if got[0] == 1 else ""
        raise BufferError(f"{what}: the memory is on {_name(got)}, but the {dev.platform} device {dev.index} needs {_name(want)}{hint}")


def _dtype_of(code: int, bits: int, lanes: int) -> np.dtype:
    kind = _KINDS.get(code)
    if kind is None or lanes != 1 or bits % 8:
        raise BufferError(f"from_dlpack: DLPack data type (code {code}, {bits} bits, {lanes} lanes) has no numpy dtype cubehip arrays can use")
    try:
        return np.dtype(f"{kind}{bits // 8}") if kind != "b" else np.dtype(np.bool_)
    except TypeError:
        raise BufferError(f"from_dlpack: DLPack data type (code {code}, {bits} bits) has no numpy dtype") from None


def _check_contiguous(shape: tuple[int, ...], strides: tuple[int, ...] | None, what: str) -> None:
    """Refuses strides (in elements) that are not C-contiguous; a dimension of size 1 may have
    any stride, and an empty array has no layout to check."""
    if strides is None or 0 in shape:
        return
    expect = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != expect:
            raise BufferError(
                f"{what}: strides {strides} (in elements) of shape {shape} are not C-contiguous; cubehip arrays are, "
                "and it never copies: pass a contiguous array (numpy.ascontiguousarray, .contiguous(), cupy.ascontiguousarray)"
            )
        expect *= n


def _wrap(dev: "Device", h: int, shape: tuple[int, ...], dtype: np.dtype, sid: int) -> DeviceArray:
    a = DeviceArray.__new__(DeviceArray)
    a._h, a._base, a._exports, a._pending = h, None, 0, 0
    a.device, a.shape, a.dtype, a.stream = dev, shape, dtype, sid
    a.nbytes = math.prod(shape) * dtype.itemsize
    return a


def _import(dev: "Device", sid: int, ptr: int, nbytes: int, release: int | None, user_data: int) -> int:
    out = c_uint64()
    check(_ffi.lib.cubehip_buffer_import(dev._live(), sid, ptr, nbytes, release, user_data, ctypes.byref(out)), "cubehip_buffer_import")
    return out.value


def _capsule(x: Any, dev: "Device", sid: int) -> Any:
    """x's DLPack capsule, its pending work ordered before stream sid of dev."""
    if dev.platform == "cpu":
        stream = None  # DLPack: kDLCPU has no streams
    else:
        # The producer makes this stream wait for its pending work on the tensor (CuPy and
        # PyTorch record an event on their current stream and make this one wait on it).
        out = c_uint64()
        check(_ffi.lib.cubehip_stream_native_handle(dev._live(), sid, ctypes.byref(out)), "cubehip_stream_native_handle")
        stream = out.value
    try:
        return x.__dlpack__(stream=stream, max_version=(1, 0))
    except TypeError:
        # A producer older than DLPack 1.0 (numpy < 2.1, for one) knows no max_version.
        return x.__dlpack__(stream=stream)


def from_dlpack(x: Any, *, device: "Device | None" = None, stream: "Stream | int | None" = None, copy: bool | None = None) -> DeviceArray:
    """A device array over x's memory, without copying: x is any DLPack producer (a CuPy
    array or a PyTorch tensor on nvidia or amd; a numpy array on the cpu device, whose memory
    is host memory), on ``device`` (default: the current device).

    Writes through either side are seen by the other. The producer's pending work on x is
    ordered before the array's stream (``stream``, default 0: its native handle is the
    stream argument of ``__dlpack__``); work of the producer issued later is the caller's to
    order (finish it, or sync this array before the producer uses the memory again). The
    producer's memory stays alive until the device no longer uses it: after the array (and
    every view of it) is gone, every graph that recorded work on it is destroyed, and the
    work queued on it is done; the DLPack deleter is then called, once, from a thread of
    libcubehip's. Closing the device releases every import at once.

    Raises BufferError for memory the device cannot use in place (another kind of memory
    or another device, strides that are not C-contiguous, read-only memory, a data type
    with no numpy dtype) and the exceptions of ``cubehip_buffer_import`` (memory the
    platform does not take as its device memory). A cubehip array of the same device is
    returned as it is. An empty tensor gives an empty array of its own (there is no memory
    to share). ``copy=True`` (the array API's request for a copy) is refused: copies of host
    data are :meth:`Device.array`'s.
    """
    if copy is True:
        raise BufferError("from_dlpack: cubehip imports without copying (copy=True refused); Device.array copies host data")
    dev = _device(device)
    sid = stream_id(stream)
    if isinstance(x, DeviceArray) and x.device is dev:
        return x
    if not hasattr(x, "__dlpack__") or not hasattr(x, "__dlpack_device__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} is not a DLPack producer (no __dlpack__ and __dlpack_device__)")
    if not _ready:
        raise BufferError("from_dlpack needs the Python C API, which this process does not export")
    got = tuple(int(v) for v in x.__dlpack_device__())
    _check_device(dev, got, "from_dlpack")  # before the producer does any work for us
    cap = _capsule(x, dev, sid)
    if _is_valid(cap, b"dltensor_versioned"):
        addr = _get_pointer(cap, b"dltensor_versioned")
        m = _DLManagedTensorVersioned.from_address(addr)
        if m.version.major != 1:
            raise BufferError(f"from_dlpack: DLPack {m.version.major}.{m.version.minor} tensors are not understood (1.x are)")
        if m.flags & _READ_ONLY:
            raise BufferError("from_dlpack: the tensor is read-only, and cubehip kernels may write any array")
        t, used, user_data = m.dl_tensor, _USED_VERSIONED, addr | 1
    elif _is_valid(cap, b"dltensor"):
        addr = _get_pointer(cap, b"dltensor")
        t, used, user_data = _dlpack.DLManagedTensor.from_address(addr).dl_tensor, _USED, addr
    else:
        raise BufferError("from_dlpack: __dlpack__ did not return an unconsumed DLPack capsule")
    # Every refusal below leaves the capsule unconsumed: its destructor calls the deleter.
    _check_device(dev, (t.device.device_type, t.device.device_id), "from_dlpack")
    dtype = check_dtype(_dtype_of(t.dtype.code, t.dtype.bits, t.dtype.lanes))
    nd = t.ndim
    shape = tuple(t.shape[i] for i in range(nd))
    strides = tuple(t.strides[i] for i in range(nd)) if t.strides else None
    _check_contiguous(shape, strides, "from_dlpack")
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes == 0:
        return dev.empty(shape, dtype, stream=sid)
    h = _import(dev, sid, (t.data or 0) + t.byte_offset, nbytes, _release_dltensor, user_data)
    # Taken: from now on the release calls the deleter, and the capsule must not.
    _set_name(cap, used)
    return _wrap(dev, h, shape, dtype, sid)


def _from_cuda_array_interface(x: Any, dev: "Device", sid: int) -> DeviceArray:
    if not _ready:
        raise BufferError("asarray needs the Python C API, which this process does not export")
    ci = x.__cuda_array_interface__
    shape = tuple(int(n) for n in ci["shape"])
    dtype = check_dtype(np.dtype(ci["typestr"]))
    ptr, readonly = ci["data"]
    if readonly:
        raise BufferError("asarray: the __cuda_array_interface__ memory is read-only, and cubehip kernels may write any array")
    if ci.get("mask") is not None:
        raise BufferError("asarray: masked __cuda_array_interface__ arrays are not supported")
    if ci.get("stream") is not None:
        raise BufferError(
            "asarray: the producer's __cuda_array_interface__ names a stream to synchronize with, which cubehip "
            "cannot wait on; use DLPack (the object's __dlpack__, which orders its work before cubehip's stream)"
        )
    strides = ci.get("strides")
    if strides is not None:
        # In bytes here; a stride that is no whole number of elements is no C layout either.
        _check_contiguous(shape, tuple(int(s) / dtype.itemsize for s in strides), "asarray")
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes == 0:
        return dev.empty(shape, dtype, stream=sid)
    # The release gives back this reference, which keeps the producer (and its memory) alive.
    _incref(x)
    try:
        h = _import(dev, sid, ptr, nbytes, _release_object, id(x))
    except BaseException:
        _decref(x)
        raise
    return _wrap(dev, h, shape, dtype, sid)


def asarray(x: Any, *, device: "Device | None" = None, stream: "Stream | int | None" = None) -> DeviceArray:
    """x as a device array of ``device`` (default: the current device), never copying: a
    cubehip array of that device as it is, else through DLPack (:func:`from_dlpack`), else,
    on nvidia, through ``__cuda_array_interface__`` (version 3, with no stream to wait on:
    the producer's work must be finished). Anything else is a TypeError: copies of host
    data are :meth:`Device.array`'s."""
    dev = _device(device)
    if isinstance(x, DeviceArray):
        if x.device is not dev:
            raise BufferError(f"asarray: the array is on {x.device!r}, not {dev!r}; copy it with DeviceArray.copy_from")
        return x
    if hasattr(x, "__dlpack__"):
        return from_dlpack(x, device=dev, stream=stream)
    if dev.platform == "nvidia" and hasattr(x, "__cuda_array_interface__"):
        return _from_cuda_array_interface(x, dev, stream_id(stream))
    raise TypeError(
        f"asarray: a {type(x).__name__} shares no memory through DLPack"
        + (" or __cuda_array_interface__" if dev.platform == "nvidia" else "")
        + "; copy host data to the device with Device.array"
    )
