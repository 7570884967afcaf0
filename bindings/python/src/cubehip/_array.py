"""Device arrays: a device buffer with a numpy shape and dtype."""

from __future__ import annotations

import ctypes
import math
import operator
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _dlpack, _ffi, _hostcache
from ._errors import DeviceClosed, check, check_carried
from ._stream import Stream, stream_id

if TYPE_CHECKING:
    from ._device import Device

_release = _ffi.fast_buffer_release
_read = _ffi.fast_buffer_read
_alloc = _ffi.fast_buffer_alloc
_leave = _dlpack.leave
_new_array = _hostcache.new_array
_CACHE_MIN = _hostcache.MIN_BYTES
# The address of a writeable numpy array's first byte: a ctypes view of its buffer costs a
# third of what __array_interface__ (a new dict) or .ctypes.data does, and a 4-byte read is
# as much this as it is copy.
_as_bytes = ctypes.c_char.from_buffer
_addressof = ctypes.addressof
_dtypes: dict[Any, np.dtype] = {}


def normalize_shape(shape: Any) -> tuple[int, ...]:
    if type(shape) is int and shape >= 0:
        return (shape,)
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    try:
        if isinstance(shape, (str, bytes)):
            raise TypeError
        dims = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"shape must be an int or a sequence of ints, not {shape!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"shape {dims} has a negative dimension")
    return dims


def check_dtype(dtype: Any) -> np.dtype:
    try:
        return _dtypes[dtype]
    except (KeyError, TypeError):
        pass
    dt = np.dtype(dtype)
    if dt.hasobject:
        raise TypeError(f"dtype {dt} holds Python objects, which have no device representation")
    if dt.itemsize == 0:
        raise TypeError(f"dtype {dt} has no size")
    try:
        if len(_dtypes) < 256:
            _dtypes[dtype] = dt  # np.dtype() costs a microsecond; allocation is a hot path too
    except TypeError:
        pass
    return dt


class DeviceArray:
    """An n-dimensional, C-contiguous array in a device's memory.

    Made by :meth:`Device.empty`, :meth:`Device.array`, :meth:`Device.zeros` or
    :meth:`Device.alloc`. ``get()`` (or ``numpy()``) copies it back into a numpy array,
    ``set(a)`` copies a numpy array of the same shape and dtype into it. The memory goes back
    to the device's pools by :meth:`release`, at the end of a ``with`` block, or when the
    array is garbage collected.
    """

    __slots__ = ("device", "shape", "dtype", "nbytes", "stream", "_h", "_base", "_exports", "_import", "__weakref__")

    def __init__(self, device: "Device", shape: Any, dtype: Any = np.float64, stream: "Stream | int | None" = None) -> None:
        self._h = 0
        self._base: DeviceArray | None = None
        self._exports = 0  # the lease that counts this memory's exports, from the first on (_dlpack.leave)
        self._import = False  # imported memory (from_dlpack): its buffer is never kept
        self.device = device
        if type(shape) is int and shape >= 0:
            # A 1-D array, the common case, without the general shape and size walk.
            self.shape = (shape,)
            self.dtype = dt = check_dtype(dtype)
            self.nbytes = shape * dt.itemsize
        else:
            self.shape = normalize_shape(shape)
            self.dtype = check_dtype(dtype)
            self.nbytes = math.prod(self.shape) * self.dtype.itemsize
        self.stream = 0 if stream is None else stream_id(stream)
        # An empty array still owns a one-byte buffer, so that it is a valid kernel argument;
        # its reads and writes move nothing.
        n = self.nbytes or 1
        dh = device._live()
        h = 0
        kept = device._kept
        if kept.lists:
            # A released array's idle buffer of this size and stream, if one is kept: no
            # call into the library (see KeptBuffers).
            lst = kept.lists.get((self.stream, n))
            if lst:
                try:
                    h = lst.pop()
                    kept.nbytes -= n
                except IndexError:  # another thread took the last one
                    pass
        if not h:
            h = _alloc(dh, self.stream, n)  # the handle, or minus the status
            if h == -_ffi.HIP_ERROR_OUT_OF_MEMORY and device._kept.drain():
                h = _alloc(dh, self.stream, n)  # with the kept buffers back in the pools
            if h < 0:
                check(-h, "cubehip_buffer_alloc")
        self._h = h

    # --- numpy-like attributes -----------------------------------------------------------

    @property
    def handle(self) -> int:
        """The buffer's handle in libcubehip (0 once released)."""
        return self._h

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def released(self) -> bool:
        return self._h == 0

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d device array")
        return self.shape[0]

    def __repr__(self) -> str:
        state = "released" if self._h == 0 else f"buffer {self._h:#x}"
        return f"<cubehip.DeviceArray shape={self.shape} dtype={self.dtype} {state}>"

    def reshape(self, *shape: Any) -> "DeviceArray":
        """A view of the same memory with another shape of the same size."""
        new = normalize_shape(shape[0] if len(shape) == 1 else shape)
        if math.prod(new) != self.size:
            raise ValueError(f"cannot reshape an array of size {self.size} into shape {new}")
        view = DeviceArray.__new__(DeviceArray)
        view._h = self._h
        view._base = self._base or self
        view._exports = 0  # counted on the base, which owns the memory
        view._import = False
        view.device, view.shape, view.dtype, view.nbytes, view.stream = self.device, new, self.dtype, self.nbytes, self.stream
        return view

    def view(self, dtype: Any) -> "DeviceArray":
        """A view of the same bytes as another dtype, as numpy's ``view``: of another
        itemsize, the last dimension is their count in the new dtype
        (``d.view(np.uint8)`` of a float32 array of shape (n,) has shape (4 * n,)).

        This is how an array's bytes go to a kernel's pointer of another element type as
        they are: a launch refuses a float64 array for a ``float*``, and takes
        ``a.view(np.float32)``."""
        dt = check_dtype(dtype)
        shape = self.shape
        old = self.dtype.itemsize
        if dt.itemsize != old:
            if not shape:
                raise ValueError(f"a 0-d array of {self.dtype} cannot be viewed as {dt}: the itemsizes differ")
            nbytes = shape[-1] * old
            if nbytes % dt.itemsize:
                raise ValueError(
                    f"the last dimension of the array ({shape[-1]} x {old} bytes) is not a whole number of {dt} ({dt.itemsize} bytes)"
                )
            shape = shape[:-1] + (nbytes // dt.itemsize,)
        v = self.reshape(self.shape)
        v.shape, v.dtype = shape, dt
        return v

    # --- copies --------------------------------------------------------------------------

    def _live(self) -> int:
        if self._h == 0:
            raise ValueError("the device array was released")
        if self.device._h == 0:
            raise DeviceClosed(10004, "the device was closed", "DeviceArray")
        if self._base is not None and self._base._h == 0:
            raise ValueError("the device array this view shares memory with was released")
        return self._h

    def get(self, stream: "Stream | int | None" = None, out: np.ndarray | None = None) -> np.ndarray:
        """Copies the array into a new numpy array (or into out), after the work queued before
        it on the stream and the array's last write on any stream. A new array of 4 MiB or
        more lies on host memory the package keeps for the next read of its size once the
        array and its views are gone (see :func:`cubehip.free_host_cache`).

        Raises CarriedFailure when the work that last wrote the array failed.
        """
        if out is None and stream is None and self._base is None and self._h and self.device._h:
            # The common read, kept lean: a small read is as much Python as it is copy. A
            # large one lands on cached memory (_hostcache.py says why); the read below
            # writes all of it before the array is returned, or raises.
            nbytes = self.nbytes
            out = np.empty(self.shape, self.dtype) if nbytes < _CACHE_MIN else _new_array(self.shape, self.dtype, nbytes)
            if nbytes:
                st = _read(self._h, 0, 0, _addressof(_as_bytes(out)), self.nbytes)
                if st:
                    check_carried(st, "cubehip_buffer_read")
            return out
        h = self._live()
        if out is None:
            out = _new_array(self.shape, self.dtype, self.nbytes)
        else:
            if not isinstance(out, np.ndarray):
                raise TypeError(f"out must be a numpy array, not {type(out).__name__}")
            if out.shape != self.shape or out.dtype != self.dtype:
                raise ValueError(f"out is {out.shape} {out.dtype}, the array is {self.shape} {self.dtype}")
            if not out.flags.c_contiguous or not out.flags.writeable:
                raise ValueError("out must be C-contiguous and writeable")
        if self.nbytes:
            check_carried(
                _read(h, stream_id(stream), 0, _addressof(_as_bytes(out)), self.nbytes),
                "cubehip_buffer_read",
            )
        return out

    numpy = get

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self.get()
        return a if dtype is None else a.astype(dtype, copy=False)

    def set(self, value: Any, stream: "Stream | int | None" = None) -> None:
        """Copies a numpy array (or anything numpy.asarray takes) of the array's shape and
        dtype into it, ordered on the stream. The host memory may be reused at once."""
        h = self._live()
        a = value if isinstance(value, np.ndarray) else np.asarray(value)
        if a.dtype != self.dtype:
            # A silent cast would hide a kernel reading float64 bits as float32.
            if not isinstance(value, np.ndarray) and np.can_cast(a, self.dtype, casting="same_kind"):
                a = a.astype(self.dtype)
            else:
                raise TypeError(f"set: the value's dtype is {a.dtype}, the device array's is {self.dtype}")
        if a.shape != self.shape:
            raise ValueError(f"set: the value's shape is {a.shape}, the device array's is {self.shape}")
        a = np.ascontiguousarray(a)
        if self.nbytes:
            check(
                _ffi.lib.cubehip_buffer_write(h, stream_id(stream), 0, a.ctypes.data, self.nbytes),
                "cubehip_buffer_write",
            )

    def copy_from(self, src: "DeviceArray", stream: "Stream | int | None" = None) -> None:
        """Copies src, an array of the same shape and dtype on any device, into this one,
        ordered on the stream of this array's device: after src's last write, before this
        array's next use. The bytes go peer to peer where the devices reach each other,
        else through host memory. A failed copy is carried by this array; a src carrying a
        failure passes it on."""
        if not isinstance(src, DeviceArray):
            raise TypeError(f"copy_from: src must be a DeviceArray, not {type(src).__name__}")
        if src.dtype != self.dtype or src.shape != self.shape:
            raise ValueError(f"copy_from: src is {src.shape} {src.dtype}, this array is {self.shape} {self.dtype}")
        check_carried(
            _ffi.lib.cubehip_buffer_copy_from(self._live(), stream_id(stream), src._live()),
            "cubehip_buffer_copy_from",
        )

    def check(self) -> None:
        """Raises CarriedFailure if the work that last wrote the array failed (without waiting)."""
        check_carried(_ffi.lib.cubehip_buffer_check(self._live()), "cubehip_buffer_check")

    def sync(self) -> None:
        """Waits for the work that writes the array; raises CarriedFailure if it failed."""
        check_carried(_ffi.lib.cubehip_buffer_sync(self._live()), "cubehip_buffer_sync")

    # --- lifetime ------------------------------------------------------------------------

    def release(self) -> None:
        """Gives the memory back to the device's pools (work queued on it completes first).
        Releasing twice is harmless; using a released array raises ValueError."""
        if self._base is not None:
            raise ValueError("release the array this view was made from, not the view")
        h, self._h = self._h, 0
        if h and self.device._h:
            lease = self._exports
            if lease and _leave(lease, h):
                # A consumer still reads the memory through an exported DLPack tensor: the
                # buffer goes back when the last of them lets go (_export_pending_gone).
                return
            if self._import:
                # An imported buffer is never kept (cubehip_buffer_recycle would release it).
                st = _release(h)
                if st:
                    check(st, "cubehip_buffer_release")
                return
            self.device._kept.give(h, self.stream, self.nbytes or 1)

    free = release

    def __enter__(self) -> "DeviceArray":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    # --- zero-copy interop -----------------------------------------------------------------

    def data_ptr(self) -> int:
        """The device address of the array's first byte (a host address on the cpu device).

        It stays valid until the array is released, and holds no reference of its own. The
        device does not see what other code does with it: call :meth:`sync` before other
        work uses the memory, and finish that work before the array is used again here.
        Raises CarriedFailure when the work that last wrote the array failed.
        """
        out = ctypes.c_uint64()
        check_carried(_ffi.lib.cubehip_buffer_device_pointer(self._live(), ctypes.byref(out)), "cubehip_buffer_device_pointer")
        return out.value

    @property
    def data(self) -> Any:
        """The array's memory as CuPy's ``ndarray.data``: a :class:`MemoryPointer` at its first
        byte (``a.data.ptr`` the address, ``a.data + n`` n bytes further), which a kernel
        takes for a pointer parameter as the array's memory from that byte."""
        from ._pointer import MemoryPointer

        return MemoryPointer(self)

    def __dlpack_device__(self) -> tuple[int, int]:
        """The DLPack device of the memory: (kDLCUDA, index) on nvidia, (kDLROCM, index) on amd,
        (kDLCPU, 0) on the cpu device, whose memory is host memory."""
        self._live()
        return (_dlpack.DEVICE_TYPES[self.device.platform], self._dl_index())

    _dlpack_device_py = __dlpack_device__

    def _dl_index(self) -> int:
        return 0 if self.device.platform == "cpu" else self.device.index

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None, copy: Any = None) -> Any:
        """The array as a DLPack capsule, without a copy; the capsule (and the consumer's
        tensor made from it) keeps this array's memory alive, even past :meth:`release`.

        Order, as the array API standard gives the consumer's stream: on nvidia and amd the
        array's queued writes are ordered before the work the consumer queues next on
        stream, on the device, without waiting (nvidia: None or 1 the legacy default
        stream, 2 the per-thread one, else a CUstream; amd: None or 0 the null stream, else
        a hipStream_t); -1 asks for no ordering (the consumer has seen to it). On the cpu
        device, whose memory is host memory, stream is None and the writes are waited for.
        The consumer's own writes must be finished before the array is used here again.
        copy=True is refused: the point of this call is not to copy. Closing the device
        frees its memory, exported or not. max_version (1, 0) or later gets DLPack 1.0's
        "dltensor_versioned" capsule, None the legacy "dltensor" one.
        """
        # With the extension, DeviceArray.__dlpack__ is its method (dlpack_method), which makes
        # the common call itself and hands every other one to this one.
        dev = self.device
        order, native_stream = _dlpack.order_for(dev.platform, stream)
        if copy is True:
            raise BufferError("__dlpack__: cubehip exports its memory without copying (copy=True refused)")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"__dlpack__: the array lives on DLPack device {self.__dlpack_device__()}, not {tuple(dl_device)}")
        return _dlpack.export(self, self._live(), order, native_stream, _dlpack.wants_versioned(max_version))

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """CUDA's array interface (version 3), on the nvidia platform only: CuPy, PyTorch and
        Numba read the memory in place. The array's queued writes are ordered before the
        device's export stream, on the device, and "stream" names that stream: a consumer
        makes its own stream wait on it (the interface's rule), so nothing waits on the
        host. The consumer keeps this array alive."""
        if self.device.platform != "nvidia":
            raise AttributeError(f"__cuda_array_interface__: the array lives on the {self.device.platform} device, not on nvidia")
        h = self._live()
        stream = _dlpack.export_stream(self.device)
        _dlpack.order_before(h, _dlpack.ORDER_STREAM, stream)
        return {
            "shape": self.shape,
            "typestr": _dlpack.typestr(self.dtype),
            "data": (self.data_ptr(), False),
            "version": 3,
            "strides": None,
            "stream": stream,
        }

    # The package's own __dlpack__, which the extension's method hands its uncommon calls to
    # (and whose name their errors keep).
    _dlpack_py = __dlpack__

    def _export_pending_gone(self, h: int) -> None:
        """The last exported tensor of this array's memory was let go after the array's
        release left its buffer h to it: h goes back now (to a device still open)."""
        if self.device._h:
            _release(h)

    # With the extension, __del__ is its method (array_del_method), the same steps in C.
    def __del__(self) -> None:
        # A closed device already took the buffer with it, and at interpreter exit the
        # module may be half torn down: neither is worth an exception nobody can catch.
        try:
            if self._base is None and self._h and self.device._h:
                h, self._h = self._h, 0
                # No export is live: each holds this array.
                if self._import:
                    _release(h)  # never kept: one call, no KeptBuffers in between
                else:
                    self.device._kept.give(h, self.stream, self.nbytes or 1)
        except Exception:
            pass

    _del_py = __del__


if _ffi.native is not None:
    DeviceArray.__dlpack__ = _ffi.native.dlpack_method(DeviceArray, DeviceArray._dlpack_py, _dlpack._refused, _dlpack.code_bits)
    DeviceArray.__dlpack_device__ = _ffi.native.dlpack_device_method(DeviceArray, DeviceArray._dlpack_device_py)
    DeviceArray.__del__ = _ffi.native.array_del_method(DeviceArray)
