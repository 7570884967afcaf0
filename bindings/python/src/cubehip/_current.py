"""The current device (a ``with Device(...)`` block's on this thread, else the process's
default) and the devices open: below _device, so that the modules that need the current device
(_kernel, _cupy) or every open one (_trace) import it at the top, not _device inside a
function. Opening the default device is _device's: it sets _open_default when imported, which
the package's import does before any of this runs."""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from ._device import Device

# Device(): set by _device.
_open_default: "Callable[[], Device]"

_local = threading.local()
_default: "Device | None" = None
_default_lock = threading.Lock()


def get_device() -> "Device":
    """The current device: the innermost ``with Device(...)`` block's on this thread, else the
    process's default device (Device("auto", 0), opened on first use)."""
    stack = getattr(_local, "stack", None)
    if stack:
        return stack[-1]
    global _default
    with _default_lock:
        if _default is None or _default._h == 0:
            _default = _open_default()
        return _default


# Every Device opened, oldest first (weak: a device no one holds is closed when freed), for
# current_device: a kernel made without device= outside a ``with`` block goes to a device
# already open rather than opening the default one beside it.
_opened: list["weakref.ref[Device]"] = []
_opened_lock = threading.Lock()  # not _default_lock: get_device opens a Device holding that


def current_device() -> "Device":
    """The device a kernel made without device= starts on: the innermost ``with Device(...)``
    block's on this thread, else the process's default device if it is open, else the first
    device opened that is still open, else the default device (opened now)."""
    stack = getattr(_local, "stack", None)
    if stack:
        return stack[-1]
    d = _default
    if d is not None and d._h:
        return d
    with _opened_lock:
        _opened[:] = [r for r in _opened if (o := r()) is not None and o._h]
        first = _opened[0]() if _opened else None
    return first if first is not None else get_device()


def open_devices() -> list["Device"]:
    """Every Device opened and not yet closed (nor freed), oldest first."""
    with _opened_lock:
        return [o for r in _opened if (o := r()) is not None and o._h]


def opened(dev: "Device") -> None:
    """Counts dev among the open devices (Device.__init__, once it is open)."""
    with _opened_lock:
        _opened.append(weakref.ref(dev))
