"""Zero-copy import: CuPy arrays, PyTorch tensors and numpy arrays as cubehip device arrays.

``from_dlpack`` takes any DLPack producer: it asks the producer for a capsule, and the
package's extension (cubehip._native, one call) reads the
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

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _dlpack, _ffi
from ._array import DeviceArray, check_dtype
from ._device import Device, get_device
from ._errors import check
from ._stream import Stream, stream_id

__all__ = ["from_dlpack", "asarray"]


_native = _ffi.native

_NAMES = {1: "kDLCPU", 2: "kDLCUDA", 3: "kDLCUDAHost", 4: "kDLOpenCL", 7: "kDLVulkan", 8: "kDLMetal", 10: "kDLROCM", 13: "kDLCUDAManaged"}


def _device(device: "Device | None") -> "Device":
    if device is None:
        return get_device()
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
    a._h, a._base, a._exports, a._import = h, None, 0, True
    a.device, a.shape, a.dtype, a.stream = dev, shape, dtype, sid
    a.nbytes = math.prod(shape) * dtype.itemsize
    return a


# The legacy default stream, by the handle DLPack gives it on each GPU platform (CUDA: 1;
# ROCm: 0) and the driver takes for it (CU_STREAM_LEGACY; HIP's null stream).
_LEGACY = {"nvidia": 1, "amd": 0}


# The stream named to the producer (__dlpack__'s stream) is the legacy default stream,
# not the array's own: CuPy and PyTorch order nothing when it is the stream they are on
# (their default), and record an event and make it wait otherwise; the import then makes
# the array's stream wait for the legacy stream on the device (cubehip_stream_wait_native).
# Naming the array's own stream instead would hand its native handle out, and a stream
# whose handle is out is shared for the device's life: every wait on it the driver's own.
# kDLCPU has no streams: None.
# Producer types whose __dlpack__ knows no max_version (DLPack < 1.0: numpy < 2.1, for
# one), which the extension's dlpack_take asks without it: it remembers a type once a
# call without max_version worked after one with it raised TypeError, so the type's next
# imports are one call each (a refused call and its exception cost as much as the rest of
# the import).
_legacy_producers: set[type] = set()


def _refuse(info: tuple[Any, ...], dev: "Device") -> BufferError:
    """The error for a tensor the extension's dlpack_import did not take: (None, what, detail)."""
    what, detail = info[1], info[2]
    if what == "device":
        want = _want(dev)
        hint = " (copy host data to the device with Device.array)" if detail[0] == 1 else ""
        return BufferError(f"from_dlpack: the memory is on {_name(detail)}, but the {dev.platform} device {dev.index} needs {_name(want)}{hint}")
    if what == "version":
        return BufferError(f"from_dlpack: DLPack {detail[0]}.{detail[1]} tensors are not understood (1.x are)")
    if what == "readonly":
        return BufferError("from_dlpack: the tensor is read-only, and cubehip kernels may write any array")
    if what == "dtype":
        code, bits, lanes = detail
        return BufferError(f"from_dlpack: DLPack data type (code {code}, {bits} bits, {lanes} lanes) has no numpy dtype cubehip arrays can use")
    if what == "strides":
        try:
            _check_contiguous(detail[0], detail[1], "from_dlpack")
        except BufferError as e:
            return e
    return BufferError("from_dlpack: __dlpack__ did not return an unconsumed DLPack capsule")


_dtypes: dict[str, np.dtype] = {}


def _dtype(typestr: str) -> np.dtype:
    """The numpy dtype of dlpack_import's type string ("f4", "?"): one numpy has, which the
    extension checked before importing."""
    _dtypes[typestr] = dt = check_dtype(np.dtype(typestr))
    return dt


def from_dlpack(x: Any, *, device: "Device | None" = None, stream: "Stream | int | None" = None, copy: bool | None = None) -> DeviceArray:
    """A device array over x's memory, without copying: x is any DLPack producer (a CuPy
    array or a PyTorch tensor on nvidia or amd; a numpy array on the cpu device, whose memory
    is host memory), on ``device`` (default: the current device).

    Writes through either side are seen by the other. The producer's pending work on x is
    ordered before the array's stream (``stream``, default 0), on the device: the producer
    orders it before the legacy default stream (the stream argument of ``__dlpack__``), and
    the array's stream waits for that stream; work of the producer issued later is the caller's to
    order (finish it, or sync this array before the producer uses the memory again). The
    producer's memory stays alive until the device no longer uses it: after the array (and
    every view of it) is gone, every graph that recorded work on it is destroyed, and the
    work queued on it is done; the DLPack deleter is then called, once: by the call that lets
    go of the array when the device's work on it is already done, else from a thread of
    libcubehip's when it is. Closing the device releases every import at once.

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
    dev = device if type(device) is Device else _device(device)
    sid = 0 if stream is None else stream_id(stream)
    if isinstance(x, DeviceArray) and x.device is dev:
        return x
    # The bound method, not hasattr's two lookups then a third for the call.
    dlpack_device = getattr(x, "__dlpack_device__", None)
    if dlpack_device is None or not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} is not a DLPack producer (no __dlpack__ and __dlpack_device__)")
    if _native is None:
        raise BufferError(f"from_dlpack needs the package's extension, which is not in use: {_ffi.native_missing}")
    platform = dev.platform
    want_type = _DEVICE_TYPES[platform]
    want_id = -1 if platform == "cpu" else dev.index
    got_type, got_id = dlpack_device()
    if got_type != want_type or (want_id >= 0 and got_id != want_id):
        _check_device(dev, (int(got_type), int(got_id)), "from_dlpack")  # before the producer does any work for us
    dh = dev._h or dev._live()
    # On a GPU the array's stream waits for the legacy stream (see _LEGACY), on the device,
    # before it runs anything on the memory: the extension's wait argument, made before the
    # import. The capsule, the import and the array are the extension's one call
    # (dlpack_take): what it does not finish itself, it returns as dlpack_import would, and
    # the rest is done here. Every refusal leaves the capsule unconsumed: its destructor
    # calls the deleter.
    r = _dlpack_take(x, _LEGACY.get(platform), _legacy_producers, want_type, want_id, dh, sid, _LEGACY.get(platform, -1),
                     DeviceArray, dev, _dtypes)
    if type(r) is DeviceArray:
        return r
    return _finish(r, dev, sid)


def _finish(r: Any, dev: "Device", sid: int) -> DeviceArray:
    """from_dlpack's tail for what dlpack_take did not make into an array: a status to raise,
    a refusal, an empty tensor, or a tensor whose dtype the package names first."""
    if type(r) is int:
        check(r, "cubehip_buffer_import")
    h, shape, typestr = r
    if not h:
        if h is None:
            raise _refuse(r, dev)
        # An empty tensor: no memory to share.
        return dev.empty(shape, _dtypes.get(typestr) or _dtype(typestr), stream=sid)
    dtype = _dtypes.get(typestr) or _dtype(typestr)
    # _wrap, inline: this is the whole of the import's Python past the extension's call.
    a = _new(DeviceArray)
    a._h, a._base, a._exports, a._import = h, None, 0, True
    a.device, a.shape, a.dtype, a.stream = dev, shape, dtype, sid
    a.nbytes = (shape[0] if len(shape) == 1 else math.prod(shape)) * dtype.itemsize
    return a


_new = DeviceArray.__new__
_DEVICE_TYPES = _dlpack.DEVICE_TYPES
_dlpack_take = _native.dlpack_take if _native is not None else None

# With the extension, from_dlpack is its function (from_dlpack_function): the common call
# (x a producer on the device, device a Device or None, stream None or an id, no copy asked
# for) is made in C without a Python frame, with the same checks in the same order; every
# other call is _from_dlpack_py's, which keeps this documentation and these errors. Calling
# the Python function for the common call too would add a Python frame to every import
# (docs/benchmarks.md, "Python: C rather than ctypes").
_from_dlpack_py = from_dlpack
if _native is not None:
    from_dlpack = _native.from_dlpack_function(_from_dlpack_py, _finish, get_device, Device, _legacy_producers, _dtypes)



def _from_cuda_array_interface(x: Any, dev: "Device", sid: int) -> DeviceArray:
    if _native is None:
        raise BufferError(f"asarray needs the package's extension, which is not in use: {_ffi.native_missing}")
    ci = x.__cuda_array_interface__
    shape = tuple(int(n) for n in ci["shape"])
    dtype = check_dtype(np.dtype(ci["typestr"]))
    ptr, readonly = ci["data"]
    if readonly:
        raise BufferError("asarray: the __cuda_array_interface__ memory is read-only, and cubehip kernels may write any array")
    if ci.get("mask") is not None:
        raise BufferError("asarray: masked __cuda_array_interface__ arrays are not supported")
    stream = ci.get("stream")
    if stream is not None and (type(stream) is not int or not 0 < stream < 2**64):
        # The interface's rule: 0 is ambiguous and disallowed; 1 and 2 are the legacy and
        # per-thread default streams, anything else a CUstream.
        raise BufferError(f"asarray: __cuda_array_interface__ stream {stream!r} is no stream (None, 1, 2 or a CUstream)")
    strides = ci.get("strides")
    if strides is not None:
        # In bytes here; a stride that is no whole number of elements is no C layout either.
        _check_contiguous(shape, tuple(int(s) / dtype.itemsize for s in strides), "asarray")
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes == 0:
        return dev.empty(shape, dtype, stream=sid)
    if stream is not None:
        # The producer's work on the memory, queued on its stream, before the array's stream
        # runs anything more: on the device, without waiting here.
        check(_ffi.lib.cubehip_stream_wait_native(dev._live(), sid, stream), "cubehip_stream_wait_native")
    # The buffer holds a reference to x, which keeps the producer (and its memory) alive,
    # until the device no longer uses the memory.
    h = _native.object_import(dev._live(), sid, ptr, nbytes, x)
    if h < 0:
        check(-h, "cubehip_buffer_import")
    return _wrap(dev, h, shape, dtype, sid)


def asarray(x: Any, *, device: "Device | None" = None, stream: "Stream | int | None" = None) -> DeviceArray:
    """x as a device array of ``device`` (default: the current device), never copying: a
    cubehip array of that device as it is, else through DLPack (:func:`from_dlpack`), else,
    on nvidia, through ``__cuda_array_interface__`` (version 3: the array's stream waits, on
    the device, for the work queued so far on the interface's "stream"). Anything else is a TypeError: copies of host
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
