"""cubehip's exceptions, and the status check every call into the library goes through."""

from __future__ import annotations

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
        where = f"{call}: " if call else ""
        super().__init__(f"{where}{self.name} ({status}): {message}")


class InvalidHandle(CubehipError):
    """An object was used after it was released, destroyed or closed with its device."""


class InvalidArgument(CubehipError, ValueError):
    """The library refused an argument (a wrong size, count or kind); nothing was done."""


class DeviceClosed(InvalidHandle):
    """The device was closed."""


class CompileError(CubehipError):
    """A kernel did not compile; ``log`` is the compiler's log."""

    def __init__(self, status: int, message: str, call: str = "", log: str = "") -> None:
        super().__init__(status, message, call)
        self.log = log

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


def error(status: int, call: str, carried: bool = False) -> CubehipError:
    """The exception for a failed call; carried says the call returns failures work left on buffers."""
    msg = last_error()
    if carried and status not in (
        _ffi.ERROR_INVALID_HANDLE,
        _ffi.ERROR_INVALID_ARGUMENT,
        _ffi.ERROR_CLOSED,
        _ffi.HIP_ERROR_INVALID_HANDLE,
    ):
        return CarriedFailure(status, msg, call)
    return _BY_STATUS.get(status, CubehipError)(status, msg, call)


def check(status: int, call: str) -> None:
    """Raises the exception for status unless it is success."""
    if status:
        raise error(status, call)


def check_carried(status: int, call: str) -> None:
    """As check, for calls (read, check, sync) that return a failure some earlier work left."""
    if status:
        raise error(status, call, carried=True)
