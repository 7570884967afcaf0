"""Traces: a Chrome trace (Perfetto and chrome://tracing open it) of a device's launches,
copies and replays, in device time on a row per stream, and of the kernels it compiled, on
a row of their own.

$CUBEHIP_TRACE traces a script unchanged: every device opened while it is set writes its
trace to that file when it is closed, and a device still open when the interpreter exits
(the default device of a CuPy-style script is never closed) writes it then, from the
atexit hook below.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import sys
from typing import TYPE_CHECKING, Any

from . import _ffi
from ._current import open_devices
from ._errors import check

if TYPE_CHECKING:
    from ._device import Device

_handle = ctypes.c_uint64
_lib = _ffi.lib
for _name, _args in (
    ("cubehip_trace_start", [_handle]),
    ("cubehip_trace_stop", [_handle, ctypes.c_char_p]),
    ("cubehip_trace_flush", [_handle]),
):
    _f = getattr(_lib, _name)
    _f.argtypes = _args
    _f.restype = ctypes.c_int32


def _path(path: Any) -> bytes:
    """path (str, bytes or os.PathLike) as the library takes it."""
    if isinstance(path, bool) or not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"a trace's path must be a str, bytes or os.PathLike, not {type(path).__name__}")
    p = os.fsencode(path)
    if not p:
        raise ValueError("a trace's path must not be empty")
    if b"\0" in p:
        raise ValueError(f"a trace's path must not contain a NUL byte: {path!r}")
    return p


def start(dev: "Device") -> None:
    check(_lib.cubehip_trace_start(dev._live()), "cubehip_trace_start")


def stop(dev: "Device", path: Any) -> None:
    p = _path(path)
    check(_lib.cubehip_trace_stop(dev._live(), p), "cubehip_trace_stop")


def flush(dev: "Device") -> None:
    check(_lib.cubehip_trace_flush(dev._live()), "cubehip_trace_flush")


class Trace:
    """``with dev.trace(path): ...`` traces the block and writes the trace to path at its
    end, also when the block raises (the trace of what failed is the one worth reading)."""

    def __init__(self, dev: "Device", path: Any) -> None:
        self.device = dev
        self.path = path
        _path(path)  # a bad path is refused before the block runs, not after it

    def __enter__(self) -> "Trace":
        start(self.device)
        return self

    def __exit__(self, *exc: object) -> None:
        stop(self.device, self.path)


def _flush_at_exit() -> None:
    """Writes $CUBEHIP_TRACE's trace of every device still open: the library cannot see the
    interpreter end, and a device never closed would otherwise leave no trace. A flush
    without the variable does nothing, so it runs for every open device."""
    for dev in open_devices():
        try:
            flush(dev)
        except Exception as e:  # at exit there is no caller to raise to: say it
            print(f"cubehip: writing the trace of {dev!r} to $CUBEHIP_TRACE: {e}", file=sys.stderr)


atexit.register(_flush_at_exit)
