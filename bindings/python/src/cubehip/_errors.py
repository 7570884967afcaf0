"""cubehip's exceptions, and the status check every call into the library goes through."""

from __future__ import annotations

import ctypes
from typing import Any

from . import _ffi


class CubehipError(RuntimeError):
    """A call into libcubehip failed.

    ``status`` is the library's status: one of HIP's statuses by its HIP number (2 is
    hipErrorOutOfMemory) or one of cubehip's own (10000 and up); ``name`` is its name and
    ``message`` the library's message for the failure.
    """

    def __init__(self, status: int, message: str, call: str = "") -> None:
        self.status = status
        self.name = status_name(status)
        self.message = message
        self.call = call
        #: The kernel checker's reports, when the failure is a checked launch's
        #: (``Device(check=...)``): one dict each, see :func:`check_reports`.
        self.reports: list[dict[str, Any]] = []
        #: How many reports the launch had in all (it keeps the first 16).
        self.reports_total = 0
        where = f"{call}: " if call else ""
        super().__init__(f"{where}{self.name} ({status}): {message}")


class InvalidHandle(CubehipError):
    """An object was used after it was released, destroyed or closed with its device."""


class InvalidArgument(CubehipError, ValueError):
    """The library refused an argument (a wrong size, count or kind); nothing was done."""


class DeviceClosed(InvalidHandle):
    """The device was closed."""


class CompileError(CubehipError):
    """A kernel did not compile; ``log`` is the compiler's log, ``source`` and ``options``
    what was compiled (where the raiser knew them).

    CuPy's ``cupy.cuda.compiler.CompileException`` is this class (``cubehip.CompileException``),
    with its ``get_message()`` and ``dump(f)``."""

    def __init__(self, status: int, message: str, call: str = "", log: str = "", source: str = "",
                 options: tuple[str, ...] = ()) -> None:
        super().__init__(status, message, call)
        self.log = log
        self.source = source
        self.options = tuple(options)

    def get_message(self) -> str:
        """The error with the compiler's log, as str(e) (CuPy's CompileException.get_message)."""
        return str(self)

    def dump(self, f: Any) -> None:
        """Writes the error, the options and the source with its line numbers (the numbers
        the log's messages use) to the text stream f, as CuPy's CompileException.dump does."""
        lines = self.source.split("\n") if self.source else []
        width = len(str(len(lines)))
        f.write(f"compilation error: {self}\n-----\n")
        f.write(f"Options: {' '.join(self.options)}\n")
        f.write("Source:\n")
        for i, line in enumerate(lines, 1):
            f.write(f"{i:0{width}d} {line.rstrip()}\n")
        f.write("-----\n")
        f.flush()

    def __str__(self) -> str:
        if not self.log:
            return super().__str__()
        # The library's message quotes the log (indented) after its first line: the log is
        # shown once, as the compiler wrote it, under that first line.
        head = self.message.split("\n", 1)[0]
        if self.call and head.startswith(self.call + ": "):
            head = head[len(self.call) + 2 :]
        where = f"{self.call}: " if self.call else ""
        return f"{where}{self.name} ({self.status}): {head}\n{self.log.rstrip()}"


class CarriedFailure(CubehipError):
    """Work that wrote a buffer failed, and a read, check or sync of it returns that failure.

    Launches, writes and replays do not return the failure of the work they queue: the
    buffers that work would have written carry it, and the data they hold was never written.
    """


def status_name(status: int) -> str:
    """The library's fixed name of a status ("hipErrorOutOfMemory", "CUBEHIP_ERROR_INVALID_HANDLE")."""
    return _ffi.lib.cubehip_status_string(status).decode()


def last_error() -> str:
    """The calling thread's message for its last failed call into the library."""
    return _ffi.lib.cubehip_last_error().decode(errors="replace")


_BY_STATUS: dict[int, type[CubehipError]] = {
    _ffi.ERROR_INVALID_HANDLE: InvalidHandle,
    _ffi.HIP_ERROR_INVALID_HANDLE: InvalidHandle,
    _ffi.ERROR_CLOSED: DeviceClosed,
    _ffi.ERROR_INVALID_ARGUMENT: InvalidArgument,
    _ffi.ERROR_COMPILE: CompileError,
}


def check_reports() -> tuple[list[dict[str, Any]], int]:
    """The kernel checker's reports the calling thread's last error carries, as dicts (keys:
    check, what, kernel, block, thread, address, size, write, param, param_index, offset,
    buffer_size, file, line, other_thread, other_line), and how many the launch had."""
    cap = 16
    arr = (_ffi.CheckReport * cap)()
    for r in arr:
        r.size = ctypes.sizeof(_ffi.CheckReport)
    n, total = ctypes.c_size_t(), ctypes.c_size_t()
    if _ffi.lib.cubehip_last_check_reports(arr, cap, ctypes.byref(n), ctypes.byref(total)):
        return [], 0
    out = []
    for r in arr[: n.value]:
        out.append({
            "check": r.check.decode(errors="replace"), "what": r.what.decode(errors="replace"),
            "kernel": r.kernel.decode(errors="replace"), "block": tuple(r.block), "thread": tuple(r.thread),
            "address": r.address, "size": r.access_size, "write": bool(r.write),
            "param": r.param.decode(errors="replace") or None, "param_index": r.param_index if r.param_index >= 0 else None,
            "offset": r.offset, "buffer_size": r.buffer_size, "file": r.file.decode(errors="replace") or None,
            "line": r.line or None, "other_thread": tuple(r.other_thread), "other_line": r.other_line or None,
        })  # fmt: skip
    return out, total.value


def error(status: int, call: str, carried: bool = False) -> CubehipError:
    """The exception for a failed call; carried says the call returns failures work left on buffers."""
    msg = last_error()
    if carried and status not in (
        _ffi.ERROR_INVALID_HANDLE,
        _ffi.ERROR_INVALID_ARGUMENT,
        _ffi.ERROR_CLOSED,
        _ffi.HIP_ERROR_INVALID_HANDLE,
    ):
        e: CubehipError = CarriedFailure(status, msg, call)
    else:
        e = _BY_STATUS.get(status, CubehipError)(status, msg, call)
    if status in (_HIP_ILLEGAL_ADDRESS, _HIP_LAUNCH_FAILURE):
        e.reports, e.reports_total = check_reports()
    return e


# The statuses a checked launch fails with (a bad access; a barrier or an uninitialized read).
_HIP_ILLEGAL_ADDRESS, _HIP_LAUNCH_FAILURE = 700, 719


def check(status: int, call: str) -> None:
    """Raises the exception for status unless it is success."""
    if status:
        raise error(status, call)


def check_carried(status: int, call: str) -> None:
    """As check, for calls (read, check, sync) that return a failure some earlier work left."""
    if status:
        raise error(status, call, carried=True)
