"""The cache of host memory under the numpy arrays that large reads return.

``DeviceArray.get()`` with no ``out`` returns a new numpy array. Of many megabytes, a new
array is a fresh mapping whose pages the kernel zeroes at the read's first touch, which
costs a read of 256 MiB about a third of its speed (the extension's _hostpool.c says more).
So a large read's array lies on memory from a cache of the package's: when the array and
every view of it are gone, its memory goes back to the cache for the next read of the same
size, pages already in place. The cache holds at most ``CUBEHIP_HOST_CACHE_MB`` megabytes
(default 1024; 0 turns it off), the oldest blocks let go first; :func:`free_host_cache`
lets go of all of them. Without the package's extension a read makes a plain numpy array.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from . import _ffi

__all__ = ["free_host_cache", "host_cache_bytes", "set_host_cache_limit"]

ENV = "CUBEHIP_HOST_CACHE_MB"

# Below this a new array is mostly malloc's reused memory (glibc maps only blocks above its
# mapping threshold, which grows to 32 MiB as large blocks are freed), and the zeroing of
# a fresh one is small against the read's fixed costs.
MIN_BYTES = 4 << 20

_native = _ffi.native


def _limit_from_env() -> int:
    v = os.environ.get(ENV, "").strip()
    if not v:
        return 1024 << 20
    try:
        mb = int(v)
    except ValueError:
        mb = -1
    if mb < 0 or mb > 1 << 30:
        raise ValueError(f"{ENV}={v!r}: want whole megabytes from 0 (no cache) to {1 << 30}")
    return mb << 20


if _native is not None:
    _native.host_cache_limit(_limit_from_env())
    _host_memory = _native.host_memory
else:  # pragma: no cover - the ctypes path (CUBEHIP_PYTHON_NATIVE=0) has no cache
    _limit_from_env()  # a bad value is an error either way
    _host_memory = None


def new_array(shape: tuple[int, ...], dtype: np.dtype, nbytes: int) -> np.ndarray:
    """A new, writable, C-contiguous array for a read to fill: on cached memory when it is
    large (the read must then write every byte before anyone sees the array), else numpy's."""
    if nbytes < MIN_BYTES or _host_memory is None or dtype.fields is not None:
        return np.empty(shape, dtype)
    return np.asarray(_host_memory(shape, dtype.str, nbytes))


def free_host_cache() -> int:
    """Lets go of every block the cache holds (arrays still alive keep theirs); returns the
    bytes given back to the system."""
    return _native.host_cache_release() if _native is not None else 0


def host_cache_bytes() -> int:
    """The bytes of host memory the cache holds for the next large reads."""
    return _native.host_cache_bytes() if _native is not None else 0


def set_host_cache_limit(nbytes: Any) -> int:
    """Sets the most bytes the cache holds (0: none, as ``CUBEHIP_HOST_CACHE_MB=0``),
    letting go of the oldest blocks over it; returns the limit before."""
    if type(nbytes) is not int or nbytes < 0:
        raise ValueError(f"set_host_cache_limit: want a byte count, 0 or more, not {nbytes!r}")
    return _native.host_cache_limit(nbytes) if _native is not None else 0
