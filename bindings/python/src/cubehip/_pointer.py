"""Raw device pointers as kernel arguments: CuPy's MemoryPointer, integer addresses and
objects that hold one, each traced back to the live array it points into, or refused.

A launch records which arrays it writes, so that a failure is carried by them; a raw
address carries nothing of that by itself, so it is taken only inside memory the device
can name: a live array of the kernel's device (the address's array then takes the
launch's writes as an argument of its own would), or, on nvidia, an object with
``__cuda_array_interface__``, imported for the launch (``cubehip.asarray``). Anything else
(an address of a released array, whose memory may already be another's; of another
device; of memory cubehip neither allocated nor imported) raises, naming the address.
"""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _ffi

if TYPE_CHECKING:
    from ._array import DeviceArray
    from ._device import Device


class MemoryPointer:
    """A device address inside an array, as CuPy's ``cupy.cuda.MemoryPointer``:
    ``a.data`` is one at the array's first byte, ``a.data + n`` one ``n`` bytes further.
    ``ptr`` (and ``int(p)``) is the address. Passed to a kernel, it is the array's memory
    from that byte, and the launch's writes are the array's. It keeps the array alive."""

    __slots__ = ("array", "offset")

    def __init__(self, array: "DeviceArray", offset: int = 0) -> None:
        self.array = array
        self.offset = int(offset)

    @property
    def ptr(self) -> int:
        """The address: the array's (:meth:`DeviceArray.data_ptr`) plus the offset."""
        return self.array.data_ptr() + self.offset

    @property
    def device_id(self) -> int:
        return self.array.device.index

    def __int__(self) -> int:
        return self.ptr

    def __add__(self, n: Any) -> "MemoryPointer":
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            return NotImplemented
        return MemoryPointer(self.array, self.offset + int(n))

    __radd__ = __add__

    def __sub__(self, n: Any) -> "MemoryPointer":
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            return NotImplemented
        return MemoryPointer(self.array, self.offset - int(n))

    def __repr__(self) -> str:
        return f"<cubehip.MemoryPointer {self.offset} bytes into {self.array!r}>"


def buffer_at(dev: "Device", ptr: int) -> tuple[int, int] | None:
    """The live buffer of dev holding address ptr and ptr's byte in it, or None."""
    h, off = ctypes.c_uint64(), ctypes.c_uint64()
    if _ffi.lib.cubehip_buffer_at(dev._h, ptr, ctypes.byref(h), ctypes.byref(off)):
        return None
    return h.value, off.value


def resolve(dev: "Device", v: Any, temps: list[Any]) -> tuple[int, int] | tuple[str, str] | None:
    """v, a raw pointer argument for a kernel of dev, as (buffer handle, byte offset); when v
    is a pointer the device cannot name, (what was given, why it is refused), for the
    caller's ValueError; None when v is no pointer at all (the caller's TypeError). An array
    imported for the launch is appended to temps, for the caller to release after it."""
    from ._array import DeviceArray
    from ._import import asarray

    if isinstance(v, MemoryPointer):
        a = v.array
        h = a._live()
        if not 0 <= v.offset < max(a.nbytes, 1):
            return f"a MemoryPointer {v.offset} bytes into an array of {a.nbytes} bytes", "that is outside it"
        return h, v.offset
    if hasattr(v, "__cuda_array_interface__") and not isinstance(v, DeviceArray):
        if dev.platform != "nvidia":
            return (f"a {type(v).__name__} with __cuda_array_interface__",
                    f"that is CUDA memory, and the kernel runs on the {dev.platform} device")
        imported = asarray(v, device=dev)
        temps.append(imported)
        return imported._live(), 0
    if isinstance(v, (bool, np.bool_)):
        return None
    if isinstance(v, (int, np.integer)):
        ptr = int(v)
    else:
        ptr = getattr(v, "ptr", None)
        if ptr is None:
            ptr = getattr(getattr(v, "data", None), "ptr", None)
        if isinstance(ptr, bool) or not isinstance(ptr, (int, np.integer)):
            return None
        ptr = int(ptr)
    if not 0 < ptr < 2**64:
        return (f"address {ptr:#x}" if ptr >= 0 else f"address {ptr}"), "that is no device address"
    found = buffer_at(dev, ptr)
    if found is None:
        return (f"address {ptr:#x}", f"it lies in no live array of {dev!r} (a released array's memory, another "
                "device's, or memory cubehip neither allocated nor imported: pass another library's array itself, "
                "or cubehip.asarray(x))")
    return found
