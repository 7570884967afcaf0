"""Streams, graphs and profiles, with what the modules above them share about streams (an id
from a Stream, an int or None) and the library's strings: below _device, _array, _kernel and
_cupy, importing none of them, so that none of those imports another inside a function to
break a circle."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any

from . import _ffi
from ._errors import check, check_carried

if TYPE_CHECKING:
    from ._device import Device


def stream_id(stream: "Stream | int | None") -> int:
    """A stream given as a Stream, an id or None (the default stream, 0) as its id."""
    if stream is None:
        return 0
    if type(stream) is int:
        if stream < 0:
            raise ValueError(f"stream id {stream} is negative")
        return stream
    sid = getattr(stream, "id", None)
    if type(sid) is not int:
        raise TypeError(f"stream must be a cubehip.Stream or an int id, not {type(stream).__name__}")
    return sid


def _string(fn: Any, h: int, call: str) -> str:
    n = ctypes.c_size_t()
    check(fn(h, None, 0, ctypes.byref(n)), call)
    buf = ctypes.create_string_buffer(n.value + 1)
    check(fn(h, buf, len(buf), ctypes.byref(n)), call)
    return buf.value.decode(errors="replace")


class Stream:
    """One of a device's streams, by id: work queued on it runs in order."""

    __slots__ = ("device", "id")

    def __init__(self, device: Device, id: int = 0) -> None:
        if not isinstance(id, int) or isinstance(id, bool) or not 0 <= id < 2**64:
            raise ValueError(f"stream id must be an int in [0, 2**64), not {id!r}")
        self.device = device
        self.id = id

    def __repr__(self) -> str:
        return f"<cubehip.Stream {self.id} of {self.device!r}>"

    def sync(self) -> None:
        """Waits for the stream's work; raises CarriedFailure if work it ran failed."""
        self.device.sync(self.id)

    synchronize = sync

    def capture(self) -> "Graph":
        """``with s.capture() as g: ...`` records the stream's work inside the block into g
        instead of running it; ``g.replay()`` runs it again."""
        return Graph(self)

    def profile(self) -> "Profile":
        """``with s.profile() as p: ...`` times the stream's work inside the block: p.elapsed."""
        return Profile(self)


class Graph:
    """Work recorded from a stream, replayed as one unit (a CUDA or HIP graph on a GPU)."""

    def __init__(self, stream: Stream) -> None:
        self.stream = stream
        self._h = 0
        self._capturing = False
        self._used = False

    def __enter__(self) -> "Graph":
        if self._used:
            raise RuntimeError("a Graph records once; make another with stream.capture()")
        dev = self.stream.device
        check(_ffi.lib.cubehip_capture_begin(dev._live(), self.stream.id), "cubehip_capture_begin")
        self._used = self._capturing = True
        return self

    def __exit__(self, exc_type: Any, *exc: object) -> None:
        self._capturing = False
        dev = self.stream.device
        out = ctypes.c_uint64()
        status = _ffi.lib.cubehip_capture_end(dev._live(), self.stream.id, ctypes.byref(out))
        if exc_type is not None:
            # The block's own exception is the one worth seeing; the recording is dropped.
            if status == 0:
                _ffi.lib.cubehip_graph_destroy(out.value)
            return
        check(status, "cubehip_capture_end")
        self._h = out.value

    def replay(self) -> None:
        """Runs the recorded work again, on the stream it was recorded on."""
        if self._h == 0:
            raise ValueError("the graph was not recorded (or was destroyed)")
        st = _ffi.fast_graph_replay(self._h)
        if st:
            check(st, "cubehip_graph_replay")

    def destroy(self) -> None:
        h, self._h = self._h, 0
        if h and self.stream.device._h:
            check(_ffi.lib.cubehip_graph_destroy(h), "cubehip_graph_destroy")

    close = destroy

    def __del__(self) -> None:
        try:
            if self._h and self.stream.device._h:
                _ffi.lib.cubehip_graph_destroy(self._h)
                self._h = 0
        except Exception:
            pass


class Profile:
    """A window of a stream's work timed with device events; ``elapsed`` is in seconds."""

    def __init__(self, stream: Stream) -> None:
        self.stream = stream
        self._h = 0
        self.nanoseconds: int | None = None

    @property
    def elapsed(self) -> float:
        """The device time the window spans, in seconds."""
        if self.nanoseconds is None:
            raise ValueError("the profile has not ended")
        return self.nanoseconds / 1e9

    def __enter__(self) -> "Profile":
        if self._h or self.nanoseconds is not None:
            raise RuntimeError("a Profile times one window; make another with stream.profile()")
        out = ctypes.c_uint64()
        check(_ffi.lib.cubehip_profile_start(self.stream.device._live(), self.stream.id, ctypes.byref(out)), "cubehip_profile_start")
        self._h = out.value
        return self

    def __exit__(self, exc_type: Any, *exc: object) -> None:
        h, self._h = self._h, 0
        if exc_type is not None:
            _ffi.lib.cubehip_profile_abandon(h)
            return
        ns = ctypes.c_uint64()
        check_carried(_ffi.lib.cubehip_profile_stop(h, ctypes.byref(ns)), "cubehip_profile_stop")
        self.nanoseconds = ns.value
