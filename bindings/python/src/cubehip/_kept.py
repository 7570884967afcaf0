"""Released arrays' buffers, kept for the next array of their size (KeptBuffers)."""

from __future__ import annotations

from . import _ffi
from ._errors import check

_recycle = _ffi.fast_buffer_recycle
_release = _ffi.fast_buffer_release


class KeptBuffers:
    """A device's buffers of released arrays, kept for the next array of the same size on
    the same stream, as CuPy's memory pool keeps its users' freed blocks: an array made
    from a kept buffer makes no call into the library (DeviceArray takes one from lists
    itself), and a release makes one call, as it would anyway.

    Only buffers the library finds idle are kept (cubehip_buffer_recycle): nothing refers
    to their memory (no queued work, no graph), they carry no failure, and a wait (a sync
    of their stream or the device) confirmed every write of them. Such a buffer is as good
    as a fresh allocation, its bytes undefined as a fresh one's are: no failure of its past
    can reach its next use. The library releases every other buffer at once, so a program
    that releases arrays with work in flight gets no reuse here, only the release.

    Kept buffers are allocated in the library: the Device gives them back (drain) before
    it reports memory usage, cleans up or changes the allocation mode, and when an
    allocation runs out of memory. About LIMIT bytes and PER_SIZE buffers of one size are
    kept at most; a buffer past either is released.

    No lock: lists' lists are taken from and added to with list.pop and list.append, each
    atomic, so two threads never get one buffer. nbytes is a count two threads may update
    at once and lose one update of: the limit is approximate, and drain counts it afresh.
    A lock would cost more than the allocation it saves, and a finalizer (__del__) that
    the collector runs while this thread held it would wait forever.
    """

    LIMIT = 256 << 20
    PER_SIZE = 16

    __slots__ = ("lists", "nbytes")

    def __init__(self) -> None:
        self.lists: dict[tuple[int, int], list[int]] = {}  # (stream, bytes) -> handles
        self.nbytes = 0

    def give(self, h: int, stream: int, nbytes: int) -> None:
        """Keeps buffer h (nbytes, allocated on stream) if the library finds it idle and the
        limits allow; else it is released."""
        if self.nbytes + nbytes <= self.LIMIT:
            r = _recycle(h)
            if r == 0:
                return  # not idle: the library released it
            if r < 0:
                check(-r, "cubehip_buffer_recycle")
            key = (stream, nbytes)
            lst = self.lists.get(key)
            if lst is None:
                lst = self.lists.setdefault(key, [])
            if len(lst) < self.PER_SIZE:
                lst.append(h)
                self.nbytes += nbytes
                return
        st = _release(h)
        if st:
            check(st, "cubehip_buffer_release")

    def drain(self) -> int:
        """Releases every kept buffer; returns how many there were."""
        n = 0
        for key, lst in list(self.lists.items()):
            while True:
                try:
                    h = lst.pop()
                except IndexError:
                    break
                _release(h)
                n += 1
        # A buffer another thread kept meanwhile stays kept, and counted.
        self.nbytes = sum(key[1] * len(lst) for key, lst in list(self.lists.items()))
        return n

    def forget(self) -> None:
        """Drops every kept buffer without a call: for a device that is closing, which
        frees them all."""
        self.lists = {}
        self.nbytes = 0
