"""Devices, streams, graphs, profiles and memory."""

from __future__ import annotations

import ctypes
import json
import re
import weakref
import dataclasses
from dataclasses import dataclass
from typing import Any, NamedTuple, Sequence

import numpy as np

from . import _current, _errors, _ffi, _trace
from ._array import DeviceArray
from ._current import current_device, get_device, open_devices
from ._errors import DeviceClosed, check, check_carried
from ._kept import KeptBuffers
from ._kernel import Kernel
from ._stream import Graph, Profile, Stream, _string, stream_id

_sync = _ffi.fast_device_sync

_PLATFORMS = ("auto", "cpu", "nvidia", "amd")
_U8 = np.dtype(np.uint8)


def _platform(platform: str | None) -> bytes:
    p = "auto" if platform is None else platform
    if p not in _PLATFORMS:
        raise ValueError(f"platform must be one of {', '.join(_PLATFORMS)}, not {platform!r}")
    return p.encode()


@dataclass(frozen=True)
class DeviceProperties:
    """What a device is: its platform, name, architecture and limits."""

    index: int
    platform: str
    name: str
    arch: str
    total_mem: int
    shared_mem_per_block: int
    warp_size: int
    multiprocessor_count: int
    clock_rate_khz: int
    max_threads_per_block: int
    max_threads_dim: tuple[int, int, int]
    max_grid_size: tuple[int, int, int]
    compute_capability: tuple[int, int]
    pci_bus_id: int
    pci_device_id: int
    pci_domain_id: int
    integrated: bool
    # The dynamic shared memory a block may ask for: more than shared_mem_per_block on
    # NVIDIA GPUs (the library opts a kernel in when a launch asks for over 48 KiB).
    shared_mem_per_block_optin: int = 0
    # The other devices of the platform this one reaches directly (peer access): a
    # copy_from between them takes the peer path. Filled by devices().
    peers: tuple[int, ...] = ()

    @classmethod
    def _from(cls, index: int, p: _ffi.DeviceProps) -> "DeviceProperties":
        return cls(
            index=index,
            platform=p.platform.decode(),
            name=p.name.decode(errors="replace"),
            arch=p.arch.decode(),
            total_mem=p.total_mem,
            shared_mem_per_block=p.shared_mem_per_block,
            warp_size=p.warp_size,
            multiprocessor_count=p.multiprocessor_count,
            clock_rate_khz=p.clock_rate_khz,
            max_threads_per_block=p.max_threads_per_block,
            max_threads_dim=tuple(p.max_threads_dim),  # type: ignore[arg-type]
            max_grid_size=tuple(p.max_grid_size),  # type: ignore[arg-type]
            compute_capability=(p.major, p.minor),
            pci_bus_id=p.pci_bus_id,
            pci_device_id=p.pci_device_id,
            pci_domain_id=p.pci_domain_id,
            integrated=bool(p.integrated),
            shared_mem_per_block_optin=p.shared_mem_per_block_optin,
        )


def _props() -> _ffi.DeviceProps:
    p = _ffi.DeviceProps()
    p.size = ctypes.sizeof(p)
    return p


def device_count(platform: str = "auto") -> int:
    """How many devices the platform has (0 when its library is absent)."""
    n = ctypes.c_int32()
    check(_ffi.lib.cubehip_device_count(_platform(platform), ctypes.byref(n)), "cubehip_device_count")
    return n.value


def can_access_peer(index: int, peer: int, platform: str = "auto") -> bool:
    """Whether device index of the platform reaches device peer directly (never itself)."""
    ok = ctypes.c_int32()
    check(
        _ffi.lib.cubehip_device_can_access_peer(_platform(platform), index, peer, ctypes.byref(ok)),
        "cubehip_device_can_access_peer",
    )
    return bool(ok.value)


def devices(platform: str = "auto") -> list[DeviceProperties]:
    """The properties of every device of the platform, without opening them, each with
    the devices it reaches directly (``peers``)."""
    out = []
    n = device_count(platform)
    for i in range(n):
        p = _props()
        check(_ffi.lib.cubehip_device_properties(_platform(platform), i, ctypes.byref(p)), "cubehip_device_properties")
        peers = tuple(j for j in range(n) if j != i and can_access_peer(i, j, platform))
        out.append(dataclasses.replace(DeviceProperties._from(i, p), peers=peers))
    return out


class MemoryUsage(NamedTuple):
    """A device's memory usage over all its streams."""

    number_allocs: int
    bytes_in_use: int
    bytes_padding: int
    bytes_reserved: int


class Device:
    """An open device: Device(platform="auto", index=0).

    platform is "auto" (amd, else nvidia, else the cpu device; $CUBEHIP_PLATFORM overrides
    it), "cpu", "nvidia" or "amd". As a context manager the device is the current one inside
    the block (kernels made without a device use it) and is closed at its end.

    check runs every kernel the device compiles under the kernel checker: "memcheck",
    "initcheck", "synccheck", "racecheck" (a comma list or a list of them) or "all";
    $CUBEHIP_CHECK adds to it. On the cpu device only: elsewhere opening raises
    InvalidArgument, saying to run on the cpu device. A checked launch that did something
    wrong fails (CarriedFailure on the next read or sync of what it wrote), and the exception's
    ``reports`` list says what, where and by which thread (docs/checking.md).
    """

    def __init__(
        self,
        platform: str = "auto",
        index: int = 0,
        *,
        max_streams: int = 0,
        cache_dir: str | None = None,
        staging_chunk: int = 0,
        staging_depth: int = 0,
        direct_launch: bool = False,
        check: str | Sequence[str] | None = None,
    ) -> None:
        self._h = 0
        self._kept = KeptBuffers()  # released arrays' idle buffers, for reuse
        o = _ffi.DeviceOptions()
        o.size = ctypes.sizeof(o)
        o.max_streams = max_streams
        o.cache_dir = None if cache_dir is None else cache_dir.encode()
        o.staging_chunk = staging_chunk
        o.staging_depth = staging_depth
        o.direct_launch = 1 if direct_launch else 0
        if check is not None:
            if isinstance(check, str):
                names = check
            elif all(isinstance(c, str) for c in check):
                names = ",".join(check)
            else:
                raise TypeError(f"check must be a str or strings, not {check!r}")
            o.check = names.encode()
        out = ctypes.c_uint64()
        if not isinstance(index, int) or isinstance(index, bool):
            raise TypeError(f"index must be an int, not {type(index).__name__}")
        if not 0 <= index < 2**31:
            raise ValueError(f"device index {index} is out of range")
        # (check is the argument here: the status check is _errors.check.)
        _errors.check(_ffi.lib.cubehip_device_open(_platform(platform), index, ctypes.byref(o), ctypes.byref(out)), "cubehip_device_open")
        self._h = out.value
        self.index = index
        p = _props()
        _errors.check(_ffi.lib.cubehip_device_get_properties(self._h, ctypes.byref(p)), "cubehip_device_get_properties")
        self.properties = DeviceProperties._from(index, p)
        _current.opened(self)
        self.platform = self.properties.platform
        if _ffi.native is not None:
            self.sync = self._native_sync()

    def _native_sync(self) -> Any:
        """dev.sync as a built-in function of the extension (_launch.c's device_syncer): a
        call without arguments waits for the default stream in C, without a Python frame;
        a call with arguments goes to Device.sync. An instance attribute, so dev.sync finds
        it before the method; close() removes it. Weak references only: the device is
        freed as soon as it is unused."""
        ref = weakref.ref(self)

        def slow(*args: Any, **kwargs: Any) -> None:
            d = ref()
            if d is None:  # pragma: no cover - the device is alive while it is called
                raise DeviceClosed(_ffi.ERROR_CLOSED, "the device was freed", "Device")
            Device.sync(d, *args, **kwargs)

        def failed(st: int) -> None:
            d = ref()
            if d is None or d._h == 0:
                raise DeviceClosed(_ffi.ERROR_CLOSED, "the device was closed", "Device")
            check_carried(st, "cubehip_device_sync")

        return _ffi.native.device_syncer(self._h, slow, failed)

    def _live(self) -> int:
        if self._h == 0:
            raise DeviceClosed(_ffi.ERROR_CLOSED, "the device was closed", "Device")
        return self._h

    @property
    def handle(self) -> int:
        """The device's handle in libcubehip (0 once closed)."""
        return self._h

    @property
    def closed(self) -> bool:
        return self._h == 0

    def __repr__(self) -> str:
        state = "closed" if self._h == 0 else self.properties.name
        return f"<cubehip.Device {self.platform}:{self.index} {state}>"

    # --- lifetime ------------------------------------------------------------------------

    def close(self) -> None:
        """Waits for the device's work and closes it; every array, kernel and graph made on it
        becomes unusable (using one raises an exception). Closing twice is harmless."""
        h, self._h = self._h, 0
        self.__dict__.pop("sync", None)  # the built-in sync: Device.sync says the device is closed
        if h:
            self._kept.forget()  # the close frees them
            check(_ffi.lib.cubehip_device_close(h), "cubehip_device_close")

    def __enter__(self) -> "Device":
        stack = getattr(_current._local, "stack", None)
        if stack is None:
            stack = _current._local.stack = []
        stack.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        stack = _current._local.stack
        if stack and stack[-1] is self:
            stack.pop()
        self.close()

    def __del__(self) -> None:
        try:
            if self._h:
                _ffi.lib.cubehip_device_close(self._h)
                self._h = 0
        except Exception:
            pass

    # --- streams and synchronization -----------------------------------------------------

    def stream(self, id: int = 0) -> "Stream":
        """Stream id of the device (0 is the default; any id is spread over the device's streams)."""
        return Stream(self, id)

    def sync(self, stream: "Stream | int | None" = None) -> None:
        """Waits for the stream's work; raises CarriedFailure if work it ran failed."""
        h = self._h
        if stream is None and h:
            st = _sync(h, 0)  # the common call, without the general checks
        else:
            st = _sync(self._live(), stream_id(stream))
        if st:
            check_carried(st, "cubehip_device_sync")

    # --- traces --------------------------------------------------------------------------

    def start_trace(self) -> None:
        """Starts a trace of the device's launches, copies, replays and compiles; one at a time
        (one $CUBEHIP_TRACE opened included)."""
        _trace.start(self)

    def stop_trace(self, path: Any) -> None:
        """Ends the open trace and writes it to path (str or os.PathLike) as Chrome trace JSON.
        A path whose directory cannot take the file raises InvalidArgument and leaves the trace
        open."""
        _trace.stop(self, path)

    def flush_trace(self) -> None:
        """Writes $CUBEHIP_TRACE's trace now and goes on tracing (close() and interpreter exit
        write it anyway); does nothing without one."""
        _trace.flush(self)

    def trace(self, path: Any) -> "_trace.Trace":
        """``with dev.trace(path): ...`` traces the block into path."""
        return _trace.Trace(self, path)

    # --- arrays --------------------------------------------------------------------------

    def empty(self, shape: Any, dtype: Any = np.float64, stream: "Stream | int | None" = None) -> DeviceArray:
        """A device array of the shape and dtype (float64 by default, as numpy's and CuPy's
        empty), its contents undefined until written."""
        self._live()
        return DeviceArray(self, shape, dtype, stream)

    def alloc(self, nbytes: int, stream: "Stream | int | None" = None) -> DeviceArray:
        """nbytes of device memory, as a uint8 device array."""
        if type(nbytes) is not int and (not isinstance(nbytes, np.integer) or isinstance(nbytes, bool)):
            raise TypeError(f"nbytes must be an int, not {type(nbytes).__name__}")
        if self._h == 0:
            self._live()
        return DeviceArray(self, int(nbytes), _U8, stream)

    def array(self, a: Any, dtype: Any = None, stream: "Stream | int | None" = None) -> DeviceArray:
        """A device array holding a copy of a numpy array (or anything numpy.asarray takes)."""
        host = np.asarray(a, dtype=dtype)
        d = self.empty(host.shape, host.dtype, stream)
        try:
            d.set(host, stream)
        except BaseException:
            d.release()
            raise
        return d

    asarray = array

    def zeros(self, shape: Any, dtype: Any = np.float64, stream: "Stream | int | None" = None) -> DeviceArray:
        """A device array of the shape and dtype (float64 by default, as numpy's and CuPy's
        zeros), filled with zeros."""
        return self.array(np.zeros(normalize(shape), dtype), stream=stream)

    # --- kernels -------------------------------------------------------------------------

    def kernel(self, source: str, entry: str, **kw: Any) -> Any:
        """A kernel on this device: see cubehip.Kernel."""
        return Kernel(source, entry, device=self, **kw)

    # --- memory --------------------------------------------------------------------------

    def memory_usage(self) -> MemoryUsage:
        """The library's count of what the device's arrays use. Released arrays' buffers
        kept for reuse are given back first, so they are not counted."""
        self._kept.drain()
        u = _ffi.MemoryUsage()
        u.size = ctypes.sizeof(u)
        check(_ffi.lib.cubehip_memory_usage_get(self._live(), ctypes.byref(u)), "cubehip_memory_usage_get")
        return MemoryUsage(u.number_allocs, u.bytes_in_use, u.bytes_padding, u.bytes_reserved)

    def memory_report(self) -> list[dict[str, Any]]:
        """Every stream's memory pools, as the library reports them: a list of
        ``{"stream": id, "report": {"dynamic": [...], "persistent": {...}}}``, each pool with
        its ``spec``, ``usage`` (``number_allocs``, ``bytes_in_use``, ...), ``pages`` and
        ``largest_alloc``. The keys are snake_case, as MemoryUsage's fields are."""
        self._kept.drain()
        return _snake_keys(json.loads(_string(_ffi.lib.cubehip_memory_report, self._live(), "cubehip_memory_report")))

    def memory_cleanup(self) -> None:
        """Frees pool pages no array uses."""
        self._kept.drain()
        check(_ffi.lib.cubehip_memory_cleanup(self._live()), "cubehip_memory_cleanup")

    def set_allocation_mode(self, mode: str, stream: "Stream | int | None" = None) -> None:
        """"auto" (the pools decide) or "persistent" (allocations stay, for long-lived arrays)."""
        modes = {"auto": 0, "persistent": 1}
        if mode not in modes:
            raise ValueError(f"allocation mode must be 'auto' or 'persistent', not {mode!r}")
        self._kept.drain()  # a buffer kept from one mode would serve an array of the other
        check(
            _ffi.lib.cubehip_memory_set_allocation_mode(self._live(), stream_id(stream), modes[mode]),
            "cubehip_memory_set_allocation_mode",
        )


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def _snake_keys(v: Any) -> Any:
    """v with every dict key in snake_case: the library's JSON names fields as Go does
    ("BytesInUse"), Python code reads them as attributes are named ("bytes_in_use")."""
    if isinstance(v, dict):
        return {(_CAMEL.sub("_", k).lower() if isinstance(k, str) else k): _snake_keys(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_snake_keys(x) for x in v]
    return v


def normalize(shape: Any) -> Any:
    return (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)


_current._open_default = Device
